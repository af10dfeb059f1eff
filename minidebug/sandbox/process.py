"""The one place that starts the debugged program's processes.

Every child gets its own session (so its process group can be killed as a whole),
a hard timeout, a capped output and an allowlisted environment: nothing from the
host's environment reaches it unless it is listed here.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from . import reaper

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_MAX_OUTPUT = 1_000_000  # bytes kept from one run: head and tail halves
T = TypeVar("T")


@dataclass(frozen=True)
class Completed:
    """The result of one finished (or killed) command."""

    returncode: int | None
    output: str
    timed_out: bool
    seconds: float
    dropped_bytes: int = 0

    def describe(self, timeout: float) -> str:
        """The output, followed by a line saying how the command ended when that is news."""
        text = self.output
        if self.timed_out:
            text += f"\n[timed out after {timeout:g} s; the process group was killed]"
        elif self.returncode is not None and self.returncode < 0:
            text += f"\n[killed by signal {signal.Signals(-self.returncode).name}]"
        return text


def episode_environ(venv: Path, home: Path, tmp: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted environment for code run on the agent's behalf.

    The venv's bin comes first on PATH; HOME and TMPDIR point inside the episode;
    no variable of the host's (API keys, tokens, proxies) is passed on.
    """
    env = {
        "PATH": f"{venv / 'bin'}:{SYSTEM_PATH}",
        "VIRTUAL_ENV": str(venv),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "PYTHON_COLORS": "0",
        "PYTHONHASHSEED": "0",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the worktree; the venv's own .pyc are still used
        "PYTHONIOENCODING": "utf-8",
        "PYTEST_ADDOPTS": "-p no:cacheprovider",
    }
    if extra:
        env.update(extra)
    return env


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_output: int = DEFAULT_MAX_OUTPUT,
    preexec: Callable[[], None] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Completed:
    """Run argv to completion in its own process group; stdout and stderr merged.

    On timeout the whole group is killed and the output read so far is returned.
    Output past `max_output` bytes is cut in the middle (`dropped_bytes` counts it).
    Raises OSError only when the program cannot be started at all.
    """
    start = time.monotonic()
    return collect(spawn(argv, cwd=cwd, env=env, preexec=preexec, pass_fds=pass_fds), start, timeout, max_output)


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], preexec: Callable[[], None] | None = None,
          pass_fds: tuple[int, ...] = (), stdin_pipe: bool = False) -> subprocess.Popen:
    """Start argv in a session of its own, stdout and stderr into one pipe, stdin empty (see `empty_input`; or
    a pipe the caller writes to and closes, with `stdin_pipe`); `collect` then reads it to its end."""
    stdin = subprocess.PIPE if stdin_pipe else empty_input()
    try:
        return subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=preexec,
                                pass_fds=pass_fds)
    finally:
        if stdin != subprocess.PIPE:
            os.close(stdin)


def empty_input() -> int:
    """An input that is at its end at once, as /dev/null: the read end of a pipe whose write end is closed.
    Never the host's /dev/null itself: a program that holds a device node of the host as a descriptor can
    change its mode and times through it (fchmod, futimens) where its uid owns it, as a sandbox's uid 0
    does when root runs it, and `chmod 000 /dev/null` breaks every program of the machine."""
    read_end, write_end = os.pipe()
    os.close(write_end)
    return read_end


def collect(proc: subprocess.Popen, start: float, timeout: float, max_output: int = DEFAULT_MAX_OUTPUT) -> Completed:
    """Read a `spawn`ed process's output until it exits or `timeout` seconds from `start` (time.monotonic()
    when the run began) pass, then kill its process group."""
    deadline = start + timeout
    assert proc.stdout is not None
    try:
        reader, timed_out = read_output(proc.stdout.fileno(), deadline, lambda: proc.poll() is not None,
                                        max_output)
    except BaseException:  # KeyboardInterrupt included: nothing of the command outlives this call
        kill_group(proc.pid)
        proc.stdout.close()
        proc.wait()
        raise
    if not timed_out:
        try:  # output ended: give the leader a moment to exit on its own, so its status is its own
            proc.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc.pid)
    if timed_out:
        reader.drain(proc.stdout.fileno())
    proc.stdout.close()
    returncode = proc.wait()
    return Completed(
        returncode=None if timed_out else returncode,
        output=reader.text(),
        timed_out=timed_out,
        seconds=time.monotonic() - start,
        dropped_bytes=reader.dropped,
    )


_launcher: tuple[int, ThreadPoolExecutor] | None = None


def in_background(start: Callable[[], T]) -> Future[T]:
    """Run `start` (a process start) on the process's one launcher thread, which lives as long as the process:
    a child's parent-death signal follows the thread that forked it, so no short-lived thread may start one.
    The caller goes on while the new process enters its limits and cgroup (tens of ms where there is one)."""
    global _launcher
    if _launcher is None or _launcher[0] != os.getpid():  # none yet, or this is a fork of the process that made it
        _launcher = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="minidebug-launcher"))
    return _launcher[1].submit(start)


def read_output(fd: int, deadline: float, exited: Callable[[], bool],
                max_output: int = DEFAULT_MAX_OUTPUT) -> tuple[_CappedReader, bool]:
    """Read a program's output from `fd` (made non-blocking) until it ends, or until 0.2 s after `exited()`
    says the program is gone while something it started still holds the pipe; returns the reader and
    whether `deadline` (a time.monotonic() value) passed first."""
    reader = _CappedReader(max_output)
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                return reader, True
            if exited_at is None and exited():
                exited_at = now
            if exited_at is not None and now - exited_at > 0.2:
                return reader, False  # the leader is gone; something in its group holds the pipe open
            wait = min(deadline - now, 0.05 if exited_at is not None else 0.5)
            if selector.select(wait) and not reader.read(fd):
                return reader, False  # EOF


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by pid, if any is left."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _CappedReader:
    """Keeps the first and the last `limit/2` bytes of a stream."""

    def __init__(self, limit: int):
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def read(self, fd: int) -> bool:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.half
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess
        return True

    def drain(self, fd: int) -> None:
        """Read what is left in the pipe (of a program that was just killed) without waiting."""
        try:
            while self.read(fd):
                pass
        except OSError:
            pass

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes of output dropped ...]\n{tail}"
        return head + tail


def signal_programs(pgid: int, signum: int) -> None:
    """Send signum to every live process of the group except bwrap's own (which would die of a SIGINT and
    take the program with it): the program sees it as it would see Ctrl-C in a terminal."""
    reaper.send([stat.pid for stat in reaper.processes() if stat.pgid == pgid and stat.comm != "bwrap"], signum)
