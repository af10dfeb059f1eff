"""The small data types that cross the boundary between an agent and an env."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolError


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
        if action.get("type") == "function" and isinstance(action.get("function"), Mapping):
            return cls.from_openai(action)
        if action.get("type") == "tool_use":
            return cls.from_anthropic(action)
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

    @classmethod
    def from_openai(cls, tool_call: Any) -> ToolCall:
        """From an OpenAI chat-completions tool call: {"id", "type": "function", "function": {"name", "arguments"}}.

        Also accepts the SDK's objects (anything with `.model_dump()`).
        """
        data = tool_call.model_dump() if hasattr(tool_call, "model_dump") else tool_call
        function = data.get("function") or {}
        return cls.parse({"name": function.get("name"), "arguments": function.get("arguments") or {},
                          "id": data.get("id")})

    @classmethod
    def from_anthropic(cls, block: Any) -> ToolCall:
        """From an Anthropic messages `tool_use` content block: {"type": "tool_use", "id", "name", "input"}."""
        data = block.model_dump() if hasattr(block, "model_dump") else block
        return cls.parse({"name": data.get("name"), "arguments": data.get("input") or {}, "id": data.get("id")})

    @classmethod
    def parse_text(cls, text: str, schemas: Any = None) -> list[ToolCall]:
        """The tool calls written in a model's text answer, in order, for models without native tool calling.

        Reads `<tool_call>{json}</tool_call>`, `<function=name><parameter=arg>value</parameter></function>`
        and fenced JSON blocks (see minidebug.core.textcalls).

        Args:
            text: the model's raw answer.
            schemas: optional tool schemas (e.g. `env.tool_schemas()`), to type `<parameter=…>` values.

        Raises:
            ToolError: no tool call in the text, or a malformed one (the message shows the accepted shapes).
        """
        from .textcalls import parse_text

        return [cls.parse(call) for call in parse_text(text, schemas)]
