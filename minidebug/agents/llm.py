"""An agent backed by any OpenAI-compatible chat-completions endpoint, with native tool calling.

Needs the `[llm]` extra (the `openai` SDK). Works with OpenAI, vLLM, Ollama and llama.cpp servers:
point `base_url` at them. The conversation is kept inside a context budget: the system prompt, the
task and the last turns always stay; older observations are shortened first, then dropped.
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

from ..budget import Budget
from ..calls import ToolCall
from ..errors import MinidebugError

SYSTEM_PROMPT = (
    "You are debugging a Python project. Use the tools to find and fix the bug the user reports: "
    "set breakpoints and inspect state with pdb, read and edit files, and run eval to check the tests. "
    "Call exactly one tool per turn. Call submit when every test passes."
)
KEEP_LAST_TURNS = 4
SHORTENED_CHARS = 300
MAX_NUDGES = 2


class LLMAgent:
    """Chooses tool calls with a chat model.

    Args:
        model: the model name the endpoint serves.
        base_url: the endpoint (default: the SDK's, i.e. OpenAI); e.g. http://localhost:8000/v1 for vLLM.
        api_key_env: environment variable holding the key (local servers accept any value).
        context_tokens: how many tokens of conversation to send at most.
        max_retries: retries, with backoff, on 429 and 5xx answers.
        temperature: sampling temperature.
        timeout: seconds for one request.
    """

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 context_tokens: int = 32_000, max_retries: int = 5, temperature: float = 0.0,
                 timeout: float = 120.0):
        try:
            from openai import OpenAI
        except ImportError:
            raise MinidebugError("the llm agent needs the openai SDK: pip install 'minidebug[llm]'") from None
        if not model:
            raise MinidebugError("the llm agent needs a model name (--model)")
        self.model = model
        self.temperature = temperature
        self.context_tokens = context_tokens
        api_key = os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        if api_key is None:
            raise MinidebugError(f"no API key: set {api_key_env} (or give --base-url for a local server)")
        self.client = OpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout)
        self.messages: list[dict[str, Any]] = []
        self._pending: deque[ToolCall] = deque()
        self._awaiting: str | None = None  # id of the tool call whose observation comes next
        self._counter = Budget(10**12, 10**12)

    def start(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        self.env = env
        self.tools = env.tool_schemas("openai")
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": observation}]
        self._pending.clear()
        self._awaiting = None

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        if self._awaiting is not None:
            self.messages.append({"role": "tool", "tool_call_id": self._awaiting, "content": observation})
            self._awaiting = None
        if not self._pending:
            self._ask()
        call = self._pending.popleft()
        self._awaiting = call.id
        return call

    # -- internals ------------------------------------------------------------------------
    def _ask(self) -> None:
        from openai import APIConnectionError, APIStatusError, AuthenticationError

        for _ in range(MAX_NUDGES + 1):
            try:
                response = self.client.chat.completions.create(
                    model=self.model, messages=self._fitted(), tools=self.tools, temperature=self.temperature)
            except AuthenticationError as exc:
                raise MinidebugError(f"the endpoint refused the API key (HTTP 401): {exc.message}") from None
            except APIStatusError as exc:
                raise MinidebugError(f"the endpoint answered HTTP {exc.status_code}: {exc.message}") from None
            except APIConnectionError as exc:
                raise MinidebugError(f"cannot reach the model endpoint: {exc}") from None
            if response.usage is not None:
                self.env.report_usage(response.usage.completion_tokens or 0)
            message = response.choices[0].message
            tool_calls = list(message.tool_calls or [])
            self.messages.append(_assistant_message(message.content, tool_calls))
            if tool_calls:
                for index, tool_call in enumerate(tool_calls):
                    try:
                        call = ToolCall.from_openai(tool_call)
                    except Exception:  # malformed arguments: let the env answer with an error observation
                        call = ToolCall(tool_call.function.name or "", {}, tool_call.id)
                    if index > 0:  # only one call per turn is run; answer the others at once
                        self.messages.append({"role": "tool", "tool_call_id": tool_call.id,
                                              "content": "error: call one tool per turn; this call was not run"})
                        continue
                    self._pending.append(call)
                return
            self.messages.append({"role": "user", "content": "Please respond by calling one of the tools."})
        raise MinidebugError(f"the model gave no tool call in {MAX_NUDGES + 1} answers in a row")

    def _fitted(self) -> list[dict[str, Any]]:
        """The conversation, shortened to the context budget: older observations first, then old turns."""
        messages = [dict(m) for m in self.messages]
        count = lambda m: self._counter.count(json.dumps(m)) + 4  # noqa: E731
        total = sum(count(m) for m in messages)
        protected = self._last_turn_start(messages)
        for index in range(2, protected):
            if total <= self.context_tokens:
                return messages
            message = messages[index]
            if message["role"] == "tool" and len(message["content"]) > SHORTENED_CHARS:
                before = count(message)
                message["content"] = message["content"][:SHORTENED_CHARS] + "\n[observation shortened]"
                total -= before - count(message)
        while total > self.context_tokens and protected > 2:
            end = 3  # drop the oldest turn: an assistant message and the tool answers that follow it
            while end < protected and messages[end]["role"] == "tool":
                end += 1
            total -= sum(count(m) for m in messages[2:end])
            del messages[2:end]
            protected -= end - 2
        return messages

    @staticmethod
    def _last_turn_start(messages: list[dict[str, Any]]) -> int:
        starts = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        return starts[-KEEP_LAST_TURNS] if len(starts) >= KEEP_LAST_TURNS else (starts[0] if starts else len(messages))


def _assistant_message(content: str | None, tool_calls: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in tool_calls
        ]
    return message
