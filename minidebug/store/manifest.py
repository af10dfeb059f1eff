"""What a guarded tree held when it was built, so that a change of its entries' times alone is told apart from
a change of what they hold.

A program that may only read a tree can still set a file's times to now where the sandbox cannot stop it
(Landlock has no rule for file times); the tree's fingerprint, which covers times, then no longer matches,
and rebuilding a shared venv for that would fail the evals of every episode using it meanwhile. So beside
the fingerprint each tree has a manifest: every entry's mode, owner, size and times, and a hash of each
file's content (a link's target). `unchanged_but_times` compares a tree with it: the same entries, modes,
owners and sizes, and where an entry's times moved, the same content (read while the file stays as it was
seen). Only then is the tree as built; anything else is a change.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

SUFFIX = ".manifest"
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def stat_entries(top: Path, ignore: tuple[str, ...], max_depth: int, max_entries: int
                 ) -> list[tuple[str, os.stat_result | None]] | None:
    """Every entry below `top` (links not followed; top-level names in `ignore` left out) with its stat, a
    folder that could not be listed with None, sorted by path; None past `max_depth` or `max_entries`."""
    entries: list[tuple[str, os.stat_result | None]] = []
    stack = [(str(top), 0)]
    while stack:
        folder, depth = stack.pop()
        if depth > max_depth or len(entries) > max_entries:
            return None
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    if depth == 0 and entry.name in ignore:
                        continue
                    entries.append((entry.path, entry.stat(follow_symlinks=False)))
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
        except OSError:
            entries.append((folder, None))
    entries.sort(key=lambda pair: pair[0])
    return entries


def write(top: Path, entries: list[tuple[str, os.stat_result | None]]) -> None:
    """Record the manifest of a tree just built, from its `stat_entries`."""
    recorded = {}
    for path, info in entries:
        content = _content(path, info) if info is not None else None
        recorded[path] = None if info is None or content is None else _record(info, content)
    _replace(top.with_name(top.name + SUFFIX), json.dumps(recorded))


def unchanged_but_times(top: Path, entries: list[tuple[str, os.stat_result | None]]) -> bool:
    """True if the tree, whose current `stat_entries` are given, holds what its manifest says (times aside);
    the manifest then takes the entries' times as they are now. False if it differs, or has no manifest."""
    try:
        recorded = json.loads(top.with_name(top.name + SUFFIX).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or recorded.keys() != {path for path, _ in entries}:
        return False
    refreshed = {}
    for path, info in entries:
        was = recorded[path]
        if info is None or not isinstance(was, list) or len(was) != 7:
            return False
        if was[:4] != [info.st_mode, info.st_uid, info.st_gid, info.st_size]:
            return False
        if was[4:6] != [info.st_mtime_ns, info.st_ctime_ns] and _content(path, info) != was[6]:
            return False
        refreshed[path] = _record(info, was[6])
    _replace(top.with_name(top.name + SUFFIX), json.dumps(refreshed))
    return True


def _record(info: os.stat_result, content: str) -> list:
    return [info.st_mode, info.st_uid, info.st_gid, info.st_size, info.st_mtime_ns, info.st_ctime_ns, content]


def _content(path: str, info: os.stat_result) -> str | None:
    """A file's content hash (read only while it stays the file `info` describes), a link's target, "" for
    anything else; None if it cannot be read or changed while it was read."""
    if stat.S_ISLNK(info.st_mode):
        try:
            return "->" + os.readlink(path)
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode):
        return ""
    try:
        handle = os.open(path, _READ)
    except OSError:
        return None
    try:
        seen = os.fstat(handle)
        if (seen.st_ino, seen.st_dev, seen.st_ctime_ns) != (info.st_ino, info.st_dev, info.st_ctime_ns):
            return None
        digest = hashlib.blake2b(digest_size=16)
        while chunk := os.read(handle, 1 << 20):
            digest.update(chunk)
        if os.fstat(handle).st_ctime_ns != info.st_ctime_ns:  # written while it was read
            return None
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(handle)


def _replace(path: Path, text: str) -> None:
    """Write `path` whole or not at all (a reader never sees half of it; the last writer wins)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
