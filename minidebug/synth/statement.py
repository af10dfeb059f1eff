"""The problem statement of a synthesized task, written as a user's bug report from the failing tests alone.

Without a model it says which tests fail and with which exception or assertion message (a few of them, and how
many more), never the changed code, its file or the kind of change: a message that quotes a changed line (as an
exception's text sometimes does) is reduced to its exception type. With one (`--model`, the llm agent's chat
client), the model is shown the failing tests' source and their symptoms, never the change, and writes an issue
in a user's words; an answer that quotes a changed line, names the changed file or the modifier is asked for
again, and after a second such answer the statement is the one written without a model.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..agents.clients import make_client
from ..errors import MinidebugError
from .validate import TestOutcome

SHOWN = 5  # failing tests listed by name; the rest are counted

_OPENINGS = (
    "Running the test suite gives {count} failing test{s} that used to pass:",
    "After the latest change, {count} test{s} of the suite fail{verb}:",
    "I get {count} test failure{s} when I run the tests:",
)
_CLOSINGS = (
    "The tests describe the intended behaviour; the library code is wrong. Find the cause and fix it.",
    "The tests are correct and must not be changed. Please find and fix the bug in the code under test.",
    "Nothing in the tests needs to change: the bug is in the project's code. Please track it down and fix it.",
)


def problem_statement(failing: dict[str, TestOutcome], forbidden: Sequence[str], key: str) -> str:
    """A bug report for the tests in `failing`; `forbidden` holds the texts it must not quote (the changed
    lines, before and after), `key` picks the wording (the same key, the same text)."""
    pick = int(hashlib.sha256(key.encode()).hexdigest(), 16)
    count = len(failing)
    lines = [_OPENINGS[pick % len(_OPENINGS)].format(count=count, s="" if count == 1 else "s",
                                                      verb="s" if count == 1 else ""), ""]
    for test in sorted(failing)[:SHOWN]:
        lines.append(f"- `{test}`: {_symptom(failing[test], forbidden)}")
    if count > SHOWN:
        lines.append(f"- and {count - SHOWN} more")
    lines += ["", _CLOSINGS[(pick // 7) % len(_CLOSINGS)]]
    return "\n".join(lines)


def _symptom(result: TestOutcome, forbidden: Sequence[str]) -> str:
    kind = result.type or "an error"
    where = "" if result.outcome == "failed" else " (while setting the test up or tearing it down)"
    message = " ".join(result.message.split())
    if not message or _quotes(message, forbidden):
        return f"fails with {kind}{where}"
    if len(message) > 160:
        message = message[:157] + "..."
    return f"fails with {kind}{where}: {message}"


def _quotes(message: str, forbidden: Sequence[str]) -> bool:
    squeezed = "".join(message.split())
    for text in forbidden:
        snippet = "".join(text.split())
        if len(snippet) >= 4 and snippet in squeezed:
            return True
    return False


# -- written by a model --------------------------------------------------------------------------------------

ATTEMPTS = 2  # answers asked for before the statement written without a model is used
SOURCES = 3  # failing tests whose source the model is shown
SOURCE_LINES = 60  # at most, of one test's source

# Changed lines that say nothing alone (the `else:` of branches swapped): a code example of the model's may hold
# one without having seen the change.
BARE = {"else:", "try:", "finally:", "pass", "continue", "break", "return", "returnNone", ")", "]", "}", "):"}

SYSTEM = (
    "You write bug reports as a user of a Python project would file them on its issue tracker. You are given "
    "tests of the project that fail now and used to pass, with what they fail with. Write the issue in the "
    "user's own words: what they did (as the tests do it), what they expected and what happened instead, with a "
    "short code example if it helps. Do not guess where in the project's code the cause is, do not propose a "
    "fix, and do not mention the tests or the test suite. Plain Markdown, at most 250 words, no title line."
)


@dataclass(frozen=True)
class StatementModel:
    """The chat model that writes problem statements: any OpenAI-compatible endpoint, or Anthropic's Messages
    API, through the llm agent's client (`minidebug.agents.clients`)."""

    model: str
    base_url: str | None = None
    provider: str = "openai"
    api_key_env: str | None = None
    timeout: float = 120.0
    max_retries: int = 3

    def client(self) -> Any:
        """The client (raises MinidebugError: unknown provider, missing SDK or API key)."""
        return make_client(self.provider, self.model, self.base_url, self.api_key_env, self.max_retries,
                           self.timeout, 0.0, 1024)


@dataclass(frozen=True)
class Written:
    """A problem statement and who wrote it: "model", or "template" with why the model's was not used."""

    text: str
    by: str


def model_statement(client: Any, failing: dict[str, TestOutcome], forbidden: Sequence[str], banned: Sequence[str],
                    key: str, sources: dict[str, str]) -> Written:
    """An issue about the tests in `failing`, written by the model behind `client` (see `StatementModel`):
    `forbidden` holds the changed lines (never quoted), `banned` the words it must not say (the changed file,
    the modifier), `sources` the failing tests' source by node id. The statement written without a model
    (`problem_statement`) when the model's answers quote, name or fail.
    """
    prompt = _model_prompt(failing, forbidden, sources)
    why = ""
    for _ in range(ATTEMPTS):
        try:
            reply = client.complete([{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
                                    None)
        except MinidebugError as exc:
            why = f"the model did not answer: {exc}"
            break
        text = (reply.message.get("content") or "").strip()
        why = _refused(text, forbidden, banned)
        if not why:
            return Written(text + "\n\n" + _failing_list(failing), "model")
    return Written(problem_statement(failing, forbidden, key), f"template ({why})")


def source_of_test(module: str, node_id: str) -> str:
    """The source of the test function `node_id` names (its class's method, parameters dropped) in the test
    module's text `module`, or "" when it is not found there."""
    names = [re.sub(r"\[.*$", "", part) for part in node_id.split("::")[1:]]
    try:
        body: list[ast.stmt] = ast.parse(module).body
    except SyntaxError:
        return ""
    found: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
    for name in names:
        found = next((node for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                  ast.ClassDef)) and node.name == name), None)
        if found is None:
            return ""
        body = found.body if isinstance(found, ast.ClassDef) else []
    if found is None or isinstance(found, ast.ClassDef):
        return ""
    lines = module.splitlines()
    first = min([found.lineno] + [d.lineno for d in found.decorator_list])
    return "\n".join(lines[first - 1:(found.end_lineno or found.lineno)][:SOURCE_LINES])


def _model_prompt(failing: dict[str, TestOutcome], forbidden: Sequence[str], sources: dict[str, str]) -> str:
    parts = ["These tests of the project fail now:", ""]
    parts += [f"- {test}: {_symptom(failing[test], forbidden)}" for test in sorted(failing)[:SHOWN]]
    if len(failing) > SHOWN:
        parts.append(f"- and {len(failing) - SHOWN} more")
    shown = [(test, sources[test]) for test in sorted(failing) if sources.get(test)][:SOURCES]
    for test, source in shown:
        parts += ["", f"The source of {test}:", "```python", source, "```"]
    parts += ["", "Write the issue."]
    return "\n".join(parts)


def _refused(text: str, forbidden: Sequence[str], banned: Sequence[str]) -> str:
    """Why an answer cannot be the statement ("" when it can)."""
    if not text:
        return "an empty answer"
    if _quotes(text, [line for line in forbidden if "".join(line.split()) not in BARE]):
        return "it quoted a changed line"
    lowered = text.lower()
    for word in banned:
        if word and (word.lower() in lowered or word.lower().replace("_", " ") in lowered):
            return f"it named {word!r}"
    return ""


def _failing_list(failing: dict[str, TestOutcome]) -> str:
    names = sorted(failing)
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return "Failing tests: " + ", ".join(f"`{test}`" for test in names[:SHOWN]) + more + "."
