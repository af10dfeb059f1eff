"""Finding and killing processes: the one /proc scanner and the one kill loop; the temp folders minidebug makes,
each named with its maker so that `minidebug gc` can tell what a dead process left.

Everything that looks for processes (the episode's strays, what a crashed run left, the leak checks) reads
/proc through `processes()`, and everything that kills a set of processes goes through `send()`. A stop signal
that unwinds the main thread (a batch worker's SIGTERM) goes through `interrupt()`, and waits while a `shielded()`
block (making an owned folder, removing a tree) runs: cut short, either would leave a folder nobody can name.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcStat:
    """The fields of /proc/<pid>/stat that minidebug reads."""

    pid: int
    comm: str
    state: str
    ppid: int
    pgid: int
    start_time: str

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def proc_stat(pid: int | str = "self") -> ProcStat | None:
    """A process's /proc/<pid>/stat (None if it is gone or /proc is missing)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        return ProcStat(int(text.split(" ", 1)[0]), comm, fields[0], int(fields[1]), int(fields[2]), fields[19])
    except (OSError, ValueError, IndexError):
        return None


def processes() -> list[ProcStat]:
    """Every live process visible in /proc (zombies left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(entry)
            if stat is not None and stat.alive:
                found.append(stat)
    return found


OWNER_FILE = "owner"  # in each temp folder minidebug makes: "<pid> <start time>" of its maker, for `minidebug gc`


def tree_memory_kb(pid: int) -> int:
    """The proportional set size (shared pages split among their users) of process `pid` and its
    descendants, in kB; 0 for a process that is gone or unreadable."""
    children: dict[int, list[int]] = {}
    for stat in processes():
        children.setdefault(stat.ppid, []).append(stat.pid)
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            with open(f"/proc/{current}/smaps_rollup") as handle:
                total += sum(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
        except (OSError, ValueError, IndexError):
            pass
    return total


def write_owner(folder: Path) -> None:
    """Name this process as `folder`'s maker (see OWNER_FILE)."""
    (folder / OWNER_FILE).write_text(f"{os.getpid()} {start_time()}")


def owned_temp_dir(prefix: str, parent: Path | None = None) -> Path:
    """A new temp folder (resolved) with its owner file, both made before a stop signal can unwind us."""
    with shielded():
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent)).resolve()
        try:
            write_owner(folder)
        except BaseException:
            os.rmdir(folder)
            raise
    return folder


def remove_owned_dir(folder: Path) -> None:
    """Remove a folder `owned_temp_dir` made that programs only ever saw read-only (device nodes, frozen /proc
    files), its owner file last, whatever a stop signal does meanwhile. Idempotent."""
    with shielded():
        for parent, _, files in os.walk(folder, topdown=False):
            for name in files:
                if not (parent == str(folder) and name == OWNER_FILE):
                    os.unlink(os.path.join(parent, name))
            if parent != str(folder):
                os.rmdir(parent)
        if os.path.isdir(folder):
            (folder / OWNER_FILE).unlink(missing_ok=True)
            os.rmdir(folder)


_SHIELDED: list[int] = []  # shielded blocks the main thread is in
_DEFERRED: list[int] = []  # a stop that came meanwhile


@contextmanager
def shielded() -> Iterator[None]:
    """Within the block (in the main thread), `interrupt()` waits: its KeyboardInterrupt is raised as the
    outermost shielded block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _SHIELDED.append(1)
    try:
        yield
    finally:
        _SHIELDED.pop()
        if not _SHIELDED and _DEFERRED:
            _DEFERRED.clear()
            raise KeyboardInterrupt


def interrupt() -> None:
    """Unwind the main thread (from a signal handler): KeyboardInterrupt now, or when the shielded block it
    is in ends."""
    if _SHIELDED:
        _DEFERRED.append(1)
        return
    raise KeyboardInterrupt


def start_time(pid: int | str = "self") -> str | None:
    """A live process's start time from /proc (None if it is gone, a zombie, or /proc is missing)."""
    stat = proc_stat(pid)
    return stat.start_time if stat is not None and stat.alive else None


def working_in(pid: int, folders: Iterable[Path]) -> bool:
    """True if the process's working directory lies in one of `folders` (False if it cannot be read)."""
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return False
    return any(cwd == folder or folder in cwd.parents for folder in folders)


def carries(pid: int, variable: bytes) -> bool:
    """True if the process's environment holds `variable` (a `NAME=value` entry) (False if unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return variable in handle.read().split(b"\0")
    except OSError:
        return False


def send(pids: Iterable[int], signum: int = signal.SIGKILL) -> int:
    """Send signum to each process that is still there (never to this one); returns how many got it."""
    me, sent = os.getpid(), 0
    for pid in pids:
        if pid == me:
            continue
        try:
            os.kill(pid, signum)
            sent += 1
        except (ProcessLookupError, PermissionError):
            pass
    return sent


def signal_when_parent_dies(signum: int, parent: int) -> None:
    """Ask the kernel to send this process `signum` when its parent (`parent`, the process that started it)
    dies, and send it now if that has happened already; a no-op where Linux's prctl is not there."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signum, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)
