"""Matching a task's recorded test ids with the ids a run reports, and the file that holds a test.

Ids are pytest's node ids (`path::name`) or, for Django's runner, unittest's `name (module.Class)`.
SWE-bench's log parser cuts a pytest id at its first whitespace, so a recorded id may be cut short
(`t.py::test_fix[select` for `t.py::test_fix[select name]`). Such an id is matched as SWE-bench matches it:
it stands for every id of the run that is the same text up to its first whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from ..tasks.command import UNITTEST_ID, unittest_id

_WHITESPACE = re.compile(r"\s")


def file_of_test(test_id: str, folder: str = "") -> str:
    """The file that holds a test: a pytest id's path; for a unittest id, its module's file in `folder`
    (where Django's runtests.py finds its test modules)."""
    parsed = unittest_id(test_id)
    if parsed is None:
        return test_id.split("::", 1)[0]
    match = UNITTEST_ID.fullmatch(parsed)
    assert match is not None  # unittest_id returns an id of UNITTEST_ID's form
    module = match["dotted"].rsplit(".", 1)[0]
    return str(PurePosixPath(folder, *module.split("."))) + ".py"


def is_cut(test_id: str) -> bool:
    """Whether a recorded id was cut short at a space: it has no whitespace and its parameters' `[` is never
    closed (it does not end with `]`, or ends with one that closes a `[` inside them: sqlfluff's
    `test_parse[bits[OFFSET(0)]` cut from `test_parse[bits[OFFSET(0)] x]`)."""
    name = test_id.split("::", 1)[-1]
    return "[" in name and not _WHITESPACE.search(test_id) and (
        not name.endswith("]") or name.count("[") > name.count("]"))


def cut_at_space(test_id: str) -> str:
    """The id as SWE-bench's log parser records it: up to its first whitespace."""
    return _WHITESPACE.split(test_id, maxsplit=1)[0]


def match_outcomes(ids: Iterable[str], outcomes: Mapping[str, str]) -> tuple[dict[str, str], set[str]]:
    """Each recorded id's outcome in a run, and the run's ids that some recorded id stands for.

    An id the run reports is matched as it is. A cut id stands for every run id cut to it: it passed when
    all of those passed, else it takes the first other outcome among them (in id order); "did not run" when
    the run reports none.
    """
    ids = list(ids)
    by_cut: dict[str, list[str]] = {}
    if any(is_cut(test) and test not in outcomes for test in ids):
        for run_id in sorted(outcomes):
            by_cut.setdefault(cut_at_space(run_id), []).append(run_id)
    matched: set[str] = set()
    result: dict[str, str] = {}
    for test in ids:
        reported = [test] if test in outcomes else by_cut.get(test, []) if is_cut(test) else []
        matched.update(reported)
        states = [outcomes[r] for r in reported]
        result[test] = next((s for s in states if s != "passed"), "passed") if states else "did not run"
    return result, matched
