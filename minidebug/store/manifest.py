"""What a guarded tree held when it was built, so that a change of its entries' times alone is told apart from
a change of what they hold.

A program that may only read a tree can still set a file's times to now where the sandbox cannot stop it
(Landlock has no rule for file times); the tree's fingerprint, which covers times, then no longer matches,
and rebuilding a shared venv for that would fail the evals of every episode using it meanwhile. So beside
the fingerprint each tree has a manifest: every entry's mode, owner, size and times, and a hash of each
file's content (a link's target). `as_built` compares a tree with it: the same entries, modes, owners and
sizes, and where an entry's times moved, the same content."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
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


def exists(top: Path) -> bool:
    return top.with_name(top.name + SUFFIX).is_file()


def write(top: Path, entries: list[tuple[str, os.stat_result | None]]) -> None:
    """Record the manifest of a tree just built, from its `stat_entries`."""
    recorded = {}
    for path, info in entries:
        content = _content(path, info) if info is not None else None
        recorded[path] = None if info is None or content is None else _record(info, content)
    write_whole(top.with_name(top.name + SUFFIX), json.dumps(recorded))


def as_built(top: Path, entries: list[tuple[str, os.stat_result | None]], read_content: bool) -> dict | None:
    """The manifest, if the tree, whose current `stat_entries` are given, holds what it says: the same
    entries, modes, owners and sizes, and with `read_content`, where an entry's times moved, the same content
    (without, the caller knows that nothing was written); None if it differs or has no manifest."""
    try:
        recorded = json.loads(top.with_name(top.name + SUFFIX).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.keys() != {path for path, _ in entries}:
        return None
    for path, info in entries:
        was = recorded[path]
        if info is None or not isinstance(was, list) or len(was) != 7:
            return None
        if was[:4] != [info.st_mode, info.st_uid, info.st_gid, info.st_size]:
            return None
        if read_content and was[4:6] != [info.st_mtime_ns, info.st_ctime_ns] and _content(path, info) != was[6]:
            return None
    return recorded


def refresh(top: Path, entries: list[tuple[str, os.stat_result | None]], recorded: dict) -> None:
    """Take the entries' times as they were when `entries` were read (what `as_built` accepted)."""
    write_whole(top.with_name(top.name + SUFFIX),
             json.dumps({path: _record(info, recorded[path][6]) for path, info in entries if info is not None}))


def _record(info: os.stat_result, content: str) -> list:
    return [info.st_mode, info.st_uid, info.st_gid, info.st_size, info.st_mtime_ns, info.st_ctime_ns, content]


def _content(path: str, info: os.stat_result) -> str | None:
    """A file's content hash, a link's target, "" for anything else; None if it cannot be read or is no
    longer the file `info` describes. A file written while it is read gives the hash of what was read: it
    matches the recorded one only if every byte read was as built (times may move meanwhile: a program that
    sets them again and again must not make the tree count as changed)."""
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
        if (seen.st_ino, seen.st_dev) != (info.st_ino, info.st_dev):
            return None
        digest = hashlib.blake2b(digest_size=16)
        while chunk := os.read(handle, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(handle)


def write_whole(path: Path, text: str) -> None:
    """Write `path` whole or not at all (a reader never sees half of it; the last writer wins)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
