"""Chat endpoints the llm agent talks to, behind one small interface.

The conversation is kept in OpenAI's chat shape (system, user, assistant with `tool_calls`, tool); each
client turns it into its provider's request and the answer back into an assistant message of that shape.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from ..errors import MinidebugError

PROVIDERS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass
class Reply:
    """One answer: the assistant message (OpenAI chat shape), completion tokens, and usage as reported."""

    message: dict[str, Any]
    completion_tokens: int = 0
    usage: dict[str, Any] = field(default_factory=dict)


def api_key(provider: str, base_url: str | None, api_key_env: str | None) -> str:
    variable = api_key_env or PROVIDERS[provider]
    key = os.environ.get(variable) or ("not-needed" if base_url else None)
    if key is None:
        raise MinidebugError(f"no API key: set {variable} (or give --base-url for a local server)")
    return key


def make_client(provider: str, model: str, base_url: str | None, api_key_env: str | None,
                max_retries: int, timeout: float, temperature: float, max_tokens: int):
    """The client for `provider` ("openai": any chat-completions endpoint; "anthropic": the Messages API).

    Raises:
        MinidebugError: unknown provider, missing SDK or missing API key.
    """
    if provider not in PROVIDERS:
        raise MinidebugError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    cls = OpenAIChat if provider == "openai" else AnthropicMessages
    return cls(model, base_url, api_key(provider, base_url, api_key_env), max_retries, timeout, temperature,
               max_tokens)


def _sdk(name: str, extra: str) -> Any:
    try:
        return import_module(name)
    except ImportError:
        raise MinidebugError(f"the {name} provider needs its SDK: pip install 'minidebug[{extra}]'") from None


@contextmanager
def _answered(sdk: Any) -> Iterator[None]:
    """The SDK's errors as MinidebugErrors that say what went wrong (its own retries have run by then)."""
    try:
        yield
    except sdk.AuthenticationError as exc:
        raise MinidebugError(f"the endpoint refused the API key (HTTP 401): {exc.message}") from None
    except sdk.APIStatusError as exc:
        raise MinidebugError(f"the endpoint answered HTTP {exc.status_code}: {exc.message}") from None
    except sdk.APIConnectionError as exc:
        raise MinidebugError(f"cannot reach the model endpoint: {exc}") from None


class OpenAIChat:
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, model, base_url, key, max_retries, timeout, temperature, max_tokens):
        self.sdk = _sdk("openai", "llm")
        self.model, self.temperature = model, temperature
        self.client = self.sdk.OpenAI(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Reply:
        options: dict[str, Any] = {"tools": tools} if tools else {}
        with _answered(self.sdk):
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature, **options)
        message = response.choices[0].message
        data: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            data["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                  for c in message.tool_calls]
        usage = response.usage.model_dump(exclude_none=True) if response.usage is not None else {}
        return Reply(data, usage.get("completion_tokens", 0) or 0, usage)


class AnthropicMessages:
    """Anthropic's Messages API (`pip install 'minidebug[anthropic]'`, SDK 2.x). No temperature is sent: API
    version 2026-10-21, which that SDK speaks, rejects every sampling parameter."""

    def __init__(self, model, base_url, key, max_retries, timeout, temperature, max_tokens):
        self.sdk = _sdk("anthropic", "anthropic")
        self.model, self.max_tokens = model, max_tokens
        self.client = self.sdk.Anthropic(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Reply:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        options: dict[str, Any] = {"tools": tools} if tools else {}
        with _answered(self.sdk):
            response = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=system, messages=to_anthropic(messages), **options)
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = [{"id": block.id, "type": "function",
                  "function": {"name": block.name, "arguments": json.dumps(block.input)}}
                 for block in response.content if block.type == "tool_use"]
        data: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            data["tool_calls"] = calls
        usage = response.usage.model_dump(exclude_none=True) if response.usage is not None else {}
        return Reply(data, usage.get("output_tokens", 0) or 0, usage)


def to_anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped turns as Anthropic messages: tool answers become `tool_result` blocks of a user turn,
    and turns of the same role are merged (the API wants them alternating)."""
    result: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if result and result[-1]["role"] == role:
            result[-1]["content"].extend(blocks)
        else:
            result.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "user":
            add("user", [{"type": "text", "text": content}])
        elif role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": content}])
        elif role == "assistant":
            blocks = [{"type": "text", "text": content}] if content else []
            for call in message.get("tool_calls", []):
                try:
                    arguments = json.loads(call["function"]["arguments"] or "{}")
                except ValueError:
                    arguments = {}
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                               "input": arguments if isinstance(arguments, dict) else {}})
            add("assistant", blocks or [{"type": "text", "text": "(no answer)"}])
    return result
