"""The machine's counters, frozen, for bwrap's /proc.

Some files of /proc count for the whole machine what any program can move: negative dentries
(`/proc/sys/fs/dentry-state`, moved by looking up names that do not exist), inodes, open files, memory and
slab use, pages and I/O (`/proc/meminfo`, `/proc/vmstat`, `/proc/stat`), the load, ptys and AIO contexts in
use (`/proc/sys/kernel/pty/nr`, `/proc/sys/fs/aio-nr`). bwrap's own /proc shows them as they are, so one program
could move a count and a later or concurrent one (of the same episode, after an eval's scored run; or of
another episode) read it: a message. Under bwrap what is shown is what is known to be still:
- the counters above and what describes the machine (`cpuinfo`, `version`, ...) are copies taken when the
  confinement started its first program, the same for every program it starts;
- `/proc/sys` is a folder of copies of the settings programs read (SYSCTLS: limits, the kernel's release, the
  frozen counters), nothing else;
- every other file of /proc's top level that is the machine's rather than a process's (`timer_list`, whose
  timer ranges show another program's timer slack; `locks`, `keys`, `cgroups`, and whatever a newer kernel
  adds) is an empty file, and every such folder (`irq`, `driver`, `tty`, ...) an empty folder.
The processes' own folders, `self`, the folders of the sandbox's own namespaces (`net`, `sysvipc`) and `uptime`
stay; `pressure` holds only frozen copies. The whole of /proc is read-only (see mounts.py), so no program writes
its own memory through `/proc/self/mem`. (`/sys` has counters too: programs see only its CPU folders.)
"""

from __future__ import annotations

import os
from pathlib import Path

from .reaper import owned_temp_dir, remove_owned_dir

PREFIX = "minidebug-proc-"
COUNTERS = ("meminfo", "stat", "vmstat", "loadavg", "zoneinfo", "buddyinfo", "pagetypeinfo", "diskstats",
            "interrupts", "softirqs", "schedstat", "slabinfo", "swaps",
            "pressure/cpu", "pressure/io", "pressure/memory", "pressure/irq")
DESCRIPTIONS = ("cpuinfo", "version", "filesystems", "cmdline", "crypto", "devices", "partitions", "misc",
                "execdomains", "consoles")  # what describes the machine: copied too, as programs read them
SYSCTLS = ("kernel/osrelease", "kernel/ostype", "kernel/version", "kernel/hostname", "kernel/domainname",
           "kernel/pid_max", "kernel/threads-max", "kernel/ngroups_max", "kernel/cap_last_cap", "kernel/sem",
           "kernel/shmmax", "kernel/shmall", "kernel/shmmni", "kernel/msgmax", "kernel/msgmnb", "kernel/msgmni",
           "kernel/overflowuid", "kernel/overflowgid", "kernel/random/boot_id", "kernel/random/uuid",
           "kernel/random/entropy_avail", "kernel/random/poolsize", "kernel/yama/ptrace_scope",
           "kernel/perf_event_paranoid", "kernel/unprivileged_userns_clone", "vm/overcommit_memory",
           "vm/overcommit_ratio", "vm/max_map_count", "vm/mmap_min_addr", "fs/file-max", "fs/nr_open",
           "fs/pipe-max-size", "fs/inotify/max_user_watches", "fs/inotify/max_user_instances",
           "fs/inotify/max_queued_events", "fs/dentry-state", "fs/inode-state", "fs/inode-nr", "fs/file-nr",
           "fs/protected_symlinks", "fs/protected_hardlinks", "net/core/somaxconn")
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


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as source:
            return source.read(1 << 20)
    except OSError:
        return None


class FrozenCounters:
    """Copies of the counter files in /proc, in a new temp folder (with the owner file `minidebug gc` looks
    for); a file that cannot be read is left out."""

    def __init__(self):
        self.dir = owned_temp_dir(PREFIX)
        self._binds: list[str] = []
        try:
            for index, name in enumerate(COUNTERS + DESCRIPTIONS):
                data = _read(f"/proc/{name}")
                if data is not None:
                    self._binds += ["--ro-bind", str(self._copy(f"{index}", data)), f"/proc/{name}"]
            sysctls = self.dir / "sys"
            for name in SYSCTLS:
                data = _read(f"/proc/sys/{name}")
                if data is not None:
                    (sysctls / name).parent.mkdir(parents=True, exist_ok=True)
                    self._copy(f"sys/{name}", data)
            sysctls.mkdir(exist_ok=True)
            self._binds += ["--ro-bind", str(sysctls), "/proc/sys"]
            empty_file, empty_folder = self._copy("empty", b""), self.dir / "empty.d"
            empty_folder.mkdir()
            files, folders = machine_entries()
            for name in files:
                self._binds += ["--ro-bind", str(empty_file), f"/proc/{name}"]
            for name in folders:
                self._binds += ["--ro-bind", str(empty_folder), f"/proc/{name}"]
        except BaseException:
            self.close()
            raise

    def _copy(self, rel: str, data: bytes) -> Path:
        copy = self.dir / rel
        copy.write_bytes(data)
        copy.chmod(0o444)
        return copy

    def bwrap_args(self) -> list[str]:
        """bwrap's arguments that bind the copies over the sandbox's /proc (after its /proc is mounted)."""
        return list(self._binds)

    def close(self) -> None:
        """Remove the folder (the owner file last; programs only ever saw it read-only). Idempotent."""
        remove_owned_dir(self.dir)
