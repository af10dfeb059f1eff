"""Tool calls written as text, for models without native tool calling.

Three common shapes are read, in the order they appear in the answer:

- ``<tool_call>{"name": "view", "arguments": {"path": "a.py"}}</tool_call>`` (the closing tag may be
  missing at the end of the answer, where a stop sequence cut it);
- ``<function=view><parameter=path>a.py</parameter></function>``, bare or inside ``<tool_call>``;
- a fenced block (```` ```json ````, ```` ```tool_call ```` or a bare fence) holding such an object or a list of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ToolError

FORMATS_HELP = ('write a tool call as <tool_call>{"name": "view", "arguments": {"path": "main.py"}}</tool_call>, '
                "as <function=view><parameter=path>main.py</parameter></function>, "
                'or as a ```json fenced block holding {"name": ..., "arguments": {...}}')

_BLOCKS = re.compile(
    r"<tool_call>(?P<tagged>.*?)(?:</tool_call>|\Z)"
    r"|<function=(?P<function>[^>\s]+)>(?P<body>.*?)</function>"
    r"|```[ \t]*(?P<lang>json|tool_call|tool|)[ \t]*\n(?P<fenced>.*?)```", re.S)
_FUNCTION = re.compile(r"<function=(?P<function>[^>\s]+)>(?P<body>.*?)</function>", re.S)
_PARAMETER = re.compile(r"<parameter=(?P<name>[^>\s]+)>(?P<value>.*?)</parameter>", re.S)
_INTEGER = re.compile(r"-?[0-9]+")


def parse_text(text: str, schemas: Iterable[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The tool calls in a model's text answer, as {"name", "arguments"} dicts, in order.

    Args:
        text: the raw answer.
        schemas: the tools' schemas (OpenAI or Anthropic shape); with them, `<parameter=…>` values are
            turned into the declared types. Without, a value made of digits becomes an integer.

    Raises:
        ToolError: the text holds no tool call, or a malformed one.
    """
    if not isinstance(text, str):
        raise ToolError(f"a text tool call must be a string, got {type(text).__name__}")
    types = _declared_types(schemas or ())
    calls: list[dict[str, Any]] = []
    fenced_errors: list[str] = []
    for match in _BLOCKS.finditer(text):
        if match.group("tagged") is not None:
            tagged = match.group("tagged").strip()
            functions = list(_FUNCTION.finditer(tagged))
            if functions:
                calls += [_function_call(m, types) for m in functions]
            else:
                calls += _json_calls(tagged, "<tool_call>")
        elif match.group("function") is not None:
            calls.append(_function_call(match, types))
        else:
            try:
                calls += _json_calls(match.group("fenced").strip(), "the fenced block")
            except ToolError as exc:  # a fence may hold an example rather than a call
                fenced_errors.append(str(exc))
    if not calls:
        raise ToolError(fenced_errors[0] if fenced_errors else f"no tool call found in the answer; {FORMATS_HELP}")
    return calls


def _json_calls(source: str, where: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(source)
    except (ValueError, RecursionError) as exc:
        raise ToolError(f"malformed JSON in {where}: {exc}; {FORMATS_HELP}") from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ToolError(f"{where} holds an empty list; {FORMATS_HELP}")
    return [_json_call(item, where) for item in items]


def _json_call(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise ToolError(f"{where} must hold an object, got {type(item).__name__}; {FORMATS_HELP}")
    if isinstance(item.get("function"), Mapping):  # {"type": "function", "function": {"name", "arguments"}}
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ToolError(f'{where} needs a "name" string; {FORMATS_HELP}')
    arguments: Any = next((item[key] for key in ("arguments", "parameters", "input") if key in item), {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise ToolError(f"malformed JSON in the arguments of {name!r}: {exc}") from None
    if not isinstance(arguments, Mapping):
        raise ToolError(f'the "arguments" of {name!r} must be an object')
    return {"name": name, "arguments": dict(arguments)}


def _function_call(match: re.Match, types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    name = match.group("function")
    declared = types.get(name, {})
    arguments: dict[str, Any] = {}
    for parameter in _PARAMETER.finditer(match.group("body")):
        key, value = parameter.group("name"), _strip_one_newline(parameter.group("value"))
        arguments[key] = _typed(value, declared.get(key))
    return {"name": name, "arguments": arguments}


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def _typed(value: str, declared: Any) -> Any:
    kinds = set(declared if isinstance(declared, list) else [declared]) - {None}
    if not kinds:
        return int(value) if _INTEGER.fullmatch(value.strip()) else value
    if "string" in kinds:
        return value
    if value.strip() in ("null", "None") and "null" in kinds:
        return None
    if kinds & {"integer", "number"} and _INTEGER.fullmatch(value.strip()):
        return int(value)
    if kinds & {"number", "boolean", "array", "object"}:
        try:
            return json.loads(value)
        except ValueError:
            return value  # the tool's own validation names the problem
    return value


def _declared_types(schemas: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """{tool: {argument: JSON type or list of types}} from OpenAI- or Anthropic-shaped schemas."""
    types: dict[str, dict[str, Any]] = {}
    for schema in schemas:
        function = schema.get("function", schema)
        parameters = function.get("parameters") or function.get("input_schema") or {}
        types[function.get("name", "")] = {key: prop.get("type")
                                          for key, prop in parameters.get("properties", {}).items()}
    return types
