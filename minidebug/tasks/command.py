"""What a task's eval command runs: pytest (`pytest ...` or `python -m pytest ...`), or Django's test script
(`python tests/runtests.py --settings=test_sqlite --parallel 1 LABEL...`).

A command whose script is named `runtests.py` (a relative path in the project, run by `python` or by
itself) is Django's: eval runs it in its own driver process (see drivers/minidebug_unittest.py), so it
must say `--parallel 1`. Its tests are unittest's, named `name (module.Class)`; their modules are found
under the script's folder.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import TaskError

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
DJANGO_SCRIPT = "runtests.py"
UNITTEST_ID = re.compile(r"(?P<name>[A-Za-z_]\w*) \((?P<dotted>[A-Za-z_]\w*(\.[A-Za-z_]\w*)+)\)")
# runtests.py's options that take a value as the next argument (so that value is no test label)
_VALUE_OPTIONS = frozenset({"--settings", "--parallel", "--verbosity", "-v", "--tag", "--exclude-tag", "--start-at",
                            "--start-after", "--bisect", "--pair", "-k", "--shuffle", "--buffer-size"})


def unittest_id(test_id: str) -> str | None:
    """A unittest id as Django's runner names it, `name (module.Class)`, or None if `test_id` is not one.
    The form Python 3.11 prints, `name (module.Class.name)`, is read as the same test."""
    match = UNITTEST_ID.fullmatch(test_id.strip())
    if match is None:
        return None
    name, dotted = match["name"], match["dotted"]
    if dotted.endswith("." + name) and dotted.count(".") > 1:
        dotted = dotted[:-len(name) - 1]
    return f"{name} ({dotted})"


def django_label(test_id: str) -> str:
    """The label runtests.py runs one unittest id by: `module.Class.name`."""
    match = UNITTEST_ID.fullmatch(unittest_id(test_id) or "")
    if match is None:
        raise TaskError(f"not a unittest id `name (module.Class)`: {test_id!r}")
    return f"{match['dotted']}.{match['name']}"


@dataclass(frozen=True)
class EvalCommand:
    """An eval command read: which runner, its arguments, and for pytest whether the current folder is on
    sys.path (`python -m pytest` puts it there, `pytest` does not); for Django, the script's path."""

    runner: str  # "pytest" or "django"
    args: list[str]
    cwd_on_path: bool = False
    script: str = ""

    def with_labels(self, labels: list[str]) -> list[str]:
        """Django's arguments with their test labels replaced by `labels` (options kept)."""
        kept = [arg for i, arg in enumerate(self.args)
                if arg.startswith("-") or (i and self.args[i - 1] in _VALUE_OPTIONS)]
        return kept + list(labels)

    @property
    def test_folder(self) -> str:
        """Where the modules named in unittest ids are, relative to the project ("" for pytest)."""
        return str(PurePosixPath(self.script).parent) if self.script else ""


def eval_command(command: list[str]) -> EvalCommand:
    """Read an eval command.

    Raises:
        TaskError: it runs neither pytest nor Django's runtests.py with `--parallel 1`.
    """
    name = Path(command[0]).name if command else ""
    if name in ("pytest", "py.test"):
        return EvalCommand("pytest", list(command[1:]))
    python = bool(_PYTHON.fullmatch(name))
    if python and command[1:3] == ["-m", "pytest"]:
        return EvalCommand("pytest", list(command[3:]), cwd_on_path=True)
    script, args = (command[1], command[2:]) if python and len(command) > 1 else (command[0], command[1:])
    if command and PurePosixPath(script).name == DJANGO_SCRIPT:
        path = PurePosixPath(script)
        if path.is_absolute() or ".." in path.parts:
            raise TaskError(f"eval's {DJANGO_SCRIPT} must be a path inside the project; got {script!r}")
        if not _one_process(args):
            raise TaskError(f"eval runs {DJANGO_SCRIPT} in one process: add `--parallel 1`; "
                            f"got {shlex.join(command)!r}")
        return EvalCommand("django", list(args), script=str(path))
    raise TaskError("eval must run pytest (`python -m pytest ...` or `pytest ...`) or Django's tests/runtests.py; "
                    f"got {shlex.join(command)!r}")


def _one_process(args: list[str]) -> bool:
    """Whether the last `--parallel` among `args` says 1."""
    value = None
    for i, arg in enumerate(args):
        if arg == "--parallel":
            value = args[i + 1] if i + 1 < len(args) else None
        elif arg.startswith("--parallel="):
            value = arg.partition("=")[2]
    return value == "1"

