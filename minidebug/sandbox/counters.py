"""The machine's counters, frozen, for bwrap's /proc.

Some files of /proc count for the whole machine what any program can move: negative dentries
(`/proc/sys/fs/dentry-state`, moved by looking up names that do not exist), inodes, open files, memory and
slab use, pages and I/O (`/proc/meminfo`, `/proc/vmstat`, `/proc/stat`), the load. bwrap's own /proc shows
them as they are, so one program could move a count and a later one (of the same episode, after an eval's
scored run; or of another episode) read it: a message. Under bwrap each of them is a copy taken when the
confinement started its first program, the same for every program it starts, bound read-only over the
sandbox's /proc. (`/sys` has such counters too: programs see only its CPU folders, see mounts.py.)
"""

from __future__ import annotations

import os

from .reaper import OWNER_FILE, owned_temp_dir, shielded

PREFIX = "minidebug-proc-"
COUNTERS = ("meminfo", "stat", "vmstat", "loadavg", "zoneinfo", "buddyinfo", "pagetypeinfo", "diskstats",
            "interrupts", "softirqs", "schedstat", "slabinfo", "swaps", "sys/fs/dentry-state",
            "sys/fs/inode-state", "sys/fs/inode-nr", "sys/fs/file-nr", "sys/kernel/random/entropy_avail",
            "pressure/cpu", "pressure/io", "pressure/memory", "pressure/irq")


class FrozenCounters:
    """Copies of the counter files in /proc, in a new temp folder (with the owner file `minidebug gc` looks
    for); a file that cannot be read is left out."""

    def __init__(self):
        self.dir = owned_temp_dir(PREFIX)
        self._binds: list[str] = []
        try:
            for index, name in enumerate(COUNTERS):
                try:
                    with open(f"/proc/{name}", "rb") as source:
                        data = source.read(1 << 20)
                except OSError:
                    continue
                copy = self.dir / f"{index}"
                copy.write_bytes(data)
                copy.chmod(0o444)
                self._binds += ["--ro-bind", str(copy), f"/proc/{name}"]
        except BaseException:
            self.close()
            raise

    def bwrap_args(self) -> list[str]:
        """bwrap's arguments that bind the copies over the sandbox's /proc (after its /proc is mounted)."""
        return list(self._binds)

    def close(self) -> None:
        """Remove the folder (the owner file last). Idempotent."""
        with shielded():
            for entry in sorted(os.listdir(self.dir) if self.dir.is_dir() else [], key=lambda name: name == OWNER_FILE):
                os.unlink(self.dir / entry)
            if self.dir.is_dir():
                os.rmdir(self.dir)
