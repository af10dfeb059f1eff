"""File operations on trees that a program of the episode can change while we look.

The host never follows a path the agent made: every component below the root is opened with
`O_NOFOLLOW` relative to its parent's fd, so a symlink (or a directory swapped for one mid-way)
makes the call fail instead of reaching outside the tree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..store.removal import remove_at

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_FILE_BYTES = 64 * 1024 * 1024  # a single file eval copies out of the worktree


@contextmanager
def open_parent(root: Path, rel: str, make_dirs: bool = False) -> Iterator[tuple[int, str]]:
    """Yield (fd of rel's parent directory, rel's last component), every step taken without following links;
    with make_dirs, missing folders on the way are made.

    Raises:
        OSError: a component is missing, is not a directory, or is a symlink (ELOOP/ENOTDIR).
    """
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise OSError(f"bad relative path {rel!r}")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            if make_dirs:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        yield fd, parts[-1]
    finally:
        os.close(fd)


def read_entry(root: Path, rel: str) -> tuple[str, bytes, int] | None:
    """What `rel` is under root, without following links: ("file", bytes, mode), ("link", target, 0) or None.

    None for anything else (directory, FIFO, socket, device, missing) or a file over MAX_FILE_BYTES.
    """
    try:
        with open_parent(root, rel) as (parent, name):
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                return "link", os.readlink(name, dir_fd=parent).encode(), 0
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
            try:
                opened = os.fstat(fd)
                if not stat.S_ISREG(opened.st_mode):  # swapped between the stat and the open
                    return None
                chunks, size = [], 0
                while size <= MAX_FILE_BYTES:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                if size > MAX_FILE_BYTES:
                    return None
                return "file", b"".join(chunks), stat.S_IMODE(opened.st_mode)
            finally:
                os.close(fd)
    except OSError:
        return None


def remove_entry(root: Path, rel: str) -> None:
    """Remove the file, link or whole directory at rel under root (never following links); missing is fine."""
    try:
        with open_parent(root, rel) as (parent, name):
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                remove_at(parent, name)  # iterative: no tree is too deep for it
            else:
                os.unlink(name, dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError):
        pass


def empty_folder(root: Path, name: str) -> Path:
    """The folder `name` directly under root, emptied (so that what holds it, a sandbox's mount or a process's
    working directory, sees what is put there next), or made anew if it is missing or not a real folder.
    Nothing of the folder's own carries over either: its mode and times are set anew and its extended
    attributes removed (a program may have changed them to pass something to the next)."""
    folder = root / name
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        remove_entry(root, name)
        folder.mkdir(mode=0o700)
        return folder
    try:
        for entry in os.listdir(fd):
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                remove_at(fd, entry)
            else:
                os.unlink(entry, dir_fd=fd)
        os.fchmod(fd, 0o700)
        os.utime(fd)
        for attribute in os.listxattr(fd):
            try:
                os.removexattr(fd, attribute)
            except OSError:  # one only the kernel sets (a security label)
                pass
    finally:
        os.close(fd)
    return folder


def write_entry(root: Path, rel: str, kind: str, data: bytes, mode: int) -> None:
    """Create the file or symlink `rel` under root (a tree the host made), replacing what is in the way."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        folder = root.joinpath(*parts[:depth])
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        folder.mkdir(exist_ok=True)
    target = root / rel
    if target.is_symlink() or target.exists():
        remove_entry(root, rel)
    if kind == "link":
        os.symlink(data.decode(errors="surrogateescape"), target)
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode & 0o777 or 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def write_file(root: Path, rel: str, data: bytes) -> None:
    """Write `rel` under root (an agent-controlled tree): missing folders are made, and no component, the file
    included, is followed if it is a symlink (the write fails instead). An existing file keeps its mode.

    Raises:
        OSError: a component is a symlink or not a folder, or the write failed.
    """
    with open_parent(root, rel, make_dirs=True) as (parent, name):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=parent)
        with os.fdopen(target, "wb") as handle:
            handle.write(data)
