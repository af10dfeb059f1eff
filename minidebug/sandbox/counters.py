"""The machine's counters, frozen, for bwrap's /proc.

Some files of /proc count for the whole machine what any program can move: negative dentries
(`/proc/sys/fs/dentry-state`, moved by looking up names that do not exist), inodes, open files, memory and
slab use, pages and I/O (`/proc/meminfo`, `/proc/vmstat`, `/proc/stat`), the load. bwrap's own /proc shows
them as they are, so one program could move a count and a later one (of the same episode, after an eval's
scored run; or of another episode) read it: a message. Under bwrap each of them is a copy taken when the
confinement started its first program, the same for every program it starts, bound read-only over the
sandbox's /proc. So is what describes the machine (`cpuinfo`, `version`, ...). Every other file of /proc's top
level that is the machine's rather than a process's (`timer_list`, whose timer ranges show another program's
timer slack; `locks`, `keys`, `cgroups`, and whatever a newer kernel adds) is an empty file there, and every
such folder (`irq`, `driver`, `tty`, ...) an empty folder: what is not known to be still is not shown at all.
The processes' own folders, `self`, and the folders of the sandbox's own namespaces (`net`, `sysvipc`) stay;
`sys` is bound read-only with its counters frozen, and `pressure` holds only frozen copies. (`/sys` has such
counters too: programs see only its CPU folders, see mounts.py.)
"""

from __future__ import annotations

import os

from .reaper import OWNER_FILE, owned_temp_dir, shielded

PREFIX = "minidebug-proc-"
COUNTERS = ("meminfo", "stat", "vmstat", "loadavg", "zoneinfo", "buddyinfo", "pagetypeinfo", "diskstats",
            "interrupts", "softirqs", "schedstat", "slabinfo", "swaps", "sys/fs/dentry-state",
            "sys/fs/inode-state", "sys/fs/inode-nr", "sys/fs/file-nr", "sys/kernel/random/entropy_avail",
            "pressure/cpu", "pressure/io", "pressure/memory", "pressure/irq")
DESCRIPTIONS = ("cpuinfo", "version", "filesystems", "cmdline", "crypto", "devices", "partitions", "misc",
                "execdomains", "consoles")  # what describes the machine: copied too, as programs read them
KEPT = ("self", "thread-self", "net", "mounts", "sys", "sysvipc", "pressure", "uptime")  # see the docstring


def machine_entries(proc: str = "/proc") -> tuple[list[str], list[str]]:
    """(files, folders) of `proc`'s top level that are the machine's and neither copied nor kept."""
    files, folders = [], []
    for entry in sorted(os.listdir(proc)):
        path = os.path.join(proc, entry)
        if entry.isdigit() or entry in KEPT or entry in COUNTERS or entry in DESCRIPTIONS or os.path.islink(path):
            continue
        if os.path.isdir(path):
            folders.append(entry)
        elif os.path.isfile(path):
            files.append(entry)
    return files, folders


class FrozenCounters:
    """Copies of the counter files in /proc, in a new temp folder (with the owner file `minidebug gc` looks
    for); a file that cannot be read is left out."""

    def __init__(self):
        self.dir = owned_temp_dir(PREFIX)
        self._binds: list[str] = []
        try:
            for index, name in enumerate(COUNTERS + DESCRIPTIONS):
                try:
                    with open(f"/proc/{name}", "rb") as source:
                        data = source.read(1 << 20)
                except OSError:
                    continue
                copy = self.dir / f"{index}"
                copy.write_bytes(data)
                copy.chmod(0o444)
                self._binds += ["--ro-bind", str(copy), f"/proc/{name}"]
            empty_file, empty_folder = self.dir / "empty", self.dir / "empty.d"
            empty_file.write_bytes(b"")
            empty_file.chmod(0o444)
            empty_folder.mkdir()
            empty_folder.chmod(0o555)
            files, folders = machine_entries()
            for name in files:
                self._binds += ["--ro-bind", str(empty_file), f"/proc/{name}"]
            for name in folders:
                self._binds += ["--ro-bind", str(empty_folder), f"/proc/{name}"]
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
                (os.rmdir if (self.dir / entry).is_dir() else os.unlink)(self.dir / entry)  # the empty folder
            if self.dir.is_dir():
                os.rmdir(self.dir)
