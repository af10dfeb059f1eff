"""trace and inspect: one run of the entrypoint under a tracer, instead of a dozen pdb steps."""

from __future__ import annotations

import json
import re
import shlex
from typing import Optional

from pydantic import Field

from ..errors import ToolError
from .base import Arguments, Episode, Tool
from .pdb import pdb_arguments

_FILE_RANGE = re.compile(r"(.+\.py):(\d+)-(\d+)")
_FILE_LINE = re.compile(r"(.+\.py):(\d+)")


def run_probe(episode: Episode, config: dict) -> tuple[dict | None, str]:
    """Run the entrypoint once under the probe driver; returns its JSON (None if it wrote none) and output."""
    workspace = episode.workspace
    argv = pdb_arguments(episode.task.entrypoint)
    out = workspace.tmp / "minidebug-probe.json"
    out.unlink(missing_ok=True)
    env = workspace.environ(workspace.drivers)
    env["MINIDEBUG_PROBE"] = json.dumps({**config, "root": str(workspace.root), "out": str(out)})
    timeout = episode.limits.eval_timeout
    _, output = episode.confinement.run([str(workspace.venv / "bin" / "python"), "-m", "minidebug_probe", *argv],
                                        cwd=workspace.root, env=env, timeout=timeout,
                                        writable=workspace.writable_dirs)
    try:
        return json.loads(out.read_text(encoding="utf-8")), output
    except (OSError, ValueError):
        return None, output
    finally:
        out.unlink(missing_ok=True)


def _tail(output: str, lines: int = 15) -> str:
    kept = output.rstrip().splitlines()[-lines:]
    return "\n".join(kept)


def _fields(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "(none)"


class Trace(Tool):
    name = "trace"
    description = (
        "Run the program once and record every call of one function: where it was called from, its arguments, "
        "what it returned or raised, and its locals at return. target: a function name, Class.method, or "
        "file.py:start-end (functions defined in those lines). Prefer this to stepping with pdb when you want "
        "to see how a function behaves across many calls (recursion, loops, generators) in one step."
    )

    class Args(Arguments):
        target: str = Field(description="function name, Class.method, or file.py:start-end")
        max_calls: Optional[int] = Field(None, description="calls to show (default 20); later ones are only counted")
        depth: Optional[int] = Field(None, description="how deep to render nested values (default 2)")

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
        data, output = run_probe(episode, {"mode": "trace", "target": target, "max_calls": max_calls, "depth": depth})
        command = shlex.join(episode.task.entrypoint)
        if data is None:
            return f"trace: the program did not finish normally; its output ends with:\n{_tail(output)}"
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


class Inspect(Tool):
    name = "inspect"
    description = (
        "Run the program to the first time a line is reached (at='file.py:line'), or to the first exception "
        "that escapes a function of the project (at='exception'), and show the call stack, the local "
        "variables there and the value of each expression in expr. One call gives what takes pdb a "
        "breakpoint, a continue and several prints; it leaves no session and keeps your breakpoints."
    )

    class Args(Arguments):
        at: str = Field(description="'file.py:line' or 'exception'")
        expr: Optional[list[str]] = Field(None, description="expressions to evaluate there")

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
        data, output = run_probe(episode, {"mode": "inspect", "at": at, "expr": exprs, "depth": 2})
        command = shlex.join(episode.task.entrypoint)
        if data is None:
            return f"inspect: the program did not finish normally; its output ends with:\n{_tail(output)}"
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
