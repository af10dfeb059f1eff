"""Which tests reach which function, from one traced run of the suite in the repository's venv.

The `minidebug_synth` plugin records, per test, the code objects of the project's files that started running
(their file and first line: a function's `def` line, or its first decorator's). A candidate bug in a function
is then checked by the tests that reached any code within that function's lines (its nested functions,
lambdas and comprehensions included); a bug in a class (a base or a method dropped), by the tests that
reached any code of its file, since the class is used beyond its own methods.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field

from .validate import RunReport


@dataclass
class CoverageMap:
    """Per file, the first lines of the code objects that ran, and the tests that ran each."""

    by_file: dict[str, dict[int, set[str]]] = field(default_factory=dict)

    @classmethod
    def from_run(cls, report: RunReport, tests: set[str]) -> CoverageMap:
        """The map of a traced run, for the `tests` given (those that pass and so can show a bug)."""
        by_file: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        for test, reached in report.reached.items():
            if test in tests:
                for path, line in reached:
                    by_file[path][line].add(test)
        return cls({path: dict(lines) for path, lines in by_file.items()})

    def files(self) -> list[str]:
        return sorted(self.by_file)

    def tests_reaching(self, path: str, span: tuple[int, int] | None = None) -> set[str]:
        """The tests that ran code of `path` that starts within the lines `span` (default: anywhere)."""
        lines = self.by_file.get(path, {})
        if span is None:
            return set().union(*lines.values()) if lines else set()
        starts = sorted(lines)
        found: set[str] = set()
        for start in starts[bisect.bisect_left(starts, span[0]):bisect.bisect_right(starts, span[1])]:
            found |= lines[start]
        return found
