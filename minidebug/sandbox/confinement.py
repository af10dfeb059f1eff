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
import secrets
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from . import process, reaper, seccomp
from .counters import FrozenCounters
from .devices import PrivateDevices
from .process import Completed

if TYPE_CHECKING:
    from .landlock import Ruleset

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
STRAY_VARIABLE = "MINIDEBUG_EPISODE"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
CGROUP_PREFIX = "minidebug-"
MB = 1024 * 1024


def _capability_count() -> int:
    """How many capabilities this kernel knows (its last one's number plus one)."""
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1
    except (OSError, ValueError):
        return 64


@dataclass(frozen=True)
class Launch:
    """A confined program, ready to start (see `Confinement.prepare`)."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None]
    pass_fds: tuple[int, ...]


class Confinement:
    """The limits of one episode, applied to every process it starts; `close()` kills what is left.

    Args:
        memory_mb, cpu_seconds, file_size_mb, processes: the limits (see `Limits`).
        sandbox: "bwrap" (every program inside bubblewrap), "landlock" (a Landlock ruleset applied before
            exec) or None.
        venv: the task's venv (read-only inside the sandbox).
        readable: further folders programs may read (minidebug's driver scripts).
    """

    def __init__(self, memory_mb: int, cpu_seconds: int, file_size_mb: int, processes: int,
                 sandbox: str | None = None, venv: Path | None = None, readable: tuple[Path, ...] = ()):
        self.memory_mb, self.cpu_seconds = memory_mb, cpu_seconds
        self.file_size_mb, self.processes = file_size_mb, processes
        self.sandbox, self.venv, self.readable = sandbox, venv, list(readable)
        self.cgroup = PidsCgroup(processes)
        self._rulesets: dict[tuple[Path, ...], tuple[tuple[int, ...], Ruleset]] = {}
        self.token = secrets.token_hex(8)  # in every program's environment, to find the ones that left the group
        self._devices: PrivateDevices | Literal[False] | None = None  # made at the first bwrap program run by root
        self._counters: FrozenCounters | None = None  # made at the first bwrap program
        self._filter = None
        if seccomp.available():  # without a PID namespace (bwrap's) the group must hold
            self._filter = seccomp.ProgramFilter(keep_group=sandbox != "bwrap", no_sockets=sandbox == "landlock",
                                                 no_ownership=sandbox == "landlock")

    def command(self, argv: list[str], writable: list[Path], cwd: Path, init: bool = False) -> list[str]:
        """argv, inside bwrap when that is the sandbox, with only `writable` writable; with `init`, argv is the
        sandbox's first process (no process of bwrap's own shares its PID namespace)."""
        if self.sandbox != "bwrap":
            return list(argv)
        from .mounts import bwrap_command

        if self._counters is None:
            self._counters = FrozenCounters()
        return bwrap_command(list(argv), readable=self.readable, writable=writable, cwd=cwd, venv=self._sandbox_venv(),
                             devices=self._device_binds(), counters=self._counters.bwrap_args(), init=init)

    def _sandbox_venv(self) -> Path:
        """The task's venv, which the sandbox mounts read-only: no sandbox can be made without it."""
        if self.venv is None:
            raise ValueError(f"the {self.sandbox} sandbox needs the task's venv")
        return self.venv

    def _device_binds(self) -> list[str]:
        """Run by root: bwrap's arguments that bind device nodes of this confinement's own over the host's
        (see devices.py); where they cannot be made, none (the host's nodes, as run by a plain user)."""
        if os.geteuid() != 0 or self._devices is False:
            return []
        if self._devices is None:
            try:
                self._devices = PrivateDevices()
            except OSError:
                self._devices = False
                return []
        return self._devices.bwrap_args()

    def preexec(self, writable: list[Path], seccomp_filter: bool = True):
        """A function to run in the child before exec: limits, cgroup, SIGKILL when the parent dies, the
        Landlock ruleset when that is the sandbox (a child that cannot apply it never runs; run by root, every
        capability dropped from its bounding set, so the program has none), and the seccomp filter unless
        `seccomp_filter` is False (a program that installs `filter_program()` itself in each process it
        starts, after giving it a process group of its own)."""
        cgroup = self.cgroup.path
        memory, cpu, fsize, nproc = self.memory_mb * MB, self.cpu_seconds, self.file_size_mb * MB, self.processes
        ruleset = self._ruleset(writable) if self.sandbox == "landlock" else None
        program_filter = self._filter if seccomp_filter else None
        capabilities = _capability_count() if ruleset is not None and os.geteuid() == 0 else 0
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # loaded here: the child of a threaded host loads nothing
        except OSError:
            libc = None

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
            if libc is not None:
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if ruleset is not None:
                ruleset.restrict()
                os.close(ruleset.fd)  # the program gets no handle on the ruleset the next program is given
            if program_filter is not None:
                program_filter.apply()
            if capabilities:  # root under Landlock: no capability survives exec, as in bwrap
                if libc is None:
                    raise OSError("cannot drop capabilities without the C library")
                libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
                for number in range(capabilities):
                    if libc.prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0:
                        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

        return apply

    def inherited_fds(self, writable: list[Path]) -> tuple[int, ...]:
        """Descriptors the child must keep until exec (the Landlock ruleset)."""
        return (self._ruleset(writable).fd,) if self.sandbox == "landlock" else ()

    def _ruleset(self, writable: list[Path]) -> Ruleset:
        """The Landlock ruleset for these writable folders. Rules hold inodes, not paths: a folder made anew
        (the eval tree, HOME and TMPDIR after a reset) needs a new ruleset."""
        key = tuple(writable)
        inodes = tuple(os.stat(path).st_ino if path.exists() else -1 for path in writable)
        found = self._rulesets.get(key)
        if found is None or found[0] != inodes:
            from .mounts import landlock_ruleset

            if found is not None:
                found[1].close()
            found = self._rulesets[key] = (inodes, landlock_ruleset(readable=self.readable, writable=writable,
                                                                     venv=self._sandbox_venv()))
        return found[1]

    def child_scopes(self) -> int:
        """The Landlock scopes a warm interpreter's child takes in a domain of its own, so it cannot signal the
        interpreter (which shares the child's domain otherwise) nor reach an abstract socket made outside the
        child: those of Landlock ABI 6 where Landlock is the sandbox, else 0."""
        if self.sandbox != "landlock":
            return 0
        from . import landlock

        return landlock.SCOPE_SIGNAL | landlock.SCOPE_ABSTRACT_UNIX_SOCKET if landlock.abi() >= 6 else 0

    def filter_program(self) -> list[tuple[int, int, int, int]] | None:
        """The seccomp filter's instructions (see seccomp.ProgramFilter), or None where none applies."""
        return list(self._filter.instructions) if self._filter is not None else None

    def prepare(self, argv: list[str], env: dict[str, str], writable: list[Path], cwd: Path,
                seccomp_filter: bool = True, init: bool = False) -> Launch:
        """What it takes to start argv confined: the command line, the environment (with the episode's
        token), the function to run before exec and the descriptors it needs (`init`: see `command`)."""
        return Launch(self.command(argv, writable, cwd, init), {**env, STRAY_VARIABLE: self.token},
                      self.preexec(writable, seccomp_filter), self.inherited_fds(writable))

    def run(self, argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, writable: list[Path],
            pass_fds: tuple[int, ...] = ()) -> tuple[Completed, str]:
        """Run argv confined (sandbox, limits); returns the result and its output with any limit named."""
        launch = self.prepare(argv, env, writable, cwd)
        completed = process.run(launch.argv, cwd=cwd, env=launch.env, timeout=timeout, preexec=launch.preexec,
                                pass_fds=pass_fds + launch.pass_fds)
        return completed, "\n".join(filter(None, [completed.describe(timeout), self.note(completed)]))

    def note(self, completed: Completed) -> str:
        """A line naming the resource limit a run ran into, or ''."""
        code, output = completed.returncode, completed.output
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):  # the leader's own, or a child's as a shell reports it
            return f"[stopped: CPU time limit of {self.cpu_seconds} s reached]"
        if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in output:
            return f"[stopped: file size limit of {self.file_size_mb} MB reached]"
        if "MemoryError" in output or "Cannot allocate memory" in output:
            return f"[memory limit of {self.memory_mb} MB reached]"
        if "Resource temporarily unavailable" in output or "fork: retry" in output:
            return f"[process limit of {self.processes} reached]"
        return ""

    def kill_strays(self, folders: list[Path], spare: int | None = None) -> None:
        """SIGKILL the episode's processes that left their process group where neither bwrap's PID namespace
        nor a pids cgroup ends them (the seccomp filter keeps programs in their group; this is the net
        behind it, and the only one where seccomp is not available): those whose environment carries this
        confinement's token or whose working directory lies in one of `folders`. With a pids cgroup, every
        process in it. The process `spare` (a warm eval interpreter between runs) is left alone."""
        if self.sandbox == "bwrap":
            return  # killing a program's bwrap ends its whole PID namespace
        if self.cgroup.path is not None:
            self.cgroup.kill_all(spare)
            return
        marker = f"{STRAY_VARIABLE}={self.token}".encode()
        reaper.send(stat.pid for stat in reaper.processes() if stat.pid != spare
                    and (reaper.carries(stat.pid, marker) or reaper.working_in(stat.pid, folders)))

    def close(self) -> None:
        self.cgroup.close()
        if isinstance(self._devices, PrivateDevices):
            self._devices.close()
        self._devices = None
        if self._counters is not None:
            self._counters.close()
        self._counters = None
        for _, ruleset in self._rulesets.values():
            ruleset.close()
        self._rulesets.clear()


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

    def kill_all(self, spare: int | None = None) -> None:
        """SIGKILL every process still in the cgroup (they may have left their process group), but `spare`."""
        if self.path is None:
            return
        for _ in range(50):
            if not reaper.send(pid for pid in map(int, _read(self.path / "cgroup.procs").split()) if pid != spare):
                return

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
