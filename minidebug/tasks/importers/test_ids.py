"""SWE-bench's test ids in their three shapes, made runnable here.

- pytest node ids (`path::name`): run as they are.
- Django's unittest ids (`name (module.Class)`; Python 3.11's `name (module.Class.name)` is read as the same
  test): the task's eval runs Django's `tests/runtests.py` (see tasks/command.py) on the modules of the test
  patch's files under `tests/` and of the ids. Newer SWE-bench logs record some Django tests by their
  docstring's first line instead, which names no test any run here reports.
- bare function names (sympy's, run by its `bin/test`): each becomes the node id of the one test file the
  test patch touches that defines it at its top level, so eval stays pytest (a PASS_TO_PASS name that
  several of those files define: each of them).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

from ...errors import TaskError
from ..command import django_label, eval_command, unittest_id
from ..patch import FilePatch, apply_file_patch
from .clones import file_at

DJANGO_EVAL = "python tests/runtests.py --settings=test_sqlite --parallel 1"
DJANGO_SCRIPT = "tests/runtests.py"
_BARE = re.compile(r"[A-Za-z_]\w*")


def id_shape(ids: list[str]) -> str:
    """"pytest" when every id is a node id, "django" when any is a unittest id (and none a node id), "bare"
    when every one is a bare name; else "mixed"."""
    if all("::" in test for test in ids):
        return "pytest"
    if not any("::" in test for test in ids) and any(unittest_id(test) for test in ids):
        return "django"
    return "bare" if all(_BARE.fullmatch(test) for test in ids) else "mixed"


def django_labels(test_files: list[str], ids: list[str]) -> list[str]:
    """runtests.py's labels: the modules of the test patch's Python files in the folders of `tests/` and of
    the (unittest) ids, none inside another."""
    modules = {str(PurePosixPath(path).with_suffix("")).replace("/", ".")
               for path in (f.removeprefix("tests/") for f in test_files if f.startswith("tests/"))
               if path.endswith(".py") and "/" in path}
    modules |= {django_label(test).rsplit(".", 2)[0] for test in ids}
    return sorted(m for m in modules if not any(m.startswith(other + ".") for other in modules))


def eval_prefix(recipe_test: str | None, shape: str) -> str:
    """What a task's eval starts with (test files or labels follow): the recipe's test command when it runs
    the shape's runner (Django's given `--parallel 1` when it lacks it), else pytest's or Django's default."""
    runner, default = ("django", DJANGO_EVAL) if shape == "django" else ("pytest", "python -m pytest -q")
    for command in ([recipe_test, f"{recipe_test} --parallel 1"] if recipe_test else []):
        try:
            if eval_command(shlex.split(command)).runner == runner:
                return command
        except (TaskError, ValueError):
            continue
    return default


def read_at(repository: str, commit: str, path: str) -> str | None:
    """A file of `repository` (a local clone) at `commit`; None when it has none there, or when the
    repository is a URL (nothing is fetched to read it)."""
    return file_at(Path(repository), commit, path) if Path(repository).is_dir() else None


def patched(text: str | None, patch: FilePatch) -> str:
    """`text` (None: no such file) with one file's hunks applied, as `git apply` applies them.

    Raises:
        ValueError: the patch does not apply to `text`, or deletes the file.
    """
    result = apply_file_patch(text, patch)
    if result is None:
        raise ValueError(f"the test patch deletes {patch.old_path}")
    return result


def node_ids(names: list[str], files: dict[str, str], every: bool = False) -> list[str]:
    """The node id of each bare test name: `path::name` for the one file of `files` (path -> text after the
    test patch) that defines it at its top level; with `every` (PASS_TO_PASS names: SWE-bench's run of
    those files ran each of them, and its log kept one status for the name), one for each file defining it.

    Raises:
        ValueError: a name is defined in none of the files, or (without `every`) in more than one.
    """
    defined: dict[str, list[str]] = {}
    for path, text in sorted(files.items()):
        for name in dict.fromkeys(re.findall(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", text, re.MULTILINE)):
            defined.setdefault(name, []).append(path)
    found = []
    for name in names:
        where = defined.get(name, [])
        if not where or (len(where) > 1 and not every):
            what = f"in {len(where)} of them ({', '.join(where)})" if where else "in none of them"
            raise ValueError(f"the bare test name {name!r} is defined {what}: the test files the test patch "
                             f"touches ({', '.join(sorted(files)) or 'none'}) must hold it exactly once")
        found += [f"{path}::{name}" for path in where]
    return found
