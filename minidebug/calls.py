"""The small data types that cross the boundary between an agent and an env."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import ToolError


@dataclass(frozen=True)
class ToolCall:
    """One action: a tool name and its arguments.

    Args:
        name: the tool to run, e.g. ``"view"``.
        arguments: the tool's keyword arguments.
        id: an optional id echoed from a model's function call.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None

    @classmethod
    def parse(cls, action: Any) -> ToolCall:
        """Build a ToolCall from a ToolCall, a dict or a JSON string.

        Raises:
            ToolError: the action is not a well-formed tool call.
        """
        if isinstance(action, ToolCall):
            return action
        if isinstance(action, (str, bytes)):
            try:
                action = json.loads(action)
            except (ValueError, RecursionError) as exc:
                raise ToolError(f"malformed JSON in tool call: {exc}") from None
        if not isinstance(action, Mapping):
            raise ToolError(
                "a tool call must be an object like "
                '{"name": "view", "arguments": {"path": "main.py"}}, '
                f"got {type(action).__name__}"
            )
        unknown = set(action) - {"name", "arguments", "id"}
        if unknown:
            raise ToolError(f"unknown keys in tool call: {sorted(map(str, unknown))}")
        name = action.get("name")
        if not isinstance(name, str) or not name:
            raise ToolError('a tool call needs a "name" string')
        arguments = action.get("arguments", {})
        if isinstance(arguments, str):  # OpenAI sends arguments as a JSON string
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError) as exc:
                raise ToolError(f"malformed JSON in arguments: {exc}") from None
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise ToolError('"arguments" must be an object')
        call_id = action.get("id")
        return cls(name=name, arguments=dict(arguments), id=call_id if isinstance(call_id, str) else None)

    def to_dict(self) -> dict[str, Any]:
        """The call as plain JSON-ready data."""
        data: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        if self.id is not None:
            data["id"] = self.id
        return data


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: the observation text and, for eval, the score."""

    text: str
    score: int | None = None
    max_score: int | None = None
    submitted: bool = False
