"""Finding a Python interpreter of a given version: on PATH, among pyenv's and among uv's."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from ..errors import WorkspaceError


def pyenv_versions() -> Path:
    """pyenv's versions folder (`$PYENV_ROOT/versions`, default ~/.pyenv/versions)."""
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"


def uv_pythons() -> Path:
    """Where uv installs interpreters (`$UV_PYTHON_INSTALL_DIR`, default $XDG_DATA_HOME/uv/python)."""
    configured = os.environ.get("UV_PYTHON_INSTALL_DIR")
    if configured:
        return Path(configured).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "uv" / "python"


def candidates(version: str) -> list[str]:
    """Executables that may be Python `version`, most specific first (not yet checked)."""
    found = [shutil.which(name) for name in (f"python{version}", "python3", "python")]
    for root, pattern in ((pyenv_versions(), "{v}*"), (uv_pythons(), "cpython-{v}*")):
        for folder in sorted(glob.glob(str(root / pattern.format(v=version))), key=_version_order, reverse=True):
            found += [str(Path(folder) / "bin" / f"python{version}"), str(Path(folder) / "bin" / "python3")]
    return [path for path in dict.fromkeys(found) if path and os.access(path, os.X_OK)]


@cache
def find_python(version: str | None) -> str:
    """The path of an interpreter for a version like "3.11" or "3.11.7" (None: the host's own).

    Raises:
        WorkspaceError: none is installed; the message says where it looked and how to get one.
    """
    if version is None:
        return sys.executable
    for candidate in candidates(version):
        found = interpreter_version(candidate)
        if found and (found == version or found.startswith(version + ".")):
            return str(Path(candidate).resolve())
    minor = ".".join(version.split(".")[:2])
    raise WorkspaceError(
        f"no Python {version} interpreter found (looked on PATH, in {pyenv_versions()} and in {uv_pythons()}); "
        f"install one with `pyenv install {version}`, `uv python install {version}` or your system's package "
        f"manager (e.g. `apt install python{minor}`), or set the task's `python` to an installed version")


@cache
def interpreter_version(exe: str) -> str | None:
    """"3.11.7" for an interpreter, or None if it does not run."""
    try:
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@cache
def interpreter_identity(exe: str) -> tuple[str, str | None]:
    """(the real path of the interpreter `exe` runs, its version), asked of the interpreter itself, so that
    names, links and version-manager shims that end in one interpreter give one identity."""
    try:
        out = subprocess.run([exe, "-c", "import os, sys; print(os.path.realpath(sys.executable)); "
                                         "print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return exe, None
    lines = out.stdout.split()
    return (lines[0], lines[1]) if out.returncode == 0 and len(lines) == 2 else (exe, None)


def _version_order(folder: str) -> tuple[int, ...]:
    """Sort key: the numbers of a folder name like "3.11.7" or "cpython-3.11.7-linux-x86_64-gnu"."""
    name = Path(folder).name.removeprefix("cpython-").split("-", 1)[0]
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))
