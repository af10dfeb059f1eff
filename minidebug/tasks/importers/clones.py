"""Local clones for an import: finding an instance's repository under `--repos`, and proving that a clone
can give every file of a commit, without touching the network. A shallow or partial clone without the
commit or some of its objects, or a corrupt pack, is a `CloneError` naming the clone, the commit and why."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class CloneError(Exception):
    """A local clone is missing, or cannot give the files of a commit an instance needs."""


def find_clone(repos: Path, repo: str) -> Path | None:
    """The local clone of `owner/name` under `repos` (`owner__name`, `name` or `owner/name`), or None."""
    owner, _, short = repo.partition("/")
    for candidate in (Path(repos) / f"{owner}__{short}", Path(repos) / short, Path(repos) / repo):
        if (candidate / ".git").exists() or (candidate / "HEAD").is_file():
            return candidate.resolve()
    return None


def check_commit(clone: Path, commit: str) -> None:
    """Read every object of `commit`'s files in `clone` (objects missing are never fetched).

    Raises:
        CloneError: the commit or some of its objects are missing, or cannot be read.
    """
    short = commit[:12]
    found = _git(clone, "cat-file", "-e", f"{commit}^{{commit}}")
    if found.returncode != 0:
        if not found.stderr.strip() or "Not a valid object name" in found.stderr:
            raise CloneError(f"{clone} lacks commit {short}{_why_incomplete(clone)}")
        raise _unreadable(clone, short, found)
    listing = _git(clone, "rev-list", "--objects", "--no-walk", "--missing=print", commit)
    if listing.returncode != 0:
        raise _unreadable(clone, short, listing)
    missing = [line for line in listing.stdout.splitlines() if line.startswith("?")]
    if missing:
        raise CloneError(f"{clone} lacks {len(missing)} object(s) of commit {short}'s files"
                         f"{_why_incomplete(clone)}")
    contents = _git(clone, "archive", "--format=tar", commit, stdout=subprocess.DEVNULL)
    if contents.returncode != 0:
        raise _unreadable(clone, short, contents)


def _unreadable(clone: Path, short: str, failed: subprocess.CompletedProcess) -> CloneError:
    lines = [line.strip() for line in failed.stderr.splitlines() if line.strip()]
    return CloneError(f"{clone}: the files of commit {short} cannot be read: "
                      f"{lines[-1][:300] if lines else 'git failed'} (a corrupt pack? `git -C {clone} fsck` says more)")


def _why_incomplete(clone: Path) -> str:
    """What the clone is, when that explains an object it lacks, and how to complete it."""
    if _git(clone, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        return f" (a shallow clone: `git -C {clone} fetch --unshallow` completes it)"
    promisors = _git(clone, "config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor)$").stdout
    if any(line.split()[-1:] != ["false"] for line in promisors.splitlines() if line.strip()):
        return " (a partial clone: its missing objects are never fetched here; clone the repository in full)"
    return f" (fetch it into the clone: `git -C {clone} fetch origin`)"


def _git(clone: Path, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """git in `clone`, not allowed to reach any remote (so a partial clone never fetches what it lacks)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}
    return subprocess.run(["git", "-c", "protocol.allow=never", "-C", str(clone), *args], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace", env=env)


def file_at(clone: Path, commit: str, path: str) -> str | None:
    """The text of `path` at `commit` in `clone`, or None when the commit has no such file."""
    shown = _git(clone, "show", f"{commit}:{path}")
    return shown.stdout if shown.returncode == 0 else None
