"""Function-calling schemas of the tools, in OpenAI's (strict) and Anthropic's shapes."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from .base import Tool

PROVIDERS = ("openai", "anthropic")


def _properties(tool: Tool) -> tuple[dict[str, Any], list[str]]:
    schema = tool.json_schema()
    properties, required = {}, list(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        options = prop.get("anyOf", [prop])
        types = [option["type"] for option in options if "type" in option]
        entry: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
        for option in options:
            if "items" in option:
                entry["items"] = {"type": option["items"]["type"]}
        if "description" in prop:
            entry["description"] = prop["description"]
        properties[name] = entry
    return properties, required


def tool_schemas(tools: list[Tool], provider: str) -> list[dict[str, Any]]:
    """Schemas for `tools` in the provider's function-calling format.

    Raises:
        ValueError: unknown provider.
    """
    if provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    schemas = []
    for tool in tools:
        properties, required = _properties(tool)
        if provider == "openai":
            for name, entry in properties.items():  # strict mode: every property required, optional ones nullable
                if name not in required and "null" not in entry["type"]:
                    entry["type"] = ([entry["type"], "null"] if isinstance(entry["type"], str)
                                     else entry["type"] + ["null"])
            parameters = {"type": "object", "properties": properties, "required": list(properties),
                          "additionalProperties": False}
            schemas.append({"type": "function", "function": {
                "name": tool.name, "description": tool.description, "parameters": parameters, "strict": True}})
        else:
            for entry in properties.values():
                if isinstance(entry["type"], list):
                    entry["type"] = [t for t in entry["type"] if t != "null"][0]
            schemas.append({"name": tool.name, "description": tool.description, "input_schema": {
                "type": "object", "properties": properties, "required": required}})
    return schemas
