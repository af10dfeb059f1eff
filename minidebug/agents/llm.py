"""An agent backed by a chat model: OpenAI-compatible endpoints or Anthropic's Messages API.

Needs the `[llm]` extra (the `openai` SDK) or the `[anthropic]` extra. Tool calls are native function
calls, or text (`tool_format="text"`) for models without them, read by `ToolCall.parse_text`. The
system prompt is a template per strategy (`prompts/<strategy>.txt`, `$unlock_after` filled in), or a file
of the user's. The conversation is kept inside a context budget: the system prompt, the task and the
last turns always stay; older observations are shortened first, then dropped.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from string import Template
from typing import Any

from ..core.budget import Budget
from ..core.calls import ToolCall
from ..core.interface import Env
from ..core.textcalls import FORMATS_HELP
from ..core.trajectory import Exchange, ExchangeContext
from ..errors import MinidebugError, ToolError
from .clients import make_client

PROMPTS = Path(__file__).with_name("prompts")
KEEP_LAST_TURNS = 4
SHORTENED_CHARS = 300
MAX_NUDGES = 2
TOOL_FORMATS = ("native", "text")


class LLMAgent:
    """Chooses tool calls with a chat model.

    Args:
        model: the model name the endpoint serves.
        base_url: the endpoint (default: the SDK's); e.g. http://localhost:8000/v1 for vLLM.
        provider: "openai" (chat completions; any compatible server) or "anthropic" (Messages API).
        api_key_env: environment variable holding the key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY;
            local servers accept any value).
        tool_format: "native" function calling, or "text" tool calls parsed from the answer.
        prompt: a system prompt template file to use instead of the strategy's own.
        context_tokens: how many tokens of conversation to send at most.
        max_retries: retries, with backoff, on 429 and 5xx answers.
        temperature: sampling temperature (OpenAI-compatible endpoints; the Anthropic API takes none).
        max_tokens: most tokens in one answer (the Anthropic API needs it).
        timeout: seconds for one request.
    """

    def __init__(self, model: str, base_url: str | None = None, provider: str = "openai",
                 api_key_env: str | None = None, tool_format: str = "native", prompt: str | Path | None = None,
                 context_tokens: int = 32_000, max_retries: int = 5, temperature: float = 0.0,
                 max_tokens: int = 4096, timeout: float = 120.0):
        if not model:
            raise MinidebugError("the llm agent needs a model name (--model)")
        if tool_format not in TOOL_FORMATS:
            raise MinidebugError(f"unknown tool format {tool_format!r}; choose one of {', '.join(TOOL_FORMATS)}")
        if prompt is not None and not Path(prompt).is_file():
            raise MinidebugError(f"prompt template {prompt}: no such file")
        self.client = make_client(provider, model, base_url, api_key_env, max_retries, timeout, temperature,
                                  max_tokens)
        self.provider, self.tool_format, self.prompt = provider, tool_format, prompt
        self.context_tokens = context_tokens
        self.messages: list[dict[str, Any]] = []
        self._pending: deque[ToolCall] = deque()
        self._awaiting: str | None = None  # id of the tool call whose observation comes next
        self._recorded = 0  # messages already handed out in an exchange record
        self._exchange: Exchange | None = None
        self._counter = Budget(10**12, 10**12)

    def start(self, env: Env, observation: str, info: dict[str, Any]) -> None:
        self.env = env
        self.messages = [{"role": "system", "content": self.system_prompt(env)},
                         {"role": "user", "content": observation}]
        self._pending.clear()
        self._awaiting, self._recorded, self._exchange = None, 0, None

    def system_prompt(self, env: Env) -> str:
        """The strategy's template (or the user's file) with its fields filled in."""
        text = strategy_prompt(env.strategy, self.prompt)
        if self.tool_format == "text":
            signatures = "\n".join(f"- {signature(schema)}" for schema in env.tool_schemas("anthropic"))
            text += ("\n\nCall a tool by writing it in your answer; several calls run in order. "
                     f"To call a tool, {FORMATS_HELP}. The tools and their arguments (? = optional):\n"
                     f"{signatures}")
        return text

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        if self._awaiting is not None:
            if self.tool_format == "text":
                self.messages.append({"role": "user", "content": f"Observation:\n{observation}"})
            else:
                self.messages.append({"role": "tool", "tool_call_id": self._awaiting, "content": observation})
            self._awaiting = None
        if not self._pending:
            self._ask()
        call = self._pending.popleft()
        self._awaiting = call.id or "text"
        return call

    def take_exchange(self) -> Exchange | None:
        """What the model was sent and answered since the last exchange, for the step just returned by
        `act` (None when that step's call came from an earlier answer): the new messages in order (the
        model's answers among them), the usage as the endpoint reported it, and how the context was fitted."""
        exchange, self._exchange = self._exchange, None
        return exchange

    def fitted_messages(self) -> list[dict[str, Any]]:
        """The conversation as the next request sends it: shortened to `context_tokens`, older observations
        first, then old turns (the system prompt, the task and the last turns are kept whole). `messages`
        itself is left as it is."""
        messages = [dict(m) for m in self.messages]
        count = lambda m: self._counter.count(json.dumps(m)) + 4  # noqa: E731
        total = sum(count(m) for m in messages)
        protected = self._last_turn_start(messages)
        for index in range(2, protected):
            if total <= self.context_tokens:
                return messages
            message = messages[index]
            if message["role"] in ("tool", "user") and len(message["content"] or "") > SHORTENED_CHARS:
                before = count(message)
                message["content"] = message["content"][:SHORTENED_CHARS] + "\n[observation shortened]"
                total -= before - count(message)
        while total > self.context_tokens and protected > 2:
            end = 3  # drop the oldest turn: an assistant message and the answers that follow it
            while end < protected and messages[end]["role"] != "assistant":
                end += 1
            total -= sum(count(m) for m in messages[2:end])
            del messages[2:end]
            protected -= end - 2
        return messages

    # -- internals ------------------------------------------------------------------------
    def _ask(self) -> None:
        usage: list[dict[str, Any]] = []
        for _ in range(MAX_NUDGES + 1):
            native = self.tool_format == "native"
            schemas = self.env.tool_schemas(self.provider)
            fitted, history = self.fitted_messages(), len(self.messages)
            reply = self.client.complete(fitted, schemas if native else None)
            self.env.report_usage(reply.completion_tokens)
            usage.append(reply.usage)
            self.messages.append(reply.message)
            calls, problem = self._calls(reply.message, schemas)
            if calls:
                self._pending.extend(calls)
                self._exchange = Exchange(messages=self.messages[self._recorded:], usage=usage,
                                          context=ExchangeContext(messages_sent=len(fitted),
                                                                  messages_in_history=history))
                self._recorded = len(self.messages)
                return
            self.messages.append({"role": "user", "content": problem})
        raise MinidebugError(f"the model gave no tool call in {MAX_NUDGES + 1} answers in a row")

    def _calls(self, message: dict[str, Any], schemas: list[dict[str, Any]]) -> tuple[list[ToolCall], str]:
        """The tool calls of an answer, or the message that asks the model again."""
        if self.tool_format == "text":
            try:
                calls = ToolCall.parse_text(message.get("content") or "", schemas)
            except ToolError as exc:
                return [], f"error: {exc}"
            return [ToolCall(c.name, c.arguments, f"text_{i}") for i, c in enumerate(calls)], ""
        calls = []
        for tool_call in message.get("tool_calls", []):
            try:
                calls.append(ToolCall.from_openai(tool_call))
            except ToolError:  # malformed arguments: let the env answer with an error observation
                calls.append(ToolCall(tool_call["function"]["name"] or "", {}, tool_call["id"]))
        return calls, "Please respond by calling one of the tools."

    @staticmethod
    def _last_turn_start(messages: list[dict[str, Any]]) -> int:
        starts = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        return starts[-KEEP_LAST_TURNS] if len(starts) >= KEEP_LAST_TURNS else (starts[0] if starts else len(messages))


def strategy_prompt(strategy: Any, template: str | Path | None = None) -> str:
    """The system prompt `minidebug run` gives for a `Strategy`: its template (or the file `template`) filled in."""
    path = Path(template) if template else PROMPTS / f"{strategy.family}.txt"
    return Template(path.read_text(encoding="utf-8")).safe_substitute(
        unlock_after=strategy.unlock_after_edits or 0, strategy=strategy.name).strip()


def signature(schema: dict[str, Any]) -> str:
    """`name(arg, optional?)` of an Anthropic-shaped tool schema."""
    required = schema["input_schema"].get("required", [])
    names = [name if name in required else f"{name}?" for name in schema["input_schema"].get("properties", {})]
    return f"{schema['name']}({', '.join(names)})"
