"""Everything slow, done once per task per machine: the bare repo with the base commit, and the venv.

Entries are keyed by content hashes, so a changed task or requirement list never reuses
a stale entry; building is guarded by file locks, so many processes may share the cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TaskError, WorkspaceError
from ..tasks.task import Task
from .gitcmd import git
from .locks import file_lock
from .reasons import SetupError
from .removal import remove_tree
from .repos import borrowing_repo, shared_store, store_path
from .treeguard import FINGERPRINT_SUFFIX, forget, guard, record
from .venv import ProjectInstall, ensure_venv, lay_build_products

BASE_REF = "refs/minidebug/base"
COMPLETE_MARKER = "minidebug-complete.json"
LAYOUT = "v5"  # bumped whenever what an entry holds changes, so that old entries are never reused
DRIVER_SOURCES = Path(__file__).resolve().parents[1] / "drivers"
BARE_REPO_UNWATCHED = ("worktrees",)  # the episodes' worktree admin folders, which the host writes


def default_cache_dir() -> Path:
    """`$MINIDEBUG_CACHE`, else the platform's user cache dir."""
    configured = os.environ.get("MINIDEBUG_CACHE")
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("minidebug"))


@dataclass(frozen=True)
class PreparedTask:
    """A task's cached parts, ready for worktrees to be made from."""

    entry: Path
    bare_repo: Path
    base_commit: str
    eval_base: Path  # the base files plus the hidden ones, what every eval tree starts from (see ensure_eval_base)
    hidden_files: tuple[str, ...]
    readonly_files: tuple[str, ...]
    test_files: tuple[str, ...]  # the base's files that pytest collects by default (test_*.py, *_test.py)
    venv: Path
    drivers: Path  # a folder holding only minidebug's driver scripts, for the programs' PYTHONPATH


def prepare(task: Task, cache_dir: Path | None = None) -> PreparedTask:
    """Build (or find) the cached bare repo and venv of a task.

    Raises:
        TaskError: the task's files are inconsistent (e.g. its solution.patch does not apply).
        WorkspaceError: git, virtualenv or pip failed.
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    entry = cache_dir / "tasks" / f"{task.name}-{task.content_hash()}-{LAYOUT}"
    marker = entry / COMPLETE_MARKER
    source = task.spec.source
    recipe = None
    if source is not None:
        recipe, environment_commit = _environment(task)
        task.repo = entry / "eval-base"  # the files at the commit, test patch applied (from the first eval on)
        if marker.exists() and not store_path(cache_dir, source.git).is_dir():
            marker.unlink(missing_ok=True)  # the clone it borrows from was removed: build it again
    if not marker.exists():
        with file_lock(entry.with_suffix(".lock")):
            if not marker.exists():
                remove_tree(entry)
                try:
                    if source is not None:
                        _build_source_entry(task, entry, _store(task, cache_dir, [source.commit, environment_commit]))
                    else:
                        _build_entry(task, entry)
                except BaseException:
                    remove_tree(entry)
                    raise
                record(entry / "repo.git", BARE_REPO_UNWATCHED)
    if not (entry / ("repo.git" + FINGERPRINT_SUFFIX)).exists():  # an entry built before repos were guarded
        with file_lock(entry.with_suffix(".lock")):
            record(entry / "repo.git", BARE_REPO_UNWATCHED)
    meta = json.loads(marker.read_text())
    if recipe is not None:
        assert source is not None, "only a [source] task has an [environment]"
        commands = tuple(recipe.commands())
        install = ProjectInstall(source.git, environment_commit, commands) if commands else None
        try:
            venv = ensure_venv(cache_dir, recipe.python, recipe.packages, install)
        except SetupError as exc:  # blamed on a `system` entry only when the step's reason names it
            lacking = recipe.lacking(named_in=exc.reason)
            if not lacking:
                raise
            raise exc.blaming(lacking) from exc
    else:
        venv = ensure_venv(cache_dir, task.spec.python, task.spec.requirements)
    return PreparedTask(
        entry=entry,
        bare_repo=entry / "repo.git",
        base_commit=meta["base_commit"],
        eval_base=entry / "eval-base",
        hidden_files=tuple(meta["hidden_files"]),
        readonly_files=tuple(meta["readonly_files"]),
        test_files=tuple(meta["test_files"]),
        venv=venv,
        drivers=install_drivers(cache_dir),
    )


def bare_repo_intact(prepared: PreparedTask) -> bool:
    """Whether the task's bare repository is as it was built (its worktrees' admin folders aside)."""
    return guard(prepared.bare_repo, BARE_REPO_UNWATCHED).intact()


def invalidate_entry(prepared: PreparedTask) -> None:
    """Mark a task's entry (bare repo, eval tree) for rebuilding: the next `prepare` builds it again."""
    with file_lock(prepared.entry.with_suffix(".lock")):
        (prepared.entry / COMPLETE_MARKER).unlink(missing_ok=True)
    for tree in (prepared.bare_repo, prepared.eval_base):
        forget(tree)


@functools.cache
def driver_sources() -> dict[str, bytes]:
    """The driver scripts this version of minidebug ships, by file name (read once a process)."""
    return {path.name: path.read_bytes() for path in sorted(DRIVER_SOURCES.glob("*.py"))}


def restore_drivers(drivers: Path) -> bool:
    """Write the driver scripts again if a program changed, added or removed a file in `drivers`; returns
    True if it had to. (A content comparison of a few small files: microseconds.)"""
    sources = driver_sources()
    try:
        present = {entry.name: entry for entry in os.scandir(drivers)}
        if present.keys() == sources.keys() and all(
                entry.is_file(follow_symlinks=False) and Path(entry.path).read_bytes() == sources[name]
                for name, entry in present.items()):
            return False
    except OSError:
        pass
    staging = Path(tempfile.mkdtemp(prefix="drivers-", dir=drivers.parent))
    for name, data in sources.items():
        (staging / name).write_bytes(data)
    tampered = drivers.with_name(f"{drivers.name}.tampered-{os.getpid()}-{secrets.token_hex(4)}")
    aside: Path | None = tampered
    try:
        os.rename(drivers, tampered)
    except FileNotFoundError:
        aside = None
    os.rename(staging, drivers)
    if aside is not None:
        remove_tree(aside)
    return True


def install_drivers(cache_dir: Path) -> Path:
    """A folder in the cache with a copy of the driver scripts and nothing else (made once per version)."""
    sources = driver_sources()
    digest = hashlib.sha256(b"".join(name.encode() + data for name, data in sorted(sources.items()))).hexdigest()[:16]
    target = cache_dir / "drivers" / digest
    if not target.is_dir():
        staging = Path(tempfile.mkdtemp(prefix="drivers-", dir=_made(cache_dir / "drivers")))
        for name, data in sources.items():
            (staging / name).write_bytes(data)
        try:
            staging.rename(target)
        except OSError:  # another process put it there first
            remove_tree(staging)
    return target


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _environment(task: Task):
    from ..tasks.recipes import task_environment

    try:
        return task_environment(task.spec)
    except TaskError as exc:
        raise TaskError(f"{task.root / 'task.toml'}: [environment]: {exc}") from None


def _store(task: Task, cache_dir: Path, commits: list[str]) -> Path:
    assert task.spec.source is not None, "only a [source] task has a store"
    try:
        return shared_store(cache_dir, task.spec.source.git, list(dict.fromkeys(commits)))
    except TaskError as exc:
        raise TaskError(f"{task.root / 'task.toml'}: field 'source.commit': {exc}") from None


def _build_source_entry(task: Task, entry: Path, store: Path) -> None:
    """A `[source]` task's entry: a bare repo borrowing the store's objects, with one commit (the files at
    the task's commit, test patch applied, hidden files left out), and the eval tree (hidden files in)."""
    source = task.spec.source
    assert source is not None, "a [source] task"
    bare = borrowing_repo(entry / "repo.git", store)
    env = {"GIT_DIR": str(bare), "GIT_INDEX_FILE": str(entry / "base.index")}
    try:
        git(bare, "read-tree", source.commit, env=env)
        if source.test_patch:
            try:
                git(bare, "apply", "--cached", str(task.root / source.test_patch), env=env)
            except WorkspaceError as exc:
                raise TaskError(f"{task.root / source.test_patch}: does not apply at {source.commit}: {exc}") from None
        full_tree = git(bare, "write-tree", env=env).strip()
        files = sorted(filter(None, git(bare, "ls-files", "-z", env=env).split("\0")))
        hidden = [f for f in files if task.hidden.match(f)]
        if hidden:
            git(bare, "update-index", "--force-remove", "-z", "--stdin", env=env, stdin="\0".join(hidden))
        tree = git(bare, "write-tree", env=env).strip()
    finally:
        (entry / "base.index").unlink(missing_ok=True)
    commit = git(bare, "commit-tree", tree, "-m", f"{task.name}: base", env={"GIT_DIR": str(bare)}).strip()
    git(bare, "update-ref", BASE_REF, commit, env={"GIT_DIR": str(bare)})
    # The full tree stays unnamed (no ref, so the episode's git never lists the hidden files), and kept:
    git(bare, "config", "gc.auto", "0", env={"GIT_DIR": str(bare)})
    if task.solution is not None:
        _check_solution(task, bare, commit, entry)
    hidden_set = set(hidden)
    _write_marker(entry, commit, full_tree, hidden, [f for f in files if f not in hidden_set], task)


def _build_entry(task: Task, entry: Path) -> None:
    assert task.repo is not None, "a task without a [source] has its repo/"
    files = task.repo_files()
    hidden = [f for f in files if task.hidden.match(f)]
    visible = [f for f in files if not task.hidden.match(f)]
    bare = entry / "repo.git"
    bare.mkdir(parents=True)
    git(bare, "init", "--quiet", "--bare")
    index_env = {
        "GIT_DIR": str(bare),
        "GIT_WORK_TREE": str(task.repo),
        "GIT_INDEX_FILE": str(entry / "base.index"),
        "GIT_LITERAL_PATHSPECS": "1",
    }
    if visible:
        git(task.repo, "add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul",
            env=index_env, stdin="\0".join(visible))
    tree = git(task.repo, "write-tree", env=index_env).strip()
    commit = git(bare, "commit-tree", tree, "-m", f"{task.name}: base", env={"GIT_DIR": str(bare)}).strip()
    git(bare, "update-ref", BASE_REF, commit, env={"GIT_DIR": str(bare)})
    (entry / "base.index").unlink()
    if task.solution is not None:
        _check_solution(task, bare, commit, entry)
    _write_marker(entry, commit, commit, hidden, visible, task)


def _write_marker(entry: Path, commit: str, eval_tree: str, hidden: list[str], visible: list[str],
                  task: Task) -> None:
    (entry / COMPLETE_MARKER).write_text(json.dumps({
        "base_commit": commit, "eval_tree": eval_tree, "hidden_files": hidden,
        "readonly_files": [f for f in visible if task.readonly.match(f)],
        "test_files": [f for f in visible if _is_test_file(f)]}))


def _write_eval_base(task: Task, entry: Path, tree: str, hidden: Sequence[str] = (), venv: Path | None = None) -> None:
    """The pristine tree every eval starts from: a tree's files, plus the hidden files of repo/ (a
    `[source]` task's eval tree holds them already), plus what the venv's project install built (see
    venv.lay_build_products)."""
    eval_base = entry / "eval-base"
    remove_tree(eval_base)
    eval_base.mkdir()
    env = {"GIT_DIR": str(entry / "repo.git"), "GIT_WORK_TREE": str(eval_base),
           "GIT_INDEX_FILE": str(entry / "eval-base.index")}
    try:
        git(eval_base, "read-tree", tree, env=env)
        git(eval_base, "checkout-index", "--all", env=env)
    finally:
        (entry / "eval-base.index").unlink(missing_ok=True)
    for rel in hidden:
        target = eval_base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        assert task.repo is not None, "hidden files come from the task's repo/"
        shutil.copy2(task.repo / rel, target, follow_symlinks=False)
    if venv is not None:
        lay_build_products(venv, eval_base)
    record(eval_base)


def ensure_eval_base(task: Task, prepared: PreparedTask) -> None:
    """Write the pristine eval tree if it is not there yet. It is written at the task's first eval on this
    machine rather than with the entry, so that making an episode writes the project's files once (its
    worktree), not twice."""
    if not prepared.eval_base.with_name(prepared.eval_base.name + FINGERPRINT_SUFFIX).exists():
        with file_lock(prepared.entry.with_suffix(".lock")):
            if not prepared.eval_base.with_name(prepared.eval_base.name + FINGERPRINT_SUFFIX).exists():
                _rewrite_eval_base(task, prepared)


def repair_eval_base(task: Task, prepared: PreparedTask) -> None:
    """Write the pristine eval tree again (after a program changed it), under the entry's lock."""
    with file_lock(prepared.entry.with_suffix(".lock")):
        _rewrite_eval_base(task, prepared)


def _rewrite_eval_base(task: Task, prepared: PreparedTask) -> None:
    meta = json.loads((prepared.entry / COMPLETE_MARKER).read_text())
    hidden = [] if task.spec.source is not None else list(prepared.hidden_files)
    _write_eval_base(task, prepared.entry, meta["eval_tree"], hidden, prepared.venv)


def _is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _check_solution(task: Task, bare: Path, commit: str, entry: Path) -> None:
    from ..tasks.patch import parse_patch

    assert task.solution is not None, "called for a task with a solution"
    try:
        patches = parse_patch(task.solution.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TaskError(f"{task.solution}: not a unified diff: {exc}") from None
    for file_patch in patches:
        for rel in filter(None, (file_patch.old_path, file_patch.new_path)):
            if task.hidden.match(rel) or task.readonly.match(rel):
                raise TaskError(f"{task.solution}: changes {rel}, which is read-only or hidden")
    env = {"GIT_DIR": str(bare), "GIT_INDEX_FILE": str(entry / "check.index")}
    try:
        git(bare, "read-tree", commit, env=env)
        git(bare, "apply", "--cached", "--check", str(task.solution), env=env)
    except WorkspaceError as exc:
        raise TaskError(f"{task.solution}: does not apply to repo/: {exc}") from None
    finally:
        (entry / "check.index").unlink(missing_ok=True)
