"""The pristine tree a room's next eval starts from: the task's base commit with its hidden files (kept in
the cache), copied into the room's eval tree folder (`EVAL_TREE`) while the agent thinks, and checked
untouched before use.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from ..errors import WorkspaceError
from ..workspace.safefs import empty_folder

EVAL_TREE, EVAL_SCRATCH = "eval", "scratch"  # a room's (or episode's) folders: the tree, and HOME and TMPDIR of a run


def copy_pristine(eval_base: Path, tree: Path) -> None:
    """Copy the task's pristine tree into `tree` (an empty folder), modes and links as they are.

    Raises:
        WorkspaceError: the copy failed.
    """
    copied = subprocess.run(["cp", "-a", "--", f"{eval_base}/.", str(tree)], capture_output=True, text=True)
    if copied.returncode != 0:
        raise WorkspaceError(f"could not copy the task's pristine tree: {copied.stderr.strip()}")


class PristineCopy:
    """The next eval's pristine tree, copied into `folder`'s eval tree folder (emptied) on a thread of its own
    while the agent thinks, for a task without hidden files (nothing in that tree is secret). Before use, every
    entry's inode, change time, mode, size and link count are compared with what they were once it was laid:
    no write, rename, link, chmod or attribute change leaves all of them as they were, so a tree any program
    touched in between is not used (the eval then lays its own).
    """

    def __init__(self, folder: Path, eval_base: Path):
        self.folder, self.eval_base = folder, eval_base
        self._laid: list[tuple] | None = None
        self._thread = threading.Thread(target=self._lay, name="minidebug-pristine-copy", daemon=True)
        self._thread.start()

    def _lay(self) -> None:
        try:
            copy_pristine(self.eval_base, empty_folder(self.folder, EVAL_TREE))
            self._laid = tree_state(self.folder / EVAL_TREE)
        except (OSError, WorkspaceError):  # the eval lays its own
            pass

    def wait(self) -> None:
        """Until the copy is done (or failed)."""
        self._thread.join()

    def holds(self, eval_base: Path) -> bool:
        """Whether the eval tree is `eval_base`'s pristine tree, laid here and untouched since."""
        self.wait()
        try:
            return self._laid is not None and eval_base == self.eval_base \
                and tree_state(self.folder / EVAL_TREE) == self._laid
        except OSError:
            return False


def tree_state(tree: Path) -> list[tuple]:
    """Each entry of `tree` (itself included), links not followed: path, inode, change time, mode, size,
    link count."""
    def entry(rel: str, info: os.stat_result) -> tuple:
        return rel, info.st_ino, info.st_ctime_ns, info.st_mode, info.st_size, info.st_nlink

    found = [entry("", os.lstat(tree))]
    folders = [""]
    while folders:
        rel = folders.pop()
        with os.scandir(tree / rel if rel else tree) as entries:
            for item in entries:
                found.append(entry(rel + item.name, item.stat(follow_symlinks=False)))
                if item.is_dir(follow_symlinks=False):
                    folders.append(rel + item.name + "/")
    return sorted(found)
