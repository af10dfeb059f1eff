"""A live `python -m pdb` session driven through pexpect.

The prompt is `<marker>file:line<marker>` (see drivers/minidebug_pdb.py), so one command costs one
round trip and the reply says where the program stands. Reading is capped, so a program that prints
without end cannot exhaust memory, and every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..sandbox import process

if TYPE_CHECKING:
    from ..sandbox.confinement import Confinement

MAX_REPLY = 200_000  # characters of one reply kept (head and tail)
LINE = 1024  # characters per line of the breakpoints' JSON sent to the driver
MAX_COMMAND = 4095  # bytes of one command: what a terminal keeps of one line
BEGIN_TIMEOUT = 30.0  # seconds for the driver to take the marker and the breakpoints


@dataclass
class Reply:
    """What one command produced."""

    output: str
    location: tuple[str, int] | None  # (file, line) when a prompt came back
    status: str  # "prompt", "eof", "timeout", or "unsent": the program did not take the command in time


@dataclass
class Breakpoint:
    number: int
    file: str  # absolute path, as pdb reports it
    line: int
    condition: str = ""
    temporary: bool = False
    enabled: bool = True
    funcname: str = ""  # set for `b function`: stops at the function's first line when it is called


class PdbSession:
    """One pdb child process: start, send a command, interrupt, close.

    The process starts when the session is made; the program runs once `begin` hands it the breakpoints.
    With `preload` (module names; [] for none) it imports pytest, its plugins and those first and waits, so
    a session made ahead of its first command (see the pdb tool) reaches its first prompt without paying
    for them.

    Args:
        argv: the pdb arguments (e.g. ["-m", "pytest", "-s", "-q"]).
        python: the interpreter (the task's venv python).
        cwd, env: where and with what environment the program runs.
        confinement: the episode's resource limits and sandbox.
        preload: None, or modules to import with pytest while waiting for `begin`.
    """

    def __init__(self, argv: list[str], python: Path, cwd: Path, env: dict[str, str],
                 confinement: Confinement | None = None, preload: list[str] | None = None):
        self._new_marker()
        self.preloaded = preload is not None
        env = dict(env)
        if preload is not None:
            env["MINIDEBUG_PDB_PRELOAD"] = json.dumps(list(preload))
        command = [str(python), "-m", "minidebug_pdb", *argv]
        preexec: Callable[[], None] | None = None
        keep: tuple[int, ...] = ()
        if confinement is not None:
            launch = confinement.prepare(command, env, [cwd, Path(env["HOME"]), Path(env["TMPDIR"])], cwd)
            command, env, preexec, keep = launch.argv, launch.env, launch.preexec, launch.pass_fds
            preexec = _terminal_not_root(preexec)
        self.child = _spawn(keep)(command[0], command[1:], cwd=str(cwd), env=env,
                                  encoding="utf-8", codec_errors="replace", echo=False,
                                  dimensions=(50, 500), use_poll=True, preexec_fn=preexec)
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default

    def _new_marker(self) -> None:
        """A fresh prompt marker (its secret part goes to the driver in `begin`), and nothing read yet."""
        self._token = secrets.token_hex(8)
        self.marker = f"\x1f<md{self._token}>"
        self._leftover = ""
        self._prompt_end = ""  # the part of the last prompt's line end still to come (reads can split it)
        self._pattern = re.compile(re.escape(self.marker) + r"(.*?):(\d+)" + re.escape(self.marker) + r"\r?\n?")

    def begin(self, breakpoints: list[Breakpoint]) -> bool:
        """Let the program start, with `breakpoints` set before its first line; False if the driver did not
        take them within BEGIN_TIMEOUT."""
        lines = ["start"] if self.preloaded else []
        lines.append(self._token)  # the marker's secret part: never in the program's env, argv or files
        text = json.dumps([vars(b) for b in sorted(breakpoints, key=lambda b: b.number)])
        lines += [text[start:start + LINE] for start in range(0, len(text), LINE)]  # a terminal cuts long lines
        return self._write("".join(line + "\n" for line in lines) + "\n", time.monotonic() + BEGIN_TIMEOUT)

    @property
    def alive(self) -> bool:
        return self.child.isalive()

    def read_reply(self, timeout: float) -> Reply:
        """Read until the next prompt, EOF or timeout; output is capped at MAX_REPLY characters."""
        import pexpect

        deadline = time.monotonic() + timeout
        head, tail, dropped = "", "", 0
        pending, self._leftover = self._leftover, ""
        while True:
            pending = self._drop_prompt_end(pending)
            match = self._pattern.search(pending)
            if match:
                head, tail, dropped = _append(head, tail, dropped, pending[: match.start()])
                rest = pending[match.end():]
                ending = match.group(0)[-2:]
                self._prompt_end = "" if ending.endswith("\n") else "\n" if ending.endswith("\r") else "\r\n"
                self._leftover = rest  # output after the prompt belongs to the next reply
                return Reply(_join(head, tail, dropped), (match.group(1), int(match.group(2))), "prompt")
            keep = len(self.marker) * 2 + 4096  # a prompt split across reads is still found
            if len(pending) > keep:
                head, tail, dropped = _append(head, tail, dropped, pending[:-keep])
                pending = pending[-keep:]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                head, tail, dropped = _append(head, tail, dropped, pending)
                return Reply(_join(head, tail, dropped), None, "timeout")
            try:
                pending += self.child.read_nonblocking(65536, timeout=min(remaining, 1.0))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                head, tail, dropped = _append(head, tail, dropped, pending)
                return Reply(_join(head, tail, dropped), None, "eof")

    def _drop_prompt_end(self, pending: str) -> str:
        """Drop the rest of the previous prompt's line end, which a read may have split from it."""
        while self._prompt_end and pending:
            if self._prompt_end == "\r\n" and pending[0] == "\n":  # a terminal without \r
                self._prompt_end, pending = "", pending[1:]
            elif pending[0] == self._prompt_end[0]:
                self._prompt_end, pending = self._prompt_end[1:], pending[1:]
            else:
                self._prompt_end = ""
        return pending

    def send(self, command: str, timeout: float) -> Reply:
        """Send one command line and read its reply; "unsent" when the program did not take the line
        within `timeout`."""
        if not self._write(command + "\n", time.monotonic() + timeout):
            return Reply("", None, "unsent")
        return self.read_reply(timeout)

    def _write(self, text: str, deadline: float) -> bool:
        """Write `text` to the program's terminal, never blocking past `deadline`: a program that does not
        read its input (asleep, or its terminal in raw mode) fills the terminal's queue, and a plain write
        would then wait for ever. False if not all of it went."""
        fd = self.child.child_fd
        data = memoryview(text.encode())
        writable = select.poll()
        writable.register(fd, select.POLLOUT)
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        try:
            while data:
                try:
                    data = data[os.write(fd, data):]
                    continue
                except BlockingIOError:
                    pass
                except OSError:  # the program has gone: the read that follows finds the terminal's end
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                writable.poll(min(remaining, 1.0) * 1000)
        finally:
            os.set_blocking(fd, blocking)
        return True

    def interrupt(self) -> None:
        """SIGINT to the program's process group, as Ctrl-C in a terminal would."""
        process.signal_programs(self.child.pid, signal.SIGINT)

    def send_eof(self) -> None:
        """The terminal's end-of-file character (VEOF, ^D), as a user's Ctrl-D."""
        self._write("\x04", time.monotonic() + 1.0)

    def exit_code(self) -> int | None:
        """How the child ended, once it has: -signal if a signal ended it, else its exit status."""
        self.close()
        if self.child.signalstatus is not None:
            return -self.child.signalstatus
        return self.child.exitstatus

    def close(self) -> None:
        """Kill the whole process group and reap the child. Idempotent."""
        process.kill_group(self.child.pid)
        try:
            self.child.close(force=True)
        except Exception:  # pexpect raises if the child cannot be reaped; the group is dead already
            pass


NOBODY = 65534


def _terminal_not_root(then):
    """A preexec step (in the child, its terminal as stdin) before `then`: run by root, the terminal's node
    (a pty of the host's) goes to nobody with mode 0600, so the confined program, uid 0 without capabilities
    (bwrap), cannot change its mode through its descriptors (a mode 0777 terminal lets any user of the
    machine read the session or type into it); it still reads and writes it through them."""
    def preexec() -> None:
        if os.geteuid() == 0:
            os.fchown(0, NOBODY, -1)
            os.fchmod(0, 0o600)
        if then is not None:
            then()

    return preexec


def _spawn(pass_fds: tuple[int, ...]):
    """pexpect.spawn, keeping `pass_fds` open in the child until exec (pexpect itself closes every fd)."""
    import pexpect
    import ptyprocess

    if not pass_fds:
        return pexpect.spawn

    class Spawn(pexpect.spawn):
        def _spawnpty(self, args, **kwargs):
            return ptyprocess.PtyProcess.spawn(args, pass_fds=pass_fds, **kwargs)

    return Spawn


def _append(head: str, tail: str, dropped: int, text: str) -> tuple[str, str, int]:
    text = text.replace("\r\n", "\n")
    half = MAX_REPLY // 2
    if len(head) < half:
        room = half - len(head)
        head, text = head + text[:room], text[room:]
    if text:
        tail += text
        if len(tail) > half:
            dropped += len(tail) - half
            tail = tail[-half:]
    return head, tail, dropped


def _join(head: str, tail: str, dropped: int) -> str:
    if dropped:
        return f"{head}\n[... {dropped} characters of output dropped ...]\n{tail}"
    return head + tail
