"""A SWE-bench-format instance from a fix commit of a repository's history.

The commit (not a merge, not a root commit) must change test files and other files: its diff against its
parent is split into `test_patch` (the test files: under a `test`, `tests` or `testing` folder, or named
`test_*.py`, `*_test.py` or `conftest.py`) and `patch` (the rest, which must change Python code). The base
commit is the parent, the problem statement the commit message, the version `major.minor` as the repository
says it at the base commit (a version string in its packaging or package files, else its latest tag). The
instance's FAIL_TO_PASS and PASS_TO_PASS are left empty: they are measured by running its tests (see
minidebug.taskcheck.measure).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import TaskError

TEST_FOLDERS = {"test", "tests", "testing"}
# Files that may say a project's version, in the order they are read (the first with one wins).
VERSION_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "__pkginfo__.py", "__about__.py", "__version__.py",
                 "_version.py", "version.py", "release.py", "__init__.py")
_VERSION = re.compile(r"""^\s*(?:__version__|version|VERSION)\s*[:=]\s*["']?v?(\d+)\.(\d+)"""  # "1.2.3"
                      r"""|^\s*(?:VERSION|version_info|numversion)\s*=\s*\(\s*(\d+)\s*,\s*(\d+)""",  # (1, 2, 3)
                      re.MULTILINE)


class HistoryError(TaskError):
    """A commit that cannot make an instance: not a commit, a merge, no test change, no source change."""


def is_test_file(path: str) -> bool:
    """Whether a repository path is a test file: under a test folder, or named as pytest test modules are."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return bool(TEST_FOLDERS & set(parts[:-1])) or name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


def instance_from_commit(clone: Path, commit: str, repository: str) -> dict[str, Any]:
    """The instance of a fix commit of `clone` (any revision git accepts), for `repository` ("owner/name"),
    with FAIL_TO_PASS and PASS_TO_PASS still empty.

    Raises:
        HistoryError: the revision is no commit of the clone, a merge or a root commit, or its change does not
            split into a test part and a Python source part (or changes a binary file).
    """
    check_source(clone, repository)
    sha = _git(clone, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", what=f"{commit!r} is not a "
               f"commit of {clone}").strip()
    parents = _git(clone, "rev-list", "--parents", "-n", "1", sha).split()[1:]
    if len(parents) != 1:
        raise HistoryError(f"{sha[:12]} is a {'merge' if parents else 'root'} commit: give the commit that "
                           "makes the fix (a merge's change is its branch's commits)")
    base = parents[0]
    changed = _git(clone, "diff", "--numstat", "--no-renames", "-z", base, sha).split("\0")
    files = [entry.split("\t", 2)[2] for entry in changed if entry.count("\t") >= 2]
    binary = [entry.split("\t", 2)[2] for entry in changed if entry.startswith("-\t-\t")]
    if binary:
        raise HistoryError(f"{sha[:12]} changes binary file(s) ({', '.join(binary[:3])}): a patch cannot carry them")
    tests = [path for path in files if is_test_file(path)]
    source = [path for path in files if not is_test_file(path)]
    if not tests:
        raise HistoryError(f"{sha[:12]} changes no test file (of {', '.join(files[:5]) or 'nothing'}): nothing "
                           "would show the bug")
    if not any(path.endswith(".py") for path in source):
        raise HistoryError(f"{sha[:12]} changes no Python source outside the tests "
                           f"({', '.join(source[:5]) or 'only test files'}): nothing to fix")
    owner, name = repository.split("/")
    return {
        "repo": repository,
        "instance_id": f"{owner}__{name}-{sha[:10]}",
        "base_commit": base,
        "patch": _diff(clone, base, sha, source),
        "test_patch": _diff(clone, base, sha, tests),
        "problem_statement": _git(clone, "log", "-1", "--format=%B", sha).strip(),
        "hints_text": "",
        "created_at": _git(clone, "log", "-1", "--format=%cI", sha).strip(),
        "version": repository_version(clone, base),
        "environment_setup_commit": base,
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
    }


def check_source(clone: Path, repository: str) -> None:
    """Raise HistoryError unless `clone` is a git repository and `repository` an owner/name."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        raise HistoryError(f"repository {repository!r}: expected owner/name")
    if not Path(clone).is_dir():
        raise HistoryError(f"{clone}: no such folder")
    _git(clone, "rev-parse", "--git-dir", what=f"{clone} is not a git repository")


def repository_version(clone: Path, commit: str) -> str:
    """`major.minor` of the project at `commit`: the first version string of its packaging files, then of
    its packages' version files (`pkg/` or `src/pkg/`); else from its latest tag; "" when neither says."""
    files = [p for p in _git(clone, "ls-tree", "-r", "--name-only", "-z", commit).split("\0") if p]
    packages = {p.split("/")[0] for p in files if p.count("/") == 1 and p.endswith("/__init__.py")}
    paths = [p for p in files if p in VERSION_FILES[:3] or (PurePosixPath(p).name in VERSION_FILES and (
        (p.count("/") == 1 and p.split("/")[0] in packages) or (p.count("/") == 2 and p.startswith("src/"))))]
    paths.sort(key=lambda p: (p.count("/") > 0, VERSION_FILES.index(PurePosixPath(p).name), p))
    for path in paths:
        match = _VERSION.search(_git(clone, "show", f"{commit}:{path}"))
        if match:
            major, minor = (group for group in match.groups() if group is not None)
            return f"{int(major)}.{int(minor)}"
    described = subprocess.run(["git", "-C", str(clone), "describe", "--tags", "--abbrev=0", commit],
                               capture_output=True, text=True, errors="replace")
    match = re.search(r"(\d+)\.(\d+)", described.stdout) if described.returncode == 0 else None
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else ""


def _diff(clone: Path, base: str, commit: str, paths: list[str]) -> str:
    return _git(clone, "diff", "--no-color", "--no-ext-diff", "--no-renames", "--full-index", base, commit,
                "--", *paths)


def _git(clone: Path, *args: str, what: str = "") -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True, errors="surrogateescape",
                          stdin=subprocess.DEVNULL, env=env)
    if done.returncode != 0:
        if what:
            raise HistoryError(what)
        raise HistoryError(f"git {' '.join(args[:3])} in {clone} failed: {done.stderr.strip()[:300]}")
    return done.stdout
