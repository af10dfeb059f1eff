"""Removing from a worktree everything its base commit does not hold, in one walk of the commit's folders.

Reset removes what the agent and its programs added before git restores the tracked files. git's own
`clean` walks an untracked folder by full paths, so a program that nests a folder 1,500 levels deep made it
take close to a minute (its time grows with the square of the depth); here each folder is opened relative
to its parent (never following a link), what the commit lacks is removed as a whole (see
store/removal.py), and only the commit's own folders are walked.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..store.removal import remove_at

_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_PATH = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FOLDER_MODE = 0o755  # every folder of the commit, after a reset: no bit (setgid, sticky, 0311) a program set stays
Layout = dict[str, dict[str, str]]  # folder ("" the top) -> {name: git object type: "tree", "blob", "commit"}


def commit_layout(listing: str) -> Layout:
    """The layout of a commit, from `git ls-tree -r -t -z COMMIT` output ("mode type object\tpath" records)."""
    layout: Layout = {"": {}}
    for record in filter(None, listing.split("\0")):
        meta, _, path = record.partition("\t")
        kind = meta.split(" ")[1]
        folder, _, name = path.rpartition("/")
        layout.setdefault(folder, {})[name] = kind
        if kind == "tree":
            layout.setdefault(path, {})
    return layout


def remove_untracked(root: Path, layout: Layout) -> None:
    """Remove every entry under root that the layout does not name, and every entry whose kind differs from
    the layout's (a folder where a file belongs, anything but a real folder where a folder belongs). Depth
    first, one open folder per level of the commit's tree. What cannot be opened is left for git, which then
    reports it."""
    top = _open(None, str(root))
    if top is None:
        return
    stack = [(top, "", iter(_names(top)))]
    try:
        while stack:
            fd, folder, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(stack.pop()[0])
                continue
            kind = layout.get(folder, {}).get(name)
            try:
                is_dir = stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
            except OSError:
                continue
            if kind == "tree" and is_dir:
                child = _open(fd, name)
                if child is not None:
                    stack.append((child, f"{folder}/{name}" if folder else name, iter(_names(child))))
            elif kind is None or (kind == "tree") != is_dir and kind != "commit":
                remove_at(fd, name)
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def restore_folders(root: Path, layout: Layout, stamp_ns: int | None = None) -> None:
    """Give the root and every folder of the commit the mode FOLDER_MODE and, with `stamp_ns`, that time: git
    tracks neither, so a mode or time a program set on a folder would outlive the reset and reach the next
    episode (and a folder a plain user may not read stops git). Never follows a link; what is not a real
    folder where the commit has one is left to `remove_untracked` and git."""
    folders = sorted(layout, key=lambda folder: folder.count("/"))
    for folder in folders:
        try:
            handle = os.open(str(root / folder) if folder else str(root), _DIR_PATH)
        except OSError:
            continue
        try:
            if str(root / folder) != os.path.realpath(f"/proc/self/fd/{handle}") and folder:
                continue  # reached through a link a program made on the way: not the commit's folder
            path = f"/proc/self/fd/{handle}"  # this very folder: the descriptor is not a path to follow
            try:
                os.chmod(path, FOLDER_MODE)
                if stamp_ns is not None:
                    os.utime(path, ns=(stamp_ns, stamp_ns))
            except OSError:
                pass
        finally:
            os.close(handle)


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _open(parent: int | None, name: str) -> int | None:
    try:
        return os.open(name, _DIR_NOFOLLOW, dir_fd=parent)
    except OSError:
        return None
