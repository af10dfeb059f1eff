"""trace and inspect: one run of the entrypoint under a tracer, instead of a dozen pdb steps.

In an env that runs warm (`eval_mode="fork"`, the default), each run is forked in an eval room from its warm
interpreter, on a copy of the worktree (see runner/starts.py). Where it cannot be, it runs in the worktree; then,
once the tool was used in a warm env, its next run is started ahead for a pytest entrypoint, as pdb's next
session is: after reset and after each run, a probe process starts in the background in the same sandbox and
limits, imports pytest, its plugins and the venv's modules the task's tests load, and waits; the next call
sends it its configuration and the program starts at once. One the project's files now shadow a module of
starts over as a fresh interpreter (see drivers/minidebug_probe.py).
"""

from __future__ import annotations

import re
import shlex

from pydantic import Field

from ..errors import MinidebugError, ToolError
from ..runner.probe_run import StandbyProbe
from .base import Arguments, Episode, Tool
from .pdb import pdb_arguments

_FILE_RANGE = re.compile(r"(.+\.py):(\d+)-(\d+)")
_FILE_LINE = re.compile(r"(.+\.py):(\d+)")


def run_probe(episode: Episode, config: dict, standby: StandbyProbe | None = None) -> tuple[dict | None, str]:
    """Run the entrypoint once under the probe driver, the first way of the episode's that can (see
    runner/starts.py: fresh, in `standby` where that can serve); returns its JSON (None if it wrote none) and
    output.

    Raises:
        ToolError: the program left something other than a regular file of at most MAX_RESULT_BYTES where
            the result goes (a FIFO, a device, a link, a folder, a huge file), or it could not be read in time.
    """
    argv = pdb_arguments(episode.task.entrypoint)
    for way in episode.starts():
        found = way.probe(argv, config, episode.limits.eval_timeout, standby)
        if found is not None:
            return found
    raise ToolError("the probe could not be started")


def _tail(output: str, lines: int = 15) -> str:
    kept = output.rstrip().splitlines()[-lines:]
    return "\n".join(kept)


def _render(tool: str, output: str, show) -> str:
    """show() on the driver's JSON; a result of the wrong shape (the program wrote its own) is an error."""
    try:
        return show()
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        raise ToolError(f"{tool}: the program's result was not in the driver's format (the program wrote it "
                        f"itself?); its output ends with:\n{_tail(output)}") from None


def _fields(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "(none)"


class ProbeTool(Tool):
    """What trace and inspect share: the run started ahead (see the module's docstring)."""

    def __init__(self) -> None:
        self._standby: StandbyProbe | None = None
        self._warm = False  # the env runs warm: start the next run ahead, once the tool was used
        self._used = False

    @property
    def standby(self) -> StandbyProbe | None:
        """The run started ahead for the tool's next call (see the module's docstring), or None."""
        return self._standby

    def probe(self, episode: Episode, config: dict) -> tuple[dict | None, str]:
        """run_probe, in the run started ahead where there is one; then the next one is started."""
        self._used = True
        standby, self._standby = self._standby, None
        try:
            return run_probe(episode, config, standby)
        finally:
            if standby is not None:
                standby.close()
            self._start_standby(episode)

    def warm_up(self, episode: Episode) -> None:
        self._warm = True
        self._start_standby(episode)

    def reset(self, episode: Episode, keep_breakpoints: bool) -> None:
        self.close()

    def close(self) -> None:
        self._warm = False
        if self._standby is not None:
            self._standby.close()
            self._standby = None

    def _start_standby(self, episode: Episode) -> None:
        argv = pdb_arguments(episode.task.entrypoint)
        if self._warm and self._used and self._standby is None and not episode.starts()[0].forks \
                and argv[:2] == ["-m", "pytest"]:
            try:
                self._standby = StandbyProbe(episode.workspace, episode.confinement, argv)
            except (OSError, ToolError, MinidebugError):  # the next run starts fresh
                self._standby = None


class Trace(ProbeTool):
    name = "trace"
    description = (
        "Run the program once and record every call of one function: where it was called from, its arguments, "
        "what it returned or raised, and its locals at return. target: a function name, Class.method, or "
        "file.py:start-end (functions defined in those lines). Prefer this to stepping with pdb when you want "
        "to see how a function behaves across many calls (recursion, loops, generators) in one step."
    )

    class Args(Arguments):
        target: str = Field(description="function name, Class.method, or file.py:start-end")
        max_calls: int | None = Field(None, description="calls to show (default 20); later ones are only counted")
        depth: int | None = Field(None, description="how deep to render nested values (default 2)")

    def run(self, episode: Episode, args: Args) -> str:
        target = args.target.strip()
        if not target or len(target) > 300 or any(c.isspace() for c in target):
            raise ToolError("trace: target must be a function name, Class.method, or file.py:start-end")
        match = _FILE_RANGE.fullmatch(target)
        if match:
            target = f"{episode.workspace.relative(match.group(1))}:{match.group(2)}-{match.group(3)}"
        elif not re.fullmatch(r"[A-Za-z_][\w.]*", target):
            raise ToolError("trace: target must be a function name, Class.method, or file.py:start-end")
        max_calls = 20 if args.max_calls is None else args.max_calls
        depth = 2 if args.depth is None else args.depth
        if not (1 <= max_calls <= 200 and 0 <= depth <= 6):
            raise ToolError("trace: need 1 <= max_calls <= 200 and 0 <= depth <= 6")
        data, output = self.probe(episode, {"mode": "trace", "target": target, "max_calls": max_calls, "depth": depth})
        command = shlex.join(episode.task.entrypoint)
        if data is None:
            return f"trace: the program did not finish normally; its output ends with:\n{_tail(output)}"
        return _render(self.name, output, lambda: self._show(target, command, data))

    @staticmethod
    def _show(target: str, command: str, data: dict) -> str:
        calls, total = data["calls"], data["total"]
        if not total:
            return f"{target} was never called while running `{command}`."
        lines = [f"trace of {target} while running `{command}`: {total} call{'s' if total != 1 else ''}"]
        for number, call in enumerate(calls, 1):
            lines.append(f"#{number} {call['function']}({_fields(call['args'])})  from {call['site']}")
            if "yields" in call:
                lines.append(f"   yielded: {', '.join(call['yields'])}")
            if "raised" in call:
                lines.append(f"   raised: {call['raised']}")
            elif "returned" in call:
                lines.append(f"   returned: {call['returned']}")
            else:
                lines.append("   no return seen (the program stopped inside it, or ran too deep to trace)")
            if "locals" in call:
                lines.append(f"   locals at exit: {_fields(call['locals'])}")
        if total > len(calls):
            lines.append(f"[{total - len(calls)} more calls not shown; raise max_calls to see them]")
        return "\n".join(lines)


class Inspect(ProbeTool):
    name = "inspect"
    description = (
        "Run the program to the first time a line is reached (at='file.py:line'), or to the first exception "
        "that escapes a function of the project (at='exception'), and show the call stack, the local "
        "variables there and the value of each expression in expr. One call gives what takes pdb a "
        "breakpoint, a continue and several prints; it leaves no session and keeps your breakpoints."
    )

    class Args(Arguments):
        at: str = Field(description="'file.py:line' or 'exception'")
        expr: list[str] | None = Field(None, description="expressions to evaluate there")

    def run(self, episode: Episode, args: Args) -> str:
        at = args.at.strip()
        if at != "exception":
            match = _FILE_LINE.fullmatch(at)
            if not match:
                raise ToolError("inspect: at must be 'file.py:line' or 'exception'")
            rel = episode.workspace.relative(match.group(1))
            if not episode.workspace.path(rel).is_file():
                raise ToolError(f"inspect: {match.group(1)}: no such file")
            at = f"{rel}:{int(match.group(2))}"
        exprs = list(args.expr or [])
        if len(exprs) > 20 or any(len(e) > 500 or "\n" in e for e in exprs):
            raise ToolError("inspect: at most 20 expressions, each one line of at most 500 characters")
        data, output = self.probe(episode, {"mode": "inspect", "at": at, "expr": exprs, "depth": 2})
        command = shlex.join(episode.task.entrypoint)
        if data is None:
            return f"inspect: the program did not finish normally; its output ends with:\n{_tail(output)}"
        return _render(self.name, output, lambda: self._show(at, command, data))

    @staticmethod
    def _show(at: str, command: str, data: dict) -> str:
        if not data.get("reached"):
            what = "no exception escaped a project function" if at == "exception" else f"{at} was never reached"
            return f"{what} while running `{command}`."
        lines = [f"reached {data['where']}" + (f" — exception {data['exception']}" if "exception" in data else "")]
        lines.append("stack (innermost first):")
        lines += [f"  {frame}" for frame in data["stack"]]
        if data.get("skipped_frames"):
            lines.append(f"  [{data['skipped_frames']} frames outside the project not shown]")
        lines.append(f"locals: {_fields(data['locals'])}")
        for expr, value in data["values"].items():
            lines.append(f"{expr} = {value}")
        return "\n".join(lines)
