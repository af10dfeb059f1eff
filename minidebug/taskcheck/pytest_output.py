"""Reading what pytest printed: the first error line of a test that failed, and the collection errors (a
test module or a conftest that could not be imported), for `validate` to explain a task's results."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..scoring.ids import is_cut

_HEAD = re.compile(r"^_{3,} (.+?) _{3,}$")  # a failure's or error's section: "___ test_x[a b] ___"
_PART = re.compile(r"^={3,} .*={3,}$")  # "=== FAILURES ===", "=== short test summary info ==="
_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (.+)$")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Failed|Failure|Interrupt|Warning|Timeout)\b")
_CONFTEST = re.compile(r"^ImportError while loading conftest '(.+?)'\.?$")
_USAGE = re.compile(r"^ERROR: (.+)$")


@dataclass(frozen=True)
class PytestOutput:
    """A run's printed output, read once: each section's first error line and the summary lines."""

    sections: dict[str, str]
    summary: tuple[str, ...]
    output: str

    @classmethod
    def read(cls, output: str) -> PytestOutput:
        sections: dict[str, str] = {}
        body: list[str]
        head, body = None, []
        for line in output.splitlines() + ["=== end ==="]:
            found = _HEAD.match(line)
            if found or _PART.match(line):
                if head is not None and head not in sections:
                    sections[head] = first_error(body)
                head, body = (found.group(1) if found else None), []
            elif head is not None:
                body.append(line)
        summary = tuple(m.group(1) for m in map(_SUMMARY.match, output.splitlines()) if m)
        return cls(sections, summary, output)

    def first_line(self, test_id: str) -> str:
        """The first error line pytest printed for a test (its failure, or an error in its setup or teardown);
        a test id cut short at a space stands for the tests whose name starts with it."""
        name, cut = _head_name(test_id), is_cut(test_id)
        for head, line in self.sections.items():
            for target in (name, f"ERROR at setup of {name}", f"ERROR at teardown of {name}"):
                if line and (head == target or cut and _cut_to(head, target)):
                    return line
        for entry in self.summary:
            rest = entry[len(test_id):]
            if entry.startswith(test_id) and (rest.startswith(" - ") or cut and rest[:1].isspace() and " - " in rest):
                return rest.split(" - ", 1)[1].strip()[:300]
        return ""

    def collection_errors(self) -> list[tuple[str, str]]:
        """(what, first error line) for each module that could not be collected, and for a conftest or a
        command-line problem that stopped pytest before it collected anything."""
        errors = [(head.removeprefix("ERROR collecting "), line) for head, line in self.sections.items()
                  if head.startswith("ERROR collecting ")]
        lines = self.output.splitlines()
        for i, line in enumerate(lines):
            conftest = _CONFTEST.match(line)
            if conftest:
                errors.append((conftest.group(1).removeprefix("./"), first_error(lines[i + 1:])))
                break
            usage = _USAGE.match(line)
            if usage:
                errors.append(("the command line", usage.group(1)[:300]))
                break
        return errors


def _head_name(test_id: str) -> str:
    """A test's name as its section's heading has it: `Class.test[params]` for `path::Class::test[params]`
    (a `::` in the parameters stays)."""
    name = test_id.split("::", 1)[-1]
    function, bracket, params = name.partition("[")
    return function.replace("::", ".") + bracket + params


def _cut_to(text: str, cut: str) -> bool:
    """Whether `text`, cut at its first whitespace after `cut`'s length, is `cut`."""
    return text.startswith(cut) and text[len(cut):len(cut) + 1].isspace()


def first_error(lines: list[str]) -> str:
    """Of pytest's error lines (`E   ...`), the first naming an exception, else the first."""
    errors = [line[1:].strip() for line in lines if line.startswith("E ") and line[1:].strip()]
    named = [line for line in errors if _EXCEPTION.match(line)]
    return (named or errors or [""])[0][:300]
