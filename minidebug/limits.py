"""Resource limits for everything the agent's code runs: rlimits, a pids cgroup, and death with the host.

Applied in the child between fork and exec (`preexec`). CPU seconds, memory (address space) and file
size are rlimits. The process count is an rlimit too, but Linux does not enforce RLIMIT_NPROC for root,
so where a pids cgroup can be made (cgroup v1 `pids` controller, or cgroup v2 with `pids` enabled), each
episode also gets one, which also lets close() kill every process the episode ever started.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time
import uuid
from pathlib import Path

from . import process
from .process import Completed

PR_SET_PDEATHSIG = 1
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
CGROUP_PREFIX = "minidebug-"
MB = 1024 * 1024


class Confinement:
    """The limits of one episode, applied to every process it starts; `close()` kills what is left.

    Args:
        memory_mb, cpu_seconds, file_size_mb, processes: the limits (see `Limits`).
        sandbox_prefix: a command prefix (bwrap ...) to run every program inside, or None.
    """

    def __init__(self, memory_mb: int, cpu_seconds: int, file_size_mb: int, processes: int,
                 sandbox_prefix: list[str] | None = None):
        self.memory_mb, self.cpu_seconds = memory_mb, cpu_seconds
        self.file_size_mb, self.processes = file_size_mb, processes
        self.sandbox_prefix = list(sandbox_prefix or [])
        self.cgroup = PidsCgroup(processes)

    def command(self, argv: list[str]) -> list[str]:
        """argv, inside the sandbox when there is one."""
        return self.sandbox_prefix + list(argv)

    def preexec(self):
        """A function to run in the child before exec: limits, cgroup, and SIGKILL when the parent dies."""
        cgroup = self.cgroup.path
        memory, cpu, fsize, nproc = self.memory_mb * MB, self.cpu_seconds, self.file_size_mb * MB, self.processes

        def apply() -> None:
            if cgroup is not None:
                try:
                    (cgroup / "cgroup.procs").write_text("0")
                except OSError:
                    pass
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU first, SIGKILL a second later
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            try:
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            except (OSError, AttributeError):
                pass

        return apply

    def run(self, argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[Completed, str]:
        """Run argv confined (sandbox, limits); returns the result and its output with any limit named."""
        completed = process.run(self.command(argv), cwd=cwd, env=env, timeout=timeout, preexec=self.preexec())
        return completed, "\n".join(filter(None, [completed.describe(timeout), self.note(completed)]))

    def note(self, completed: Completed) -> str:
        """A line naming the resource limit a run ran into, or ''."""
        code, output = completed.returncode, completed.output
        if code == -signal.SIGXCPU:
            return f"[stopped: CPU time limit of {self.cpu_seconds} s reached]"
        if code == -signal.SIGXFSZ or "File too large" in output:
            return f"[stopped: file size limit of {self.file_size_mb} MB reached]"
        if "MemoryError" in output or "Cannot allocate memory" in output:
            return f"[memory limit of {self.memory_mb} MB reached]"
        if "Resource temporarily unavailable" in output or "fork: retry" in output:
            return f"[process limit of {self.processes} reached]"
        return ""

    def close(self) -> None:
        self.cgroup.close()


class PidsCgroup:
    """A pids cgroup for one episode, when the machine lets us make one; else `path` is None."""

    def __init__(self, processes: int):
        self.path: Path | None = None
        name = f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"  # the owner's pid, for `minidebug gc`
        for root in CGROUP_ROOTS:
            if not (root / "cgroup.procs").exists():
                continue
            if root == Path("/sys/fs/cgroup") and "pids" not in _read(root / "cgroup.subtree_control").split():
                continue  # cgroup v2 without the pids controller delegated here
            try:
                (root / name).mkdir()
                (root / name / "pids.max").write_text(str(processes))
            except OSError:
                _rmdir(root / name)
                continue
            self.path = root / name
            return

    @classmethod
    def existing(cls, path: Path) -> PidsCgroup:
        """A handle on a cgroup made earlier (by `minidebug gc`, to clean it up)."""
        group = cls.__new__(cls)
        group.path = path
        return group

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroup (they may have left their process group)."""
        if self.path is None:
            return
        for _ in range(50):
            pids = [int(p) for p in _read(self.path / "cgroup.procs").split()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        self.kill_all()
        if self.path is not None:
            deadline = time.monotonic() + 2.0  # killed processes leave the cgroup once they are reaped
            while not _rmdir(self.path) and time.monotonic() < deadline:
                time.sleep(0.01)
            self.path = None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
