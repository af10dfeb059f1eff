"""One object store per source repository, shared by every `[source]` task made from it.

The store is a bare clone kept in the cache (`repos/<name>-<hash of the URL>.git`), made once and fetched
again only when a task names a commit it does not have. A task's own bare repo borrows its objects
(git's alternates) and holds one new commit: the files at the task's commit with its test patch applied,
without parents. So making a task from a known repository copies no file, and the episode's git shows no
history, nor any later commit that may hold the fix.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import TaskError, WorkspaceError
from .gitcmd import git
from .locks import file_lock
from .removal import remove_tree

COMPLETE_MARKER = "minidebug-complete"


def store_path(cache_dir: Path, url: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]) or "repo"
    return cache_dir / "repos" / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"


def shared_store(cache_dir: Path, url: str, commits: list[str]) -> Path:
    """The store of a repository, holding these commits (cloned or fetched when it does not yet).

    Raises:
        TaskError: a commit is not in the repository.
        WorkspaceError: git could not clone or fetch it.
    """
    store = store_path(cache_dir, url)
    if (store / COMPLETE_MARKER).exists() and all(has_commit(store, c) for c in commits):
        return store
    store.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(store.with_suffix(".lock")):
        if not (store / COMPLETE_MARKER).exists():
            remove_tree(store)
            try:
                git(store.parent, "clone", "--quiet", "--bare", url, str(store))
            except BaseException:
                remove_tree(store)
                raise
            (store / COMPLETE_MARKER).write_text(url)
        missing = [c for c in commits if not has_commit(store, c)]
        if missing:
            _fetch(store, url, missing)
        for commit in missing:
            if not has_commit(store, commit):
                raise TaskError(f"commit {commit} is not in {url}")
    return store


def has_commit(store: Path, commit: str) -> bool:
    try:
        git(store, "cat-file", "-e", f"{commit}^{{commit}}", env={"GIT_DIR": str(store)})
    except WorkspaceError:
        return False
    return True


def _fetch(store: Path, url: str, commits: list[str]) -> None:
    """Fetch every branch and tag, then (where the server allows it) the commits themselves."""
    env = {"GIT_DIR": str(store)}
    git(store, "fetch", "--quiet", "--force", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", env=env)
    for commit in commits:
        if not has_commit(store, commit):
            try:
                git(store, "fetch", "--quiet", url, commit, env=env)
            except WorkspaceError:
                pass  # the caller names the commit that is missing


def borrowing_repo(path: Path, store: Path) -> Path:
    """A new bare repo at path whose objects come from the store."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--bare")
    (path / "objects" / "info" / "alternates").write_text(str((store / "objects").resolve()) + "\n")
    return path


def checkout(store: Path, commit: str, target: Path) -> None:
    """A standalone clone of the store at a commit (with its own `.git`: some builds ask git for a version)."""
    git(target.parent, "clone", "--quiet", "--shared", "--no-checkout", str(store), str(target))
    git(target, "checkout", "--quiet", "--detach", commit)
