"""The env as agents, the episode loop and the framework adapters use it: one Protocol (DebugEnv is its one
implementation). What else DebugEnv has (its workspace, the tools' view of the episode) is for minidebug's own
privileged parts: the oracle, the checks, the adapters that lay the worktree out for another framework."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..tasks.task import Task
    from ..tools.base import Tool
    from ..tools.strategies import Strategy
    from .calls import ToolCall

Step = tuple[str, float, bool, bool, dict[str, Any]]  # observation, reward, terminated, truncated, info


class Env(Protocol):
    """A debugging episode in Gymnasium's vocabulary (see DebugEnv for each method's full contract)."""

    task: Task
    strategy: Strategy  # which tools the agent starts with, and when the others unlock
    tools: dict[str, Tool]  # every tool of the env by name (enabled or not)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start (or restart) the episode: the problem statement and tool list, and an info dict."""

    def step(self, action: ToolCall | dict | str) -> Step:
        """Run one tool call."""

    def close(self) -> None:
        """End every process of the episode and remove its files. Idempotent."""

    def tool_schemas(self, provider: str = "openai") -> list[dict[str, Any]]:
        """The enabled tools' JSON schemas for function calling."""

    def enable_tools(self, names: Sequence[str]) -> list[str]:
        """Enable tools by name; returns the ones newly enabled."""

    def report_usage(self, tokens: int) -> None:
        """Charge model tokens to the episode's budget."""

    def diff(self) -> str:
        """The agent's changes as a text patch: what eval scores."""
