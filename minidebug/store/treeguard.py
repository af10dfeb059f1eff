"""Tamper detection for cached trees that every episode shares: the venvs and the pristine eval trees.

Inside a sandbox they are out of reach (the venv mounted read-only, the cache not there at all). Without
one, a program of an episode could write a `.pth` file or a pytest plugin into a venv's site-packages, or
rewrite a test in the pristine tree that eval starts from, and raise the score of every later episode. So a
tree's fingerprint (every entry's name, type, size, mtime and ctime) is recorded when it is built, compared
the first time a process uses it, and from then on every folder of the tree is watched with inotify: a check
is one non-blocking read. Where inotify is unavailable each check walks the tree again.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from pathlib import Path

_IN_NONBLOCK_CLOEXEC = os.O_NONBLOCK | os.O_CLOEXEC
_WATCHED = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)  # modify, attrib, close_write,
# moved_from, moved_to, create, delete, delete_self, move_self
_IN_ONLYDIR_DONT_FOLLOW = 0x01000000 | 0x02000000
FINGERPRINT_SUFFIX = ".fingerprint"


def fingerprint(venv: Path) -> str:
    """A hash of the name, type, size, mtime and ctime of every entry below a tree (links not followed)."""
    entries = []
    stack = [str(venv)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    info = entry.stat(follow_symlinks=False)
                    entries.append((entry.path, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            entries.append((folder, -1, -1, -1, -1))
    entries.sort()
    return hashlib.blake2b(repr(entries).encode(), digest_size=16).hexdigest()


def record(venv: Path) -> None:
    """Store the fingerprint of a tree that was just built (beside it, not inside it)."""
    venv.with_name(venv.name + FINGERPRINT_SUFFIX).write_text(fingerprint(venv))


class _Watch:
    """inotify watches on every folder of one venv; `changed()` says whether anything happened since."""

    def __init__(self, venv: Path):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(_IN_NONBLOCK_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        try:
            for folder, _, _ in os.walk(venv):
                if libc.inotify_add_watch(self.fd, os.fsencode(folder), _WATCHED | _IN_ONLYDIR_DONT_FOLLOW) < 0:
                    raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder} failed")
        except BaseException:
            os.close(self.fd)
            raise

    def changed(self) -> bool:
        try:
            return bool(os.read(self.fd, 1 << 16))
        except BlockingIOError:
            return False

    def close(self) -> None:
        os.close(self.fd)


class TreeGuard:
    """Says whether a tree still is as it was built. One per tree per process (see `guard`)."""

    def __init__(self, venv: Path):
        self.venv = venv
        self._lock = threading.Lock()
        self._watch: _Watch | None = None
        self._armed = False

    def intact(self) -> bool:
        """True if the tree is unchanged since it was built. Cheap after the first call in a process."""
        with self._lock:
            if self._armed and self._watch is not None:
                if not self._watch.changed():
                    return True
                self._disarm()
                return False
            if not self._armed:
                try:
                    self._watch = _Watch(self.venv)
                except OSError:
                    self._watch = None
            ok = self._matches_record()
            self._armed = ok
            if not ok:
                self._disarm()
            return ok

    def _matches_record(self) -> bool:
        try:
            recorded = self.venv.with_name(self.venv.name + FINGERPRINT_SUFFIX).read_text().strip()
        except OSError:
            return False
        return recorded == fingerprint(self.venv)

    def _disarm(self) -> None:
        if self._watch is not None:
            self._watch.close()
        self._watch, self._armed = None, False


_GUARDS: dict[Path, TreeGuard] = {}
_GUARDS_LOCK = threading.Lock()


def guard(tree: Path) -> TreeGuard:
    """The process's guard of this tree (made on first use; shared by every env that uses the tree)."""
    with _GUARDS_LOCK:
        found = _GUARDS.get(tree)
        if found is None:
            found = _GUARDS[tree] = TreeGuard(tree)
        return found
