"""The task's own files a warm eval interpreter compiles ahead (see drivers/minidebug_precompiled.py): which (learned
once per task on a machine, from the same run that learns the venv modules) and their pristine bytes.

What the run reported is only a list of names: each must be a relative `.py` path with no `..`, and its bytes
are read from the task's pristine tree without following a link, hidden files never. The interpreter gets
those bytes, never the agent's, and a run uses the code only for a file whose bytes are exactly those.
"""

from __future__ import annotations

import base64
from pathlib import Path, PurePosixPath

from ..store import facts
from ..store.locks import file_lock
from ..workspace.safefs import read_entry

TREE_MODULES_FILE = "warm-tree-modules.json"  # in a task's cache entry: the tree's files its tests import
KINDS = ("plain", "rewrite")  # imported as any module, or a test module pytest rewrote
MAX_FILES = 5000
MAX_BYTES = 32 * 1024 * 1024  # sent to the interpreter in all


def learned_yet(entry: Path) -> bool:
    return facts.read(entry, TREE_MODULES_FILE) is not None


def learn(entry: Path, found: tuple[tuple[str, str], ...]) -> None:
    """Record, once per task entry, the tree's files a run of the task's own tests imported (as it reported)."""
    if learned_yet(entry):
        return
    names = sorted({(rel, kind) for rel, kind in found if _valid(rel) and kind in KINDS})[:MAX_FILES]
    with file_lock(entry.with_suffix(".learned.lock")):
        if facts.read(entry, TREE_MODULES_FILE) is None:
            facts.write(entry, TREE_MODULES_FILE, [list(name) for name in names])


def _valid(rel: object) -> bool:
    if not isinstance(rel, str) or not rel.endswith(".py") or "\0" in rel or "\\" in rel:
        return False
    path = PurePosixPath(rel)
    return not path.is_absolute() and ".." not in path.parts and str(path) == rel


def files_to_compile(entry: Path, pristine: Path, tree: Path, hidden: frozenset[str]) -> list[list[str]]:
    """[path in `tree`, kind, base64 of the pristine bytes] for each learned file (see `learn`) that is a
    regular file of `pristine` and not hidden, up to MAX_BYTES in all; [] before the task's first eval."""
    names = facts.read(entry, TREE_MODULES_FILE)
    out, total = [], 0
    for item in names if isinstance(names, list) else []:
        if not (isinstance(item, list) and len(item) == 2 and _valid(item[0]) and item[1] in KINDS):
            continue
        rel, kind = item
        if rel in hidden:
            continue
        found = read_entry(pristine, rel)
        if found is None or found[0] != "file":
            continue
        total += len(found[1])
        if total > MAX_BYTES:
            break
        out.append([str(tree / rel), kind, base64.b64encode(found[1]).decode("ascii")])
    return out
