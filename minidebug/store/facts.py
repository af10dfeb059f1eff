"""Facts measured once per task on a machine (the test ids it counts, the venv modules its tests load), kept
as small files in the task's cache entry and guarded like its cached trees.

Each fact is written whole (a staging file renamed over it) beside a record of what the host wrote: its
size, inode, mtime and ctime. Reading a fact whose file no longer matches that record, as after a program
without a sandbox rewrote it to count only a test that passes, gives None, as a fact never measured does:
the caller measures it again. (Inside a sandbox the cache is out of programs' reach.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RECORD_SUFFIX = ".written"


def write(entry: Path, name: str, value: Any) -> None:
    """Store a fact (any JSON value) under `name` in a task's cache entry."""
    path = entry / name
    staging = path.with_name(f".{name}.{os.getpid()}")
    staging.write_text(json.dumps(value))
    staging.replace(path)
    record = path.with_name(name + RECORD_SUFFIX)
    staging.write_text(json.dumps(_stamp(path)))
    staging.replace(record)


def read(entry: Path, name: str) -> Any | None:
    """A fact as `write` stored it, or None if there is none, or if its file is not the one the host wrote."""
    path = entry / name
    try:
        recorded = json.loads(path.with_name(name + RECORD_SUFFIX).read_text())
        if recorded != _stamp(path):
            return None
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _stamp(path: Path) -> list[int]:
    info = os.stat(path, follow_symlinks=False)
    return [info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns]
