"""What an agent can call: one module per tool group (files, edit, eval/submit, bash, pdb, trace/inspect),
the `Tool` base class with its hooks declared as no-op methods, the registry of names, function-calling
schemas, the strategies that say which tools an episode starts with, and the toolbox that holds an
episode's tool set. A tool sees its episode only through the `Episode` protocol; tools import the rooms
below them (scoring, runner, workspace, store, tasks, sandbox), never `core`.
"""
from __future__ import annotations

import difflib
from importlib import import_module

from ..errors import ToolError
from .base import Tool

TOOLS: dict[str, str] = {
    "view": "minidebug.tools.files:View",
    "listdir": "minidebug.tools.files:Listdir",
    "grep": "minidebug.tools.files:Grep",
    "edit": "minidebug.tools.edit:Edit",
    "eval": "minidebug.tools.evaluation:Eval",
    "submit": "minidebug.tools.evaluation:Submit",
    "bash": "minidebug.tools.bash:Bash",
    "pdb": "minidebug.tools.pdb:Pdb",
    "trace": "minidebug.tools.probe:Trace",
    "inspect": "minidebug.tools.probe:Inspect",
}

DEFAULT_TOOLS = ("pdb", "trace", "inspect", "view", "listdir", "grep", "edit", "eval", "submit")


def load_tool(name: str) -> Tool:
    """Instantiate a registered tool.

    Raises:
        ToolError: no tool of that name (the closest names are suggested).
    """
    if name not in TOOLS:
        raise ToolError(unknown_tool_message(name, TOOLS))
    module, _, attr = TOOLS[name].partition(":")
    return getattr(import_module(module), attr)()


def unknown_tool_message(name: str, available) -> str:
    close = difflib.get_close_matches(str(name), list(available), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"unknown tool {str(name)[:100]!r}.{hint} Available tools: {', '.join(available)}."
