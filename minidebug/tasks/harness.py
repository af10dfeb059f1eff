"""Which files belong to the task's test harness, and so are never taken from the agent.

Files that change how tests are collected or run (conftest.py, pytest's config files, interpreter start-up
hooks) decide the score as much as the tests do. Eval always takes them from the task's base commit;
`edit` refuses them. A task may hand a path back to the agent with `agent_owned` globs in task.toml
(say, a task whose bug is in its own conftest.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from .globs import GlobSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

HARNESS_GLOBS = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
)
PYPROJECT = "pyproject.toml"


class Harness:
    """The task-owned paths of one task: harness files, read-only and hidden globs, minus `agent_owned`."""

    def __init__(self, readonly: GlobSet, hidden: GlobSet, agent_owned: GlobSet,
                 test_files: frozenset[str] = frozenset()):
        self.readonly, self.hidden, self.agent_owned = readonly, hidden, agent_owned
        self.test_files = test_files
        self._globs = GlobSet(list(HARNESS_GLOBS))

    def with_test_files(self, test_files: frozenset[str]) -> Harness:
        """The same rules, also owning the files that hold the counted tests."""
        return Harness(self.readonly, self.hidden, self.agent_owned, test_files)

    def owns(self, rel: str) -> bool:
        """True if the file at worktree-relative POSIX path `rel` must come from the task, whatever its text."""
        first = rel.split("/", 1)[0]
        if first == ".git" or self.hidden.match(rel) or self.readonly.match(rel) or rel in self.test_files:
            return True
        return self._globs.match(rel) and not self.agent_owned.match(rel)

    def refuses_text(self, rel: str, new: str, base_text: Callable[[str], str | None]) -> str | None:
        """Why the agent may not give `rel` the text `new` (None: it may). For files whose rules look inside;
        `base_text(rel)` (the file at the base) is only asked for those."""
        if rel.rsplit("/", 1)[-1] != PYPROJECT or self.agent_owned.match(rel):
            return None
        if pytest_table(new) != pytest_table(base_text(rel) or ""):
            return "its [tool.pytest…] tables configure the test run, which belongs to the task"
        return None


def pytest_table(text: str) -> object:
    """The `[tool.pytest…]` part of a pyproject.toml (unparsable text stands for itself, so any change shows)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ("unparsable", text)
    tool = data.get("tool", {})
    return {key: value for key, value in tool.items() if key.startswith("pytest")} if isinstance(tool, dict) else tool
