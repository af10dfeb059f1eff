"""Removing a tree that a program may have shaped: without following any link, however deep it is or long its
paths, whatever modes its folders were given, and bounded in the work it does."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..sandbox.reaper import OWNER_FILE, shielded
from .treeguard import MAX_ENTRIES

_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> bool:
    """Remove path (a file, a link, or a folder with everything below it) without following any link, however
    deep the tree or long its paths: each folder's children are moved up into the folder being emptied, so at
    most two folders are open at a time and nothing recurses. A stop signal waits until it is done (see
    `shielded`), and a folder's owner file goes last, so a removal cut short (SIGKILL) leaves one `minidebug gc`
    still knows. Never raises (but the deferred KeyboardInterrupt); True if path is gone."""
    with shielded():
        return _remove_tree(Path(path))


def _remove_tree(path: Path) -> bool:
    try:  # the caller's path up to its parent is trusted; the entry and what is below it are not
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return not os.path.lexists(path)
    try:
        remove_at(parent, path.name)
    finally:
        os.close(parent)
    return not os.path.lexists(path)


def remove_at(parent: int, name: str) -> None:
    """Remove the entry `name` of the open folder `parent` (see remove_tree). Missing is fine; never raises."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        _quietly(os.unlink, name, dir_fd=parent)
        return
    try:
        top = _open_writable_dir(parent, name)
    except OSError:
        _quietly(os.rmdir, name, dir_fd=parent)
        return
    try:
        _empty(top, keep=OWNER_FILE)
        _quietly(os.unlink, OWNER_FILE, dir_fd=top)
        _empty(top)
    finally:
        os.close(top)
    _quietly(os.rmdir, name, dir_fd=parent)


def _empty(top: int, keep: str | None = None) -> None:
    """Empty the open folder top, but for the file `keep`, flattening subfolders into it; bounded by MAX_ENTRIES
    renames and unlinks."""
    budget, counter, before = MAX_ENTRIES, 0, None
    while budget > 0:
        try:
            names = [name for name in os.listdir(top) if name != keep]
        except OSError:
            return
        if not names or names == before:  # empty, or nothing more can go (what is left, stays)
            return
        before = names
        for name in names:
            budget -= 1
            try:
                info = os.stat(name, dir_fd=top, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                _quietly(os.unlink, name, dir_fd=top)
                continue
            try:
                os.rmdir(name, dir_fd=top)
                continue
            except OSError:
                pass
            try:
                child = _open_writable_dir(top, name)
            except OSError:
                continue
            try:
                for grandchild in os.listdir(child):
                    budget -= 1
                    while True:  # a name of ours that is not taken yet
                        counter += 1
                        moved = f".minidebug-rm-{counter}"
                        try:
                            os.stat(moved, dir_fd=top, follow_symlinks=False)
                        except FileNotFoundError:
                            break
                        except OSError:
                            pass
                    _quietly(os.rename, grandchild, moved, src_dir_fd=child, dst_dir_fd=top)
            except OSError:
                pass
            finally:
                os.close(child)
            _quietly(os.rmdir, name, dir_fd=top)


def _open_writable_dir(parent: int, name: str) -> int:
    """Open a folder (never a link) and make it listable and writable by us (a program may have chmod'ed it)."""
    handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        if stat.S_IMODE(os.fstat(handle).st_mode) & 0o700 != 0o700:
            _quietly(os.chmod, f"/proc/self/fd/{handle}", 0o700)  # this very folder: the fd is not a path
        try:
            return os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:  # no /proc
            return os.open(name, _DIR_NOFOLLOW, dir_fd=parent)
    finally:
        os.close(handle)


def _quietly(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except OSError:
        pass
