"""The pdb tool: one live `python -m pdb <entrypoint>` per episode, breakpoints kept across edits.

In an env that runs warm (`eval_mode="fork"`, the default), a session is forked in an eval room from its warm
interpreter, on a copy of the worktree (see runner/starts.py). Where it cannot be (see
`room_view.can_fork`), it starts in the worktree; then, once pdb was used in a warm env, the next session is
started ahead: after reset, and whenever a session ends, a pdb process starts in the background, imports
what the program imports first (for a pytest entrypoint: pytest, its plugins and the venv's modules the
task's tests load) and waits; the next pdb command hands it the breakpoints and the program starts at once.
It is the same process, sandbox and limits a session started then would have; one the project's files now
shadow a module of starts over as a fresh interpreter (see drivers/minidebug_pdb.py).
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from pathlib import Path

from pydantic import Field

from ..errors import MinidebugError, ToolError
from ..runner.pdb_session import MAX_COMMAND, Breakpoint, PdbSession, Reply
from ..runner.warm import learned_modules
from ..sandbox.process import Completed
from ..store.venv import pytest_plugins
from ..workspace.safefs import read_entry
from .base import Arguments, Episode, Tool

REFUSED = {
    "interact": "it starts an interactive console that reads the terminal itself",
    "commands": "it reads further lines from the terminal; set a breakpoint and use p/pp at each stop instead",
    "debug": "a nested debugger cannot be driven through this tool",
}
QUIT = {"q", "quit", "exit"}
RESTART = {"restart", "run"}
CLEAR = {"cl", "clear"}
FINISHED = ("will be restarted", "The program exited via sys.exit()", "Post mortem debugger finished")
INTERRUPT_GRACE = 2.0  # seconds to wait for the prompt after SIGINT, and again after EOF

_ADDED = re.compile(r"^Breakpoint (\d+) at (.+):(\d+)\s*$", re.M)
_DELETED = re.compile(r"^Deleted breakpoint (\d+) at ", re.M)
_TOGGLED = re.compile(r"^(Disabled|Enabled) breakpoint (\d+) at ", re.M)


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # control characters but tab: a terminal acts on them
_NO_CAPTURE = re.compile(r"-[qvxl]*s[qvxl]*|--capture=no")  # -s, alone or among pytest's flag letters


def pdb_arguments(entrypoint: list[str]) -> list[str]:
    """The arguments for `python -m pdb` that run a task's entrypoint; pytest gets `-s` so pdb owns stdin.

    Raises:
        ToolError: the entrypoint is not a Python script, `-m module` or pytest command.
    """
    argv = list(entrypoint)
    if argv and re.fullmatch(r"python(\d+(\.\d+)?)?", Path(argv[0]).name):
        argv = argv[1:]
    elif argv and Path(argv[0]).name in ("pytest", "py.test"):
        argv = ["-m", "pytest", *argv[1:]]
    else:
        raise ToolError(f"pdb can only run Python entrypoints; this task's is {shlex.join(entrypoint)!r}")
    if argv[:1] == ["-m"] and len(argv) >= 2:
        if argv[1] == "pytest" and not any(_NO_CAPTURE.fullmatch(arg) for arg in argv):
            argv.insert(2, "-s")
        return argv
    if argv and not argv[0].startswith("-"):
        return argv
    raise ToolError(f"pdb cannot run {shlex.join(entrypoint)!r}: "
                    "expected `python script.py ...` or `python -m module ...`")


def _worktree_text(episode: Episode, rel: str) -> str | None:
    """The text of a regular file of the worktree, read without following any link (None for anything else)."""
    entry = read_entry(episode.workspace.root, rel)
    if entry is None or entry[0] != "file":
        return None
    return entry[1].decode("utf-8", errors="replace")


def map_line(before: list[str], after: list[str], line: int) -> int | None:
    """Where line `line` of `before` is in `after` (None if it was deleted)."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 <= line - 1 < i2:
            offset = line - 1 - i1
            if tag == "equal" or (tag == "replace" and offset < j2 - j1):
                return j1 + offset + 1
            return None
    return None


class Pdb(Tool):
    name = "pdb"
    description = (
        "Send one command to a live pdb session running the project's entrypoint (started on first use): "
        "b file:line [, cond], tbreak, cl N, c, n, s, r, until, p expr, pp expr, w, u, d, l, ll, a, q. "
        "Breakpoints survive edits (they move with their code) and the program restarts after an edit. "
        "Each reply ends with where the program stands."
    )

    class Args(Arguments):
        command: str = Field(description="one pdb command, e.g. 'b calc.py:12' or 'p total'")

    def __init__(self) -> None:
        self.session: PdbSession | None = None
        self.spare: PdbSession | None = None  # the next session, started ahead (see the module's docstring)
        self._standby = False
        self._used = False  # a session ran in this env: from then on the next one is started ahead
        self.breakpoints: dict[int, Breakpoint] = {}
        self.notices: list[str] = []
        self.restart_reason = ""
        self._last_location: tuple[str, int] | None = None

    # -- the tool ---------------------------------------------------------------------------
    def run(self, episode: Episode, args: Args) -> str:
        self._used = True
        command = args.command.strip()
        if not command:
            raise ToolError("pdb: empty command")
        if "\n" in command or "\r" in command:
            raise ToolError("pdb: send one command per call (no newlines)")
        if _CONTROL.search(command):
            raise ToolError("pdb: control characters are not allowed in a command (the terminal would act on them: "
                            "^C interrupts, ^D ends a line, ^Z stops the program); to interrupt a running program, "
                            "wait for the pdb timeout")
        if len(command.encode()) > MAX_COMMAND:
            raise ToolError(f"pdb: a command is limited to {MAX_COMMAND} bytes (a terminal line); this one has "
                            f"{len(command.encode())}")
        word = command.split()[0]
        if word in REFUSED:
            raise ToolError(f"pdb: '{word}' is not available: {REFUSED[word]}")
        if word in QUIT:
            self._stop(episode)
            return "The pdb session ended. The next pdb command starts the program again."
        if word in RESTART:
            self._stop()
            self.restart_reason = "restarted as asked"
            command = ""
        elif word in CLEAR and len(command.split()) == 1:
            if not self.breakpoints:
                return "No breakpoints to clear."
            command = "cl " + " ".join(str(n) for n in sorted(self.breakpoints))
        reply = self._ensure_session(episode)
        if command:
            reply = self._command(episode, command)
        return self._finish(self._take_notices() + reply.output.rstrip("\n"), reply, episode)

    # -- hooks the env calls ------------------------------------------------------------------
    def reset(self, episode: Episode, keep_breakpoints: bool = False) -> None:
        """Drop the session; keep the breakpoints (mapped back to the base files) only if asked."""
        self._stop()
        self._standby = False
        self._close_spare()
        self.notices.clear()
        if not keep_breakpoints:
            self.breakpoints.clear()
            return
        workspace = episode.workspace
        for number, bp in list(self.breakpoints.items()):
            rel = self._rel(episode, bp.file)
            text = _worktree_text(episode, rel) if rel is not None else None
            if rel is None or text is None:
                continue
            current = text.splitlines()
            base = workspace.base_text(rel)
            line = map_line(current, base.splitlines(), bp.line) if base is not None else None
            if line is None:
                del self.breakpoints[number]
            else:
                bp.line = line

    def file_edited(self, episode: Episode, rel: str, before: str, after: str) -> None:
        """Move breakpoints with their code; the next command restarts the program."""
        path = str(episode.workspace.path(rel))
        old, new = before.splitlines(), after.splitlines()
        for number, bp in sorted(self.breakpoints.items()):
            if bp.file != path:
                continue
            line = map_line(old, new, bp.line)
            if line is None:
                del self.breakpoints[number]
                self.notices.append(f"breakpoint {number} at {rel}:{bp.line} was dropped: its line was deleted")
            elif line != bp.line:
                self.notices.append(f"breakpoint {number} moved with its code from {rel}:{bp.line} to {rel}:{line}")
                bp.line = line
        if self.session is not None:
            self.restart_reason = f"restarted after the edit of {rel}"
            self._stop(episode)

    def breakpoint_lines(self, episode: Episode, rel: str) -> set[int]:
        path = str(episode.workspace.path(rel))
        return {bp.line for bp in self.breakpoints.values() if bp.file == path}

    def warm_up(self, episode: Episode) -> None:
        """Start the next session ahead, now (once pdb was used in this env) and whenever a session ends,
        until the next reset."""
        self._standby = True
        self._start_spare(episode)

    def close(self) -> None:
        self._stop()
        self._standby = False
        self._close_spare()

    # -- internals ----------------------------------------------------------------------------
    def _ensure_session(self, episode: Episode) -> Reply:
        if self.session is not None and self.session.alive:
            return Reply("", self._last_location, "prompt")
        self._stop()
        argv = pdb_arguments(episode.task.entrypoint)
        session, self.spare = self.spare, None
        if session is None or not session.alive:
            if session is not None:
                session.close()
            session = self._start(episode, argv)
        self.session = session
        if session.begin(list(self.breakpoints.values())):
            reply = session.read_reply(max(episode.limits.pdb_timeout, 30.0))
        else:
            reply = Reply("", None, "unsent")
        if reply.status != "prompt":
            output = reply.output.strip()
            self._stop()
            raise ToolError(f"pdb: the program did not reach the pdb prompt ({reply.status}):\n{output}")
        self._last_location = reply.location
        started = self.restart_reason or "started"
        self.restart_reason = ""
        self.notices.append(f"[pdb {started}: python -m pdb {shlex.join(argv)}]")
        for line in reply.output.splitlines():
            if line.startswith("*** could not restore"):
                self.notices.append(line)
        return Reply("", reply.location, "prompt")

    def _command(self, episode: Episode, command: str) -> Reply:
        assert self.session is not None
        timeout = episode.limits.pdb_timeout
        reply = self.session.send(command, timeout)
        if reply.status == "unsent":
            self.restart_reason = "restarted after a command it did not read"
            self._stop(episode)
            reply.output = (f"[the program did not take the command within the {timeout:g} s pdb timeout (its "
                            "terminal's input was full, as when a program neither reads it nor reaches a pdb "
                            "prompt); it was killed. Breakpoints are kept; the next pdb command starts it again]")
        if reply.status == "timeout":
            reply = self._interrupt(episode, reply, timeout)
        if reply.status == "eof":
            code = self.session.exit_code()
            self._stop(episode)
            limit = episode.confinement.note(Completed(code, reply.output, False, 0.0)) if episode.confinement else ""
            reply.output += f"\n{limit}" if limit else ""
            reply.output += "\n[the program and its pdb session ended; the next pdb command starts it again]"
        self._track(command, reply.output)
        if any(sign in reply.output for sign in FINISHED):
            # pdb would rerun it in the same process, with modules already imported; start afresh instead.
            self.restart_reason = "restarted in a fresh process after the program finished"
            self._stop(episode)
        if reply.location is not None:
            self._last_location = reply.location
        return reply

    def _interrupt(self, episode: Episode, reply: Reply, timeout: float) -> Reply:
        assert self.session is not None
        self.session.interrupt()
        after = self.session.read_reply(INTERRUPT_GRACE)
        if after.status == "prompt":
            after.output = reply.output + after.output + (
                f"\n[the command ran past the {timeout:g} s pdb timeout and was interrupted (SIGINT); "
                "the program stopped where shown]")
            return after
        self.session.send_eof()  # a program blocked on input() gets EOF, then stops at the next line
        after2 = self.session.read_reply(INTERRUPT_GRACE)
        if after2.status == "prompt":
            after2.output = reply.output + after.output + after2.output + (
                f"\n[the command ran past the {timeout:g} s pdb timeout; the program was waiting for input, "
                "which pdb cannot give it, so it got end-of-file; it stopped where shown]")
            return after2
        output = reply.output + after.output + after2.output
        self.restart_reason = "restarted after a hang"
        self._stop(episode)
        return Reply(output + f"\n[the command ran past the {timeout:g} s pdb timeout and did not stop on SIGINT; "
                     "the program was killed. Breakpoints are kept; the next pdb command starts it again]",
                     None, "killed")

    def _track(self, command: str, output: str) -> None:
        words = command.split(maxsplit=1)
        temporary = words[0] in ("tbreak",)
        condition = ""
        if words[0] in ("b", "break", "tbreak") and len(words) > 1 and "," in words[1]:
            condition = words[1].split(",", 1)[1].strip()
        funcname = ""
        if words[0] in ("b", "break", "tbreak") and len(words) > 1:
            spec = words[1].split(",", 1)[0].strip().rsplit(":", 1)[-1]
            if not spec.isdigit():
                funcname = spec.rsplit(".", 1)[-1]
        for match in _ADDED.finditer(output):
            number = int(match.group(1))
            self.breakpoints[number] = Breakpoint(number, match.group(2), int(match.group(3)), condition, temporary,
                                                  funcname=funcname)
        for match in _DELETED.finditer(output):
            self.breakpoints.pop(int(match.group(1)), None)
        for match in _TOGGLED.finditer(output):
            bp = self.breakpoints.get(int(match.group(2)))
            if bp:
                bp.enabled = match.group(1) == "Enabled"
        if words[0] == "condition" and len(words) > 1:
            named, _, expr = words[1].partition(" ")
            bp = self.breakpoints.get(int(named)) if named.isdigit() else None
            if bp and ("New condition set" in output or "now unconditional" in output):
                bp.condition = expr.strip()

    def _finish(self, text: str, reply: Reply, episode: Episode) -> str:
        location = reply.location
        if location is None:
            return text.strip("\n") or "[no output]"
        file, line = location
        rel = self._rel(episode, file)
        # The location comes from the program (it can print a prompt of its own): only a regular file of the
        # worktree, read without following any link, lends its source line; any other path is never opened.
        text_of = _worktree_text(episode, rel) if rel is not None else None
        source = ""
        if text_of is not None:
            lines = text_of.splitlines()
            source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        where = f"[at {rel or file}:{line}] {source}".rstrip()
        return f"{text.strip(chr(10))}\n{where}".lstrip("\n")

    def _take_notices(self) -> str:
        text = "".join(note + "\n" for note in self.notices)
        self.notices.clear()
        return text

    @staticmethod
    def _rel(episode: Episode, file: str) -> str | None:
        """file's path relative to the worktree, worked out from its text alone (the host never looks it up);
        None when it lies outside the worktree or is hidden from the agent. A relative path is taken from the
        worktree, the program's working folder."""
        if "\0" in file:
            return None
        root = str(episode.workspace.root)
        normal = os.path.normpath(os.path.join(root, file))
        if not normal.startswith(root + os.sep):
            return None
        rel = normal[len(root) + 1:].replace(os.sep, "/")
        return None if episode.workspace.is_hidden(rel) else rel

    def _stop(self, episode: Episode | None = None) -> None:
        """End the live session; given the episode, start the next one ahead (when the episode runs warm)."""
        if self.session is not None:
            self.session.close()
            self.session = None
        if episode is not None:
            self._start_spare(episode)

    @staticmethod
    def _start(episode: Episode, argv: list[str]) -> PdbSession:
        """A session, started the first way of the episode's that can (see runner/starts.py)."""
        timeout = max(episode.limits.pdb_timeout, 30.0)
        for way in episode.starts():
            session = way.pdb_session(argv, timeout)
            if session is not None:
                return session
        raise ToolError("pdb: the session could not be started")

    def _start_spare(self, episode: Episode) -> None:
        if not (self._standby and self._used) or (self.spare is not None and self.spare.alive):
            return
        first = episode.starts()[0]
        if first.forks:
            return  # the next session forks in a room: nothing waits for it per env
        self._close_spare()
        try:
            argv = pdb_arguments(episode.task.entrypoint)
            preload = None
            if argv[:2] == ["-m", "pytest"]:
                workspace = episode.workspace
                preload = list(pytest_plugins(workspace.venv)) + learned_modules(workspace.prepared.entry)
            self.spare = first.pdb_session(argv, episode.limits.pdb_timeout, preload)
        except (ToolError, OSError, MinidebugError):  # the next command starts its session as it comes
            self.spare = None

    def _close_spare(self) -> None:
        if self.spare is not None:
            self.spare.close()
            self.spare = None
