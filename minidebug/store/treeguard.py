"""Tamper detection for cached trees that every episode shares: the venvs, the pristine eval trees and the
tasks' bare git repositories.

Inside a sandbox they are out of reach (the venv mounted read-only, the cache not there at all). Without
one, a program of an episode could write a `.pth` file or a pytest plugin into a venv's site-packages, or
rewrite a test in the pristine tree that eval starts from, and raise the score of every later episode. So a
tree's fingerprint (every entry's name, type, size, mtime and ctime) is recorded when it is built, compared
the first time a process uses it, and from then on every folder of the tree is watched with inotify: a check
is one non-blocking read. Where inotify is unavailable each check walks the tree again. A tree whose entries'
times alone changed still holds what was built (see manifest.py and `TreeGuard.intact`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from . import manifest
from .inotify import LOST, NOTHING, TIMES, TreeWatch

FINGERPRINT_SUFFIX = ".fingerprint"


# Host-side walks of trees a program may have shaped are iterative and bounded: no tree is deep or large
# enough to exhaust the host's stack, file descriptors or time.
MAX_DEPTH = 512
MAX_ENTRIES = 2_000_000
OVER_LIMIT = "over-limit"  # the fingerprint of a tree past the limits: never matches a record


class TooLarge(OSError):
    """A tree is deeper than MAX_DEPTH or holds more than MAX_ENTRIES entries."""


def walk_folders(top: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    """Every folder below top, top included, without following links (iterative); names in `ignore` are
    skipped at top level.

    Raises:
        TooLarge: the tree is past MAX_DEPTH or MAX_ENTRIES.
    """
    folders, stack, seen = [], [(str(top), 0)], 0
    while stack:
        folder, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TooLarge(f"{top}: deeper than {MAX_DEPTH} levels")
        folders.append(folder)
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        raise TooLarge(f"{top}: more than {MAX_ENTRIES} entries")
                    if entry.is_dir(follow_symlinks=False) and not (depth == 0 and entry.name in ignore):
                        stack.append((entry.path, depth + 1))
        except TooLarge:
            raise
        except OSError:
            continue
    return folders


def _hash(entries: list[tuple[str, os.stat_result | None]]) -> str:
    """A hash of the name, type, size, mtime and ctime of every entry below a tree (see `record`)."""
    rows = [(path, -1, -1, -1, -1) if info is None else
            (path, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns) for path, info in entries]
    return hashlib.blake2b(repr(rows).encode(), digest_size=16).hexdigest()


def record(venv: Path, ignore: tuple[str, ...] = ()) -> None:
    """Store the fingerprint and the manifest of a tree that was just built (beside it, not inside it)."""
    entries = manifest.stat_entries(venv, ignore, MAX_DEPTH, MAX_ENTRIES)
    if entries is not None:
        manifest.write(venv, entries)
    _record_fingerprint(venv, OVER_LIMIT if entries is None else _hash(entries))


def _record_fingerprint(venv: Path, value: str) -> None:
    manifest.write_whole(venv.with_name(venv.name + FINGERPRINT_SUFFIX), value)


class TreeGuard:
    """Says whether a tree still is as it was built. One per tree per process (see `guard`). Top-level names
    in `ignore` are not watched (a bare repo's `worktrees/`, which the host writes as episodes come and go)."""

    def __init__(self, venv: Path, ignore: tuple[str, ...] = ()):
        self.venv, self.ignore = venv, ignore
        self._lock = threading.Lock()
        self._watch: TreeWatch | None = None
        self._armed = False

    @property
    def watch(self) -> TreeWatch | None:
        """The inotify watch `intact()` armed over the tree (None before its first call, after a check that
        failed, or where inotify is unavailable); its `seen()` says what happened since."""
        return self._watch

    def intact(self) -> bool:
        """True if the tree holds what was built. Cheap after the first call in a process. A tree seen
        written since (by inotify) is not, even where what was written is gone again: a program may have
        read it meanwhile. Where only times, modes or owners changed, they are compared with the manifest;
        where nothing was seen (the first call, a lost event queue, no inotify), the content is too."""
        with self._lock:
            seen = NOTHING
            if self._armed and self._watch is not None:
                seen = self._watch.seen()
                if seen == NOTHING or (seen == TIMES and self._times_only()):
                    return True
            self._disarm()  # a new watch, then a full check
            try:
                self._watch = TreeWatch(walk_folders(self.venv, self.ignore), self.ignore)
            except OSError:
                self._watch = None
            ok = seen in (NOTHING, LOST) and self._matches_record()
            self._armed = ok
            if not ok:
                self._disarm()
            return ok

    def _times_only(self) -> bool:
        """After attribute changes alone: the tree still has the manifest's entries, modes, owners and sizes
        (nothing was written: its content is as built), and nothing but attributes changed while it was
        compared. Then its fingerprint and manifest take the new times."""
        entries = manifest.stat_entries(self.venv, self.ignore, MAX_DEPTH, MAX_ENTRIES)
        if entries is None:
            return False
        recorded = manifest.as_built(self.venv, entries, read_content=False)
        if recorded is None or self._watch is None or self._watch.seen() not in (NOTHING, TIMES):
            return False
        manifest.refresh(self.venv, entries, recorded)
        _record_fingerprint(self.venv, _hash(entries))
        return True

    def _matches_record(self) -> bool:
        """The tree matches its fingerprint, or its manifest once its content is read (then both are
        recorded anew: its times alone changed)."""
        try:
            recorded = self.venv.with_name(self.venv.name + FINGERPRINT_SUFFIX).read_text().strip()
        except OSError:
            return False
        entries = manifest.stat_entries(self.venv, self.ignore, MAX_DEPTH, MAX_ENTRIES)
        if entries is None:
            return False
        now = _hash(entries)
        if now == recorded:
            if not manifest.exists(self.venv):  # a tree recorded before manifests were: it is as built now
                manifest.write(self.venv, entries)
            return True
        built = manifest.as_built(self.venv, entries, read_content=True)
        if built is None:
            return False
        manifest.refresh(self.venv, entries, built)
        _record_fingerprint(self.venv, now)
        return True

    def _disarm(self) -> None:
        if self._watch is not None:
            self._watch.close()
        self._watch, self._armed = None, False


_GUARDS: dict[Path, TreeGuard] = {}
_GUARDS_LOCK = threading.Lock()


def guard(tree: Path, ignore: tuple[str, ...] = ()) -> TreeGuard:
    """The process's guard of this tree (made on first use; shared by every env that uses the tree)."""
    with _GUARDS_LOCK:
        found = _GUARDS.get(tree)
        if found is None:
            found = _GUARDS[tree] = TreeGuard(tree, ignore)
        return found


def forget(tree: Path) -> None:
    """Drop the process's guard of a tree that minidebug itself is about to rebuild (the next `guard` starts
    from its new record)."""
    with _GUARDS_LOCK:
        found = _GUARDS.pop(tree, None)
    if found is not None:
        with found._lock:
            found._disarm()
