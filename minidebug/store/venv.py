"""Isolated virtualenvs, one per (interpreter, requirements), built once and cached."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import WorkspaceError
from ..sandbox.reaper import owned_temp_dir
from .interpreters import find_python, interpreter_identity
from .locks import file_lock
from .reasons import SetupError, shown
from .removal import remove_tree
from .treeguard import record

COMPLETE_MARKER = ".minidebug-complete"


def with_pytest(requirements: Sequence[str]) -> list[str]:
    """The requirements, plus pytest unless they already name it."""
    from packaging.requirements import Requirement

    names = {Requirement(r).name.lower() for r in requirements}
    return list(requirements) + ([] if "pytest" in names else ["pytest"])


def venv_key(python: str, requirements: Sequence[str]) -> str:
    """The cache key of a venv: the interpreter as resolved (the real path of what it runs, so `python` and
    `python3` naming one interpreter share a venv, and its version) and the requirements."""
    resolved, version = interpreter_identity(python)
    identity = {"python": resolved, "version": version, "requirements": sorted(requirements)}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ProjectInstall:
    """Commands that install the project itself (and what it needs) into a venv, run in a checkout of
    `commit` of the repository at `origin` (through the cache's clone of it) that is deleted afterwards."""

    origin: str
    commit: str
    commands: tuple[str, ...]


def ensure_venv(cache_dir: Path, python_version: str | None, requirements: Sequence[str],
                install: ProjectInstall | None = None) -> Path:
    """Return a ready virtualenv for these requirements, building it on first use.

    Safe to call from many processes at once: building is guarded by a file lock. `install` commands run
    after the requirements, with the venv first on PATH. The venv keeps what they installed except the
    project's own code: its metadata (version, entry points) stays, its modules always come from the
    episode's worktree, so a venv holds no copy of a later commit's code.

    Raises:
        WorkspaceError: the interpreter is missing or virtualenv failed.
        SetupError: pip or a command failed (its first line: the step and why; the output's end follows).
    """
    python = find_python(python_version)
    requirements = with_pytest(requirements)
    key = venv_key(python, requirements)
    if install is not None:
        identity = json.dumps([install.origin, install.commit, list(install.commands), BUILD_PRODUCTS])
        key += "-" + hashlib.sha256(identity.encode()).hexdigest()[:16]
    venv = cache_dir / "venvs" / key
    if (venv / COMPLETE_MARKER).exists():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(venv.with_suffix(".lock")):
        if (venv / COMPLETE_MARKER).exists():
            return venv
        remove_tree(venv)  # a build that died half-way
        try:
            _build(venv, python, requirements)
            if install is not None:
                _install_project(cache_dir, venv, install)
        except BaseException:
            remove_tree(venv)
            raise
        (venv / COMPLETE_MARKER).write_text(json.dumps({"python": python, "requirements": requirements}))
        record(venv)
    return venv


def invalidate(venv: Path) -> None:
    """Mark a venv for rebuilding: the next `ensure_venv` of it builds it again from scratch."""
    with file_lock(venv.with_suffix(".lock")):
        (venv / COMPLETE_MARKER).unlink(missing_ok=True)


PIP_SCRATCH = ".pip-tmp"
SETUP_PREFIX = "minidebug-setup-"  # the temp folder of a project's install commands


def _build(venv: Path, python: str, requirements: list[str]) -> None:
    from virtualenv import cli_run

    try:
        cli_run([str(venv), "--python", python, "--no-periodic-update", "--quiet"], setup_logging=False)
    except Exception as exc:  # virtualenv raises bare RuntimeErrors
        # virtualenv seeds pip only into the interpreters it supports; older ones bring their own (ensurepip)
        remove_tree(venv)
        try:
            cli_run([str(venv), "--python", python, "--no-periodic-update", "--quiet", "--no-seed"],
                    setup_logging=False)
            seeded = subprocess.run([str(venv / "bin" / "python"), "-m", "ensurepip", "--default-pip"],
                                    capture_output=True, text=True, timeout=600)
        except Exception:
            seeded = None
        if seeded is None or seeded.returncode != 0:
            raise WorkspaceError(f"could not create a virtualenv with {python}: {exc}") from exc
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    scratch = venv / PIP_SCRATCH  # pip's temp folders inside the venv, removed with a build cut short
    scratch.mkdir()
    try:
        result = subprocess.run(pip + requirements, capture_output=True, text=True, timeout=1800,
                                env={**os.environ, "TMPDIR": str(scratch)})
    finally:
        remove_tree(scratch)
    if result.returncode != 0:
        raise SetupError.of(f"pip install {shown(' '.join(requirements))}", result.stdout + result.stderr,
                            result.returncode)


def _install_project(cache_dir: Path, venv: Path, install: ProjectInstall) -> None:
    import tempfile

    from .repos import checkout, shared_store

    store = shared_store(cache_dir, install.origin, [install.commit])
    with tempfile.TemporaryDirectory(prefix="install-", dir=venv.parent) as scratch:
        project = Path(scratch) / "project"
        checkout(store, install.commit, project)
        before = _files(project)
        _setup(venv, install.commands, project)
        _keep_build_products(venv, project, before)
        _keep_metadata_only(venv, project)


BUILD_PRODUCTS = "build-products"  # in a venv: the code its project's install wrote into the checkout
BUILD_PRODUCTS_EXCLUDE = "build-products.exclude"  # their paths, as a git excludes file
_PRODUCT_SUFFIXES = (".py", ".so", ".pyd")
_NOT_PRODUCTS = {".git", "build", "dist", ".eggs", "__pycache__", ".tox"}


def _files(root: Path) -> set[str]:
    """The regular files under `root` (relative, POSIX), never following a link, never inside `.git`."""
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d))]
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                found.add(Path(path).relative_to(root).as_posix())
    return found


def _keep_build_products(venv: Path, project: Path, before: set[str]) -> None:
    """Keep, in the venv, the code files the install wrote into the checkout (setuptools_scm's `_version.py`,
    extensions built in place): SWE-bench's images have them in the tree as untracked files, and the
    project does not import without them. `lay_build_products` puts them into a task's trees; git ignores
    them there (BUILD_PRODUCTS_EXCLUDE), so they are never part of the agent's changes."""
    kept = []
    for rel in sorted(_files(project) - before):
        parts = rel.split("/")
        if rel.endswith(_PRODUCT_SUFFIXES) and not (_NOT_PRODUCTS & set(parts)) \
                and not any(part.endswith(".egg-info") for part in parts):
            target = venv / BUILD_PRODUCTS / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / rel, target)
            kept.append(rel)
    if kept:
        (venv / BUILD_PRODUCTS_EXCLUDE).write_text("".join(f"/{_glob_escaped(rel)}\n" for rel in kept))


def _glob_escaped(rel: str) -> str:
    return re.sub(r"([*?\[\]\\!#])", r"\\\1", rel)


def lay_build_products(venv: Path, tree: Path) -> list[str]:
    """Copy the venv's build products (see `_keep_build_products`) into `tree` where it has no such file,
    never through a link; returns the paths laid."""
    source = venv / BUILD_PRODUCTS
    laid = []
    for rel in sorted(_files(source)) if source.is_dir() else []:
        parts, target = rel.split("/"), tree / rel
        if os.path.lexists(target) or any(os.path.islink(tree.joinpath(*parts[:i])) for i in range(1, len(parts))):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target)
        laid.append(rel)
    return laid


def _keep_metadata_only(venv: Path, project: Path) -> None:
    """Remove the copies of the project's files that its install put in the venv (the listed files of a
    distribution installed from the checkout, not editable), and move the metadata that a legacy
    `setup.py develop` left in the checkout (`*.egg-info`) into site-packages, before the checkout goes."""
    site = next(iter(glob.glob(str(venv / "lib" / "python*" / "site-packages"))), None)
    if site is None:
        return
    url = project.resolve().as_uri()
    for direct_url in glob.glob(os.path.join(site, "*.dist-info", "direct_url.json")):
        try:
            origin = json.loads(Path(direct_url).read_text())
        except (OSError, ValueError):
            continue
        if origin.get("url") != url or origin.get("dir_info", {}).get("editable"):
            continue
        dist_info = Path(direct_url).parent
        for line in (dist_info / "RECORD").read_text().splitlines() if (dist_info / "RECORD").exists() else []:
            path = (Path(site) / line.rsplit(",", 2)[0]).resolve()
            if dist_info not in path.parents and Path(site) in path.parents and path.is_file():
                path.unlink()
    for egg_info in [*project.glob("*.egg-info"), *project.glob("src/*.egg-info")]:
        shutil.move(str(egg_info), os.path.join(site, egg_info.name))


SETUP_PASSED_ON = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS", "PIP_NO_INDEX")


def _setup(venv: Path, commands: Sequence[str], cwd: Path | None) -> None:
    """Run a project's install commands like any program of the project: the environment allowlist
    (plus pip's index settings, and Python's output unbuffered) and the default resource limits, in a process
    group killed on timeout.

    Raises:
        SetupError: a command failed: which, and the first line of its output that says why.
    """
    import shlex

    from ..sandbox import process
    from ..sandbox.confinement import Confinement
    from ..tasks.spec import Limits

    limits = Limits()
    scratch = owned_temp_dir(SETUP_PREFIX)  # a killed build's is `minidebug gc`'s to remove
    try:
        passed = {k: os.environ[k] for k in SETUP_PASSED_ON if k in os.environ}
        # unbuffered, a Python step's output keeps the order it was written in: its last line is its last word
        env = process.episode_environ(venv, Path(scratch), Path(scratch), {**passed, "PYTHONUNBUFFERED": "1"})
        confinement = Confinement(limits.memory_mb, limits.cpu_seconds, limits.file_size_mb, limits.processes)
        try:
            for command in commands:
                try:
                    result, output = confinement.run(shlex.split(command), cwd=cwd or Path(scratch), env=env,
                                                     timeout=1800, writable=[])
                except FileNotFoundError:
                    raise SetupError(f"setup command `{shown(command)}`", f"needs the program "
                                     f"{shlex.split(command)[0]}, which this machine lacks") from None
                if result.returncode != 0:
                    raise SetupError.of(f"setup command `{shown(command)}`", output, result.returncode)
        finally:
            confinement.close()
    finally:
        remove_tree(scratch)


@cache
def pytest_plugins(venv: Path) -> tuple[str, ...]:
    """The modules of the pytest plugins installed in the venv (its `pytest11` entry points), sorted."""
    import configparser

    found: set[str] = set()
    for path in glob.glob(str(venv / "lib" / "python*" / "site-packages" / "*.dist-info" / "entry_points.txt")):
        parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section("pytest11"):
            found.update(value.split(":", 1)[0].strip() for value in parser["pytest11"].values())
    return tuple(sorted(found))
