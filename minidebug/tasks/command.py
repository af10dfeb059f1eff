"""What a task's eval command is: pytest, run as `pytest ...` or `python -m pytest ...`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..errors import TaskError

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


def pytest_arguments(command: list[str]) -> tuple[list[str], bool]:
    """The pytest arguments of an eval command, and whether it puts the current folder on sys.path
    (`python -m pytest` does, `pytest` does not).

    Raises:
        TaskError: the command does not run pytest.
    """
    name = Path(command[0]).name if command else ""
    if name in ("pytest", "py.test"):
        return list(command[1:]), False
    if _PYTHON.fullmatch(name) and command[1:3] == ["-m", "pytest"]:
        return list(command[3:]), True
    raise TaskError(f"eval must run pytest (`python -m pytest ...` or `pytest ...`); got {shlex.join(command)!r}")
