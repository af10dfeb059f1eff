"""Which debugging tools an episode starts with, and when more are unlocked.

The comparison the strategies make possible: an agent that can only rewrite code, one that has the
debugger from the start, and one that gets it after a few edits.

- ``rewrite``: no ``pdb``, ``trace`` or ``inspect``.
- ``debug``: every tool from the start (the default).
- ``debug-after-N`` (also written ``debug-after:N``): the debugging tools are unlocked by the env once the
  agent's N-th edit succeeds; that edit's observation names them and `tool_schemas()` includes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError

DEBUG_TOOLS = ("pdb", "trace", "inspect")
_AFTER = re.compile(r"debug-after[:-]([0-9]+)")


@dataclass(frozen=True)
class Strategy:
    """A strategy: its canonical name, and after how many edits the debugging tools arrive (None: never
    withheld, 0 with `withheld`: never given)."""

    name: str
    withheld: bool
    unlock_after_edits: int | None = None

    @property
    def family(self) -> str:
        """"rewrite", "debug" or "debug-after": the prompt template's name."""
        return "debug-after" if self.unlock_after_edits is not None else self.name

    def start_tools(self, tools: tuple[str, ...]) -> tuple[str, ...]:
        """The tools an episode starts with, out of those the env offers."""
        return tuple(t for t in tools if t not in DEBUG_TOOLS) if self.withheld else tools

    def unlocked_tools(self, tools: tuple[str, ...]) -> tuple[str, ...]:
        """The tools the unlock brings, out of those the env offers (all of them if it offers none)."""
        return tuple(t for t in tools if t in DEBUG_TOOLS) or DEBUG_TOOLS


def parse_strategy(name: str) -> Strategy:
    """The strategy called `name`.

    Raises:
        ValueError: not one of rewrite, debug, debug-after-N.
    """
    text = str(name).strip()
    if text == "rewrite":
        return Strategy("rewrite", withheld=True)
    if text == "debug":
        return Strategy("debug", withheld=False)
    match = _AFTER.fullmatch(text)
    if match:
        edits = int(match.group(1))
        if edits < 1:
            raise UsageError("debug-after-N needs N >= 1 (debug-after-0 is the 'debug' strategy)")
        return Strategy(f"debug-after-{edits}", withheld=True, unlock_after_edits=edits)
    raise UsageError(f"unknown strategy {text[:60]!r}; choose rewrite, debug or debug-after-N (e.g. debug-after-3)")
