"""A probe run's parts (see drivers/minidebug_probe.py): its command line, the process started on standby
before its run was asked for, and the result file the driver writes, read without trusting what a program may
have put in its place.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolError
from ..sandbox import process
from ..sandbox.process import Completed
from ..store.venv import pytest_plugins
from ..workspace.safefs import open_parent
from .warm import learned_modules

if TYPE_CHECKING:
    from ..sandbox.confinement import Confinement
    from ..workspace.worktree import Workspace

RESULT_NAME = "minidebug-probe.json"
MAX_RESULT_BYTES = 16 * 1024 * 1024  # the driver's JSON is far smaller: its values are rendered short
READ_SECONDS = 10.0  # reading the result (a regular file, read without blocking) never takes longer


def probe_argv(workspace: Workspace, argv: list[str]) -> list[str]:
    """The probe driver's command line for the program `python -m pdb`'s ARGV would run."""
    return [str(workspace.venv / "bin" / "python"), "-m", "minidebug_probe", *argv]


def parse_result(data: bytes | None, mapped: Callable[[str], str] | None = None) -> dict | None:
    """The driver's JSON from the result file's bytes (paths in it `mapped` first), or None where there is
    none or it is not an object."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
        result = json.loads(mapped(text) if mapped is not None else text)
    except (ValueError, RecursionError):
        return None
    return result if isinstance(result, dict) else None


class StandbyProbe:
    """A probe process started before its run (see tools/probe.py), confined as the episode's programs are."""

    def __init__(self, workspace: Workspace, confinement: Confinement, argv: list[str],
                 preload: list[str] | None = None):
        """For the program `python -m pdb`'s ARGV would run; `preload`: the modules to import ahead (default:
        the venv's pytest plugins and the modules the task's tests load)."""
        if preload is None:
            preload = list(pytest_plugins(workspace.venv)) + learned_modules(workspace.prepared.entry)
        env = {**workspace.environ(workspace.drivers), "MINIDEBUG_PROBE_PRELOAD": json.dumps(preload)}
        launch = confinement.prepare(probe_argv(workspace, argv), env, workspace.writable_dirs, workspace.root)
        self._started = process.in_background(lambda: process.spawn(
            launch.argv, cwd=workspace.root, env=launch.env, preexec=launch.preexec, pass_fds=launch.pass_fds,
            stdin_pipe=True))
        self._proc: subprocess.Popen | None = None

    def run(self, line: str, timeout: float) -> Completed | None:
        """The run with the configuration `line`; None (and the process ended) where it cannot serve one."""
        start = time.monotonic()
        proc = self._process()
        if proc is None or proc.poll() is not None:
            self.close()
            return None
        try:
            assert proc.stdin is not None
            proc.stdin.write(line.encode("utf-8") + b"\n")
            proc.stdin.close()
        except OSError:
            self.close()
            return None
        return process.collect(proc, start, timeout)

    @property
    def pid(self) -> int | None:
        proc = self._process()
        return proc.pid if proc is not None else None

    def close(self) -> None:
        """End the process if it still waits (or runs). Idempotent."""
        proc = self._process()
        if proc is not None and proc.returncode is None:
            process.kill_group(proc.pid)
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
            proc.wait()

    def _process(self) -> subprocess.Popen | None:
        if self._proc is None:
            try:
                self._proc = self._started.result()
            except Exception:  # noqa: BLE001 - it could not be started: the run starts fresh
                return None
        return self._proc


def read_result(root: Path, rel: str, deadline: float) -> bytes | None:
    """The bytes of the regular file rel under root (None if there is none), opened without following a link
    and without blocking, at most MAX_RESULT_BYTES, read before `deadline` (time.monotonic()).

    Raises:
        ToolError: rel is not a regular file, is too large, or was not read before the deadline.
    """
    try:
        with open_parent(root, rel) as (parent, name):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise ToolError(_refused("a symbolic link")) from None
                raise ToolError(_refused(f"unreadable ({exc.strerror})")) from None
    except FileNotFoundError:
        return None  # the folder itself went away
    except OSError as exc:
        raise ToolError(_refused(f"not reachable without following a link ({exc.strerror})")) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(_refused(f"not a regular file ({_kind(info.st_mode)})"))
        if info.st_size > MAX_RESULT_BYTES:
            raise ToolError(_refused(f"{info.st_size} bytes, over the {MAX_RESULT_BYTES} byte limit"))
        chunks: list[bytes]
        chunks, size = [], 0
        while True:
            if time.monotonic() > deadline:
                raise ToolError(_refused(f"not read within {READ_SECONDS:g} s"))
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                raise ToolError(_refused("it would block")) from None
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_RESULT_BYTES:  # it grew after the fstat
                raise ToolError(_refused(f"over the {MAX_RESULT_BYTES} byte limit"))
            chunks.append(chunk)
    finally:
        os.close(fd)


def _refused(why: str) -> str:
    return f"the program's result file was not read: {why}; the program must not touch {RESULT_NAME} in $TMPDIR"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"
