"""The tree eval scores: the task's base, plus the agent's changes to files it owns, plus the hidden files.

Eval never runs in the agent's worktree. Each eval copies the task's pristine tree (the base commit with
the hidden files, kept in the cache) to a fresh folder, lays over it every file the agent changed, added
or deleted — except the files the task owns (tests, read-only and hidden files, the test harness) and what
is not part of the text patch (binary files, bytecode, compiled extensions, nested repositories: see
`Workspace.text_changes`) — and removes the folder afterwards. So whatever the agent did to the task's
files by any means (pdb, bash, the program itself) never reaches the score, hidden files never appear
where the agent can look, and what the tests write stays in a folder that is gone before the next
observation.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from ..runner.pristine import EVAL_TREE, PristineCopy, copy_pristine
from ..tasks.harness import Harness
from ..workspace.safefs import empty_folder, read_entry, remove_entry, write_entry
from ..workspace.worktree import Workspace

# What pytest reads above a tree with no configuration of its own: the first configuration file found walking
# up from the tests, and conftest.py files below the root dir that file makes.
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "tox.ini",
                "setup.cfg", "conftest.py")


def pytest_files_above(tree: Path) -> list[str]:
    """The files of `PYTEST_FILES` in the folders above `tree` (links included, never followed): any program
    of the machine's users may leave one in a shared temp dir, and pytest would take its configuration and
    conftest.py from there, so a run with one is not scored."""
    return [str(folder / name) for folder in tree.parents for name in PYTEST_FILES
            if os.path.lexists(folder / name)]


def _link_stays_inside(rel: str, target: str) -> bool:
    if target.startswith("/"):
        return False
    depth = len(PurePosixPath(rel).parent.parts)
    for part in PurePosixPath(target).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return False
    return True


def lay_changes(workspace: Workspace, tree: Path, harness: Harness, laid: list[str] | None = None) -> list[str]:
    """Copy the agent's text patch (see `Workspace.text_changes`) from the worktree onto `tree`, except what
    `harness` owns; returns notes on what was left out, and adds the files it wrote to `laid`."""
    notes, refused, left_out = [], [], []
    laid = [] if laid is None else laid
    changes, not_text = workspace.text_changes()
    for rel, reason in not_text:
        if harness.owns(rel):
            refused.append(rel)
        elif reason == workspace.ALLOWED_BINARY:
            changes.append(("M", rel, read_entry(workspace.root, rel)))
        else:
            left_out.append((rel, reason))
    for status, rel, entry in changes:
        if harness.owns(rel):
            refused.append(rel)
            continue
        if status == "D":
            remove_entry(tree, rel)
            continue
        if entry is None:
            notes.append(f"not used by eval: {rel} (not a regular file, or too large)")
            continue
        kind, data, mode = entry
        if kind == "link" and not _link_stays_inside(rel, data.decode(errors="replace")):
            notes.append(f"not used by eval: {rel} (a symlink that points outside the project)")
            continue
        if kind == "file":
            refusal = harness.refuses_text(rel, data.decode("utf-8", errors="replace"), workspace.base_text)
            if refusal:
                refused.append(rel)
                continue
        write_entry(tree, rel, kind, data, mode)
        laid.append(rel)
    if left_out:
        shown = ", ".join(f"{rel} ({reason})" for rel, reason in left_out[:10])
        notes.insert(0, f"not used by eval, which scores only the text patch (see env.diff()): {shown}"
                        f"{f' and {len(left_out) - 10} more' if len(left_out) > 10 else ''}")
    if refused:
        notes.insert(0, f"eval used the task's own version of {', '.join(sorted(refused)[:10])}"
                        f"{' and more' if len(refused) > 10 else ''} (tests and test configuration belong "
                        "to the task)")
    return notes


@contextmanager
def eval_tree(workspace: Workspace, harness: Harness, folder: Path, without: tuple[str, ...] = (),
              pristine: PristineCopy | None = None) -> Iterator[tuple[Path, list[str], list[str]]]:
    """A fresh eval tree in `folder` for one eval, with what `harness` owns from the task, less the files in
    `without`; yields (its path, notes, the files laid from the agent's changes) and empties it afterwards.
    The pristine tree is the one copied ahead (`pristine`) where that holds it untouched, else copied here. The tree's
    folder itself stays (see `EVAL_TREE`), so that a warm eval interpreter started in it sees each new tree.

    Raises:
        WorkspaceError: the pristine tree could not be copied.
    """
    tree = folder / EVAL_TREE
    try:
        if without or pristine is None or not pristine.holds(workspace.prepared.eval_base):
            tree = empty_folder(folder, EVAL_TREE)
            copy_pristine(workspace.prepared.eval_base, tree)
        for rel in without:
            remove_entry(tree, rel)
        laid: list[str] = []
        notes = lay_changes(workspace, tree, harness, laid)
        yield tree, notes, laid
    finally:
        empty_folder(folder, EVAL_TREE)
