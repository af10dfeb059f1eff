"""Agents: anything that follows the `Agent` protocol (`start`, `act(observation, info) -> ToolCall` and
`take_exchange`, every method the runner calls). The oracle (applies the gold patch), the LLM agent with its clients
(OpenAI-compatible and Anthropic), and the replay agent; a registry of names to import strings. Agents use
`core`'s data types (tool calls, budgets, trajectories) and never an env's internals."""

from __future__ import annotations

import difflib
from importlib import import_module
from typing import Any, Protocol

from ..core.calls import ToolCall
from ..core.interface import Env
from ..core.trajectory import Exchange
from ..errors import UsageError

AGENTS: dict[str, str] = {
    "oracle": "minidebug.agents.oracle:OracleAgent",
    "llm": "minidebug.agents.llm:LLMAgent",
    "replay": "minidebug.agents.replay:ReplayAgent",
}


class Agent(Protocol):
    """The whole interface an agent needs: every method the runner calls, each one required. A host
    framework never has to subclass anything of ours."""

    def start(self, env: Env, observation: str, info: dict[str, Any]) -> None:
        """Called after reset with the first observation."""

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        """The next action, given the last observation."""

    def take_exchange(self) -> Exchange | None:
        """What the model was sent and answered for the action `act` just returned, recorded with its step;
        None for an agent without a model, or when that action came from an earlier answer."""


def load_agent(name: str) -> type[Agent]:
    """The agent class registered under name.

    Raises:
        ValueError: unknown name (the closest is suggested).
    """
    if name not in AGENTS:
        close = difflib.get_close_matches(name, list(AGENTS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown agent {name!r}.{hint} Available: {', '.join(AGENTS)}")
    module, _, attr = AGENTS[name].partition(":")
    return getattr(import_module(module), attr)
