"""The tools an episode offers: those its strategy starts with, more once they are unlocked (by the strategy
after enough edits, or by a caller), and back to the start at each reset."""

from __future__ import annotations

from ..errors import UsageError
from . import TOOLS, load_tool, unknown_tool_message
from .base import Tool
from .strategies import Strategy


class Toolbox:
    """Owns the episode's `tools` dict (name -> Tool); the dict object stays the same for the episode's life.

    Args:
        configured: the tools the env was made with.
        strategy: which of them the episode starts with, and when the debugging tools arrive.
    """

    def __init__(self, configured: tuple[str, ...], strategy: Strategy):
        self.configured, self.strategy = configured, strategy
        self.tools: dict[str, Tool] = {name: load_tool(name) for name in strategy.start_tools(configured)}
        self._news: list[str] = []
        self._edits = 0

    def enable(self, names: list[str] | tuple[str, ...]) -> list[str]:
        """Add registered tools; returns those that were new.

        Raises:
            ValueError: an unknown tool name (the closest is suggested).
        """
        for name in names:
            if name not in TOOLS:
                raise UsageError(unknown_tool_message(name, TOOLS))
        added = [name for name in dict.fromkeys(names) if name not in self.tools]
        for name in added:
            self.tools[name] = load_tool(name)
        self._news += added
        return added

    def edit_succeeded(self) -> None:
        """Count an edit; the strategy's N-th unlocks the debugging tools."""
        self._edits += 1
        if self._edits == self.strategy.unlock_after_edits:
            self.enable(self.strategy.unlocked_tools(self.configured))

    def take_news(self) -> tuple[list[str], str]:
        """The tools enabled since the last call, and the note that tells the agent about them ('' if none)."""
        names, self._news = self._news, []
        if not names:
            return [], ""
        lines = "\n".join(f"- {name}({', '.join(self.tools[name].Args.model_fields)}): {self.tools[name].description}"
                          for name in names)
        return names, f"[new tools available from now on]\n{lines}"

    def restore(self) -> None:
        """Back to the strategy's starting tools: those enabled during the episode are closed and dropped."""
        start = self.strategy.start_tools(self.configured)
        for name in [name for name in self.tools if name not in start]:
            self.tools.pop(name).close()
        self._news, self._edits = [], 0
