"""`minidebug play TASK`: a person types tool calls at a prompt and reads what an agent would read."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from ..core.calls import ToolCall
from ..core.interface import Env
from ..errors import ToolError

PROMPT = "minidebug> "
USAGE = {
    "pdb": "pdb COMMAND...            e.g. pdb b tree.py:14   pdb c   pdb p total",
    "trace": "trace TARGET [MAX_CALLS [DEPTH]]   e.g. trace sum_tree   trace Node.add 5",
    "inspect": "inspect AT [EXPR...]     e.g. inspect tree.py:14 node.value 'len(node.children)'",
    "view": "view PATH [START [END]]",
    "edit": "edit PATH START END      then the new lines, ended by a line with a single '.'",
    "listdir": "listdir [PATH [DEPTH]]",
    "grep": "grep PATTERN [PATH]",
    "eval": "eval",
    "submit": "submit",
    "bash": "bash COMMAND...",
}


def parse_line(line: str, read_more: Callable[[], str]) -> ToolCall:
    """Turn a typed line (or a JSON tool call) into a ToolCall; `read_more` reads edit bodies.

    Raises:
        ValueError: the line cannot be understood (the message says how to write it).
    """
    line = line.strip()
    if line.startswith("{"):
        return ToolCall.parse(line)
    name, _, rest = line.partition(" ")
    rest = rest.strip()
    if name in ("pdb", "bash"):
        return ToolCall(name, {"command": rest})
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise ValueError(f"cannot split the arguments: {exc}") from None
    args: dict[str, Any]
    if name == "view":
        args = dict(zip(("path", "start", "end"), _typed(words, 1)))
    elif name == "listdir":
        args = dict(zip(("path", "depth"), _typed(words, 1)))
    elif name == "trace":
        args = dict(zip(("target", "max_calls", "depth"), _typed(words, 1)))
    elif name == "inspect":
        if not words:
            raise ValueError(f"usage: {USAGE['inspect']}")
        args = {"at": words[0], "expr": words[1:]} if len(words) > 1 else {"at": words[0]}
    elif name == "grep":
        args = dict(zip(("pattern", "path"), words))
    elif name == "edit":
        if len(words) != 3:
            raise ValueError(f"usage: {USAGE['edit']}")
        path, start, end = _typed(words, 1)
        lines = []
        while (more := read_more()) != ".":
            lines.append(more)
        args = {"path": path, "start": start, "end": end, "new_code": "".join(line + "\n" for line in lines)}
    else:
        args = {}
        if words:
            if name not in USAGE:
                raise ValueError(f"unknown command {name!r}; the commands: {', '.join(sorted(USAGE))}")
            raise ValueError(f"usage: {USAGE[name]}")
    return ToolCall(name, args)


def _typed(words: list[str], first_int: int) -> list[Any]:
    out: list[Any] = words[:first_int]
    for word in words[first_int:]:
        try:
            out.append(int(word))
        except ValueError:
            raise ValueError(f"expected a line number, got {word!r}") from None
    return out


def play(env: Env, input_fn: Callable[[str], str] = input, print_fn: Callable[..., None] = print) -> float:
    """Run an interactive episode; returns the last reward."""
    try:
        import readline  # noqa: F401  (history and line editing for input())
    except ImportError:
        pass
    observation, info = env.reset(seed=0)
    print_fn(observation)
    print_fn("\nType 'help' for the commands, 'quit' to leave.")
    reward, done = 0.0, False
    while not done:
        try:
            line = input_fn(PROMPT)
        except (EOFError, KeyboardInterrupt):
            print_fn()
            break
        if not line.strip():
            continue
        if line.strip() in ("quit", "exit"):
            break
        if line.strip() == "help":
            print_fn("\n".join(USAGE[name] for name in env.tools if name in USAGE))
            print_fn('or a JSON tool call: {"name": "view", "arguments": {"path": "x.py"}}')
            continue
        try:
            call = parse_line(line, lambda: input_fn("... "))
        except (ValueError, EOFError, ToolError) as exc:
            print_fn(f"error: {exc}")
            continue
        observation, reward, terminated, truncated, info = env.step(call)
        print_fn(observation)
        if terminated or truncated:
            print_fn(f"[episode over: reward {reward:.2f}, {'terminated' if terminated else info.get('truncated_by')}]")
            done = True
    return reward
