"""Isolated virtualenvs, one per (interpreter, requirements), built once and cached."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from .errors import WorkspaceError
from .locks import file_lock
from .treeguard import record

COMPLETE_MARKER = ".minidebug-complete"


@lru_cache(maxsize=None)
def find_python(version: str | None) -> str:
    """The path of an interpreter for a version like "3.11" (None: the host's own).

    Looks on PATH, then in pyenv's versions folder.

    Raises:
        WorkspaceError: no such interpreter is installed.
    """
    if version is None:
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(str(pyenv_root / "versions" / f"{version}*" / "bin" / f"python{version}")), reverse=True)
    candidates += sorted(glob.glob(str(pyenv_root / "versions" / f"{version}.*" / "bin" / "python3")), reverse=True)
    for candidate in filter(None, candidates):
        found = _interpreter_version(candidate)
        if found and (found == version or found.startswith(version + ".")):
            return str(Path(candidate).resolve())
    raise WorkspaceError(f"no Python {version} interpreter found on PATH or in {pyenv_root / 'versions'}")


@lru_cache(maxsize=None)
def _interpreter_version(exe: str) -> str | None:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def with_pytest(requirements: Sequence[str]) -> list[str]:
    """The requirements, plus pytest unless they already name it."""
    from packaging.requirements import Requirement

    names = {Requirement(r).name.lower() for r in requirements}
    return list(requirements) + ([] if "pytest" in names else ["pytest"])


def venv_key(python: str, requirements: Sequence[str]) -> str:
    identity = {"python": python, "version": _interpreter_version(python), "requirements": sorted(requirements)}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def ensure_venv(cache_dir: Path, python_version: str | None, requirements: Sequence[str],
                setup: Sequence[str] = (), setup_dir: Path | None = None, key_extra: str = "") -> Path:
    """Return a ready virtualenv for these requirements, building it on first use.

    Safe to call from many processes at once: building is guarded by a file lock. `setup` commands
    (e.g. "pip install -e .") run after the requirements, in setup_dir, with the venv first on PATH.

    Raises:
        WorkspaceError: the interpreter is missing or pip failed (its output is in the message).
    """
    python = find_python(python_version)
    requirements = with_pytest(requirements)
    venv = cache_dir / "venvs" / (venv_key(python, requirements) + (f"-{key_extra}" if key_extra else ""))
    if (venv / COMPLETE_MARKER).exists():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(venv.with_suffix(".lock")):
        if (venv / COMPLETE_MARKER).exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a build that died half-way
        try:
            _build(venv, python, requirements)
            _setup(venv, setup, setup_dir)
        except BaseException:
            shutil.rmtree(venv, ignore_errors=True)
            raise
        (venv / COMPLETE_MARKER).write_text(json.dumps({"python": python, "requirements": requirements}))
        record(venv)
    return venv


def invalidate(venv: Path) -> None:
    """Mark a venv for rebuilding: the next `ensure_venv` of it builds it again from scratch."""
    with file_lock(venv.with_suffix(".lock")):
        (venv / COMPLETE_MARKER).unlink(missing_ok=True)


def _build(venv: Path, python: str, requirements: list[str]) -> None:
    from virtualenv import cli_run

    try:
        cli_run([str(venv), "--python", python, "--no-periodic-update", "--quiet"], setup_logging=False)
    except Exception as exc:  # virtualenv raises bare RuntimeErrors
        raise WorkspaceError(f"could not create a virtualenv with {python}: {exc}") from exc
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    result = subprocess.run(pip + requirements, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()[-4000:]
        raise WorkspaceError(f"pip install {' '.join(requirements)} failed:\n{output}")


SETUP_PASSED_ON = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS", "PIP_NO_INDEX")


def _setup(venv: Path, commands: Sequence[str], cwd: Path | None) -> None:
    """Run a `[source]` task's setup commands like any program of the project: the environment allowlist
    (plus pip's index settings) and the default resource limits, in a process group killed on timeout."""
    import shlex
    import tempfile

    from . import process
    from .limits import Confinement
    from .task import Limits

    limits = Limits()
    with tempfile.TemporaryDirectory(prefix="minidebug-setup-") as scratch:
        env = process.episode_environ(venv, Path(scratch), Path(scratch),
                                      {k: os.environ[k] for k in SETUP_PASSED_ON if k in os.environ})
        confinement = Confinement(limits.memory_mb, limits.cpu_seconds, limits.file_size_mb, limits.processes)
        try:
            for command in commands:
                result, output = confinement.run(shlex.split(command), cwd=cwd or Path(scratch), env=env,
                                                 timeout=1800, writable=[])
                if result.returncode != 0:
                    raise WorkspaceError(f"setup command {command!r} failed:\n{output.strip()[-4000:]}")
        finally:
            confinement.close()


@lru_cache(maxsize=None)
def pytest_plugins(venv: Path) -> tuple[str, ...]:
    """The modules of the pytest plugins installed in the venv (its `pytest11` entry points), sorted."""
    import configparser

    found = set()
    for path in glob.glob(str(venv / "lib" / "python*" / "site-packages" / "*.dist-info" / "entry_points.txt")):
        parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section("pytest11"):
            found.update(value.split(":", 1)[0].strip() for value in parser["pytest11"].values())
    return tuple(sorted(found))
