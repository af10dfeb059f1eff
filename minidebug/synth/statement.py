"""The problem statement of a synthesized task, written as a user's bug report from the failing tests alone.

It says which tests fail and with which exception or assertion message (a few of them, and how many more),
never the changed code, its file or the kind of change: a message that quotes a changed line (as an
exception's text sometimes does) is reduced to its exception type.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

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
