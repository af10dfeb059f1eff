"""Watching trees for changes with inotify: one instance per process, shared by every tree's watch.

The kernel gives a user 128 inotify instances in all; one per guarded tree would run out in a process that
uses many tasks (each has its venv, pristine eval tree and git repository), and every tree past that would be
walked at each check instead. So the process keeps one instance and each `TreeWatch` adds its folders to it;
whoever reads the events sorts them to the watches by watch descriptor (a folder two watches hold counts for
both). A child made by fork() starts without it (the descriptor it inherits is its parent's queue).
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading

NOTHING, TIMES, LOST, CHANGED = "nothing", "times", "lost", "changed"  # what a watch saw, least to worst
_SEVERITY = (NOTHING, TIMES, LOST, CHANGED)
_WATCHED = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)  # modify, attrib, close_write,
# moved_from, moved_to, create, delete, delete_self, move_self
_IN_ONLYDIR_DONT_FOLLOW = 0x01000000 | 0x02000000
_IN_ATTRIB, _IN_Q_OVERFLOW, _IN_ISDIR = 0x4, 0x4000, 0x40000000


class _Instance:
    """The process's inotify instance and which watches hold each of its watch descriptors."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.holders: dict[int, set[TreeWatch]] = {}

    def add(self, folder: str, holder: TreeWatch) -> int:
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _WATCHED | _IN_ONLYDIR_DONT_FOLLOW)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder} failed")
        self.holders.setdefault(wd, set()).add(holder)
        return wd

    def remove(self, wd: int, holder: TreeWatch) -> None:
        holders = self.holders.get(wd)
        if holders is None:
            return
        holders.discard(holder)
        if not holders:
            del self.holders[wd]
            self._libc.inotify_rm_watch(self.fd, wd)

    def read(self) -> None:
        """Hand every queued event to the watches that hold its descriptor (a lost queue to all of them)."""
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            offset = 0
            while offset + 16 <= len(data):
                wd, mask, _, length = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16:offset + 16 + length].rstrip(b"\0")
                offset += 16 + length
                if mask & _IN_Q_OVERFLOW:
                    for holders in self.holders.values():
                        for holder in holders:
                            holder.note(LOST)
                    continue
                kind = TIMES if mask & ~_IN_ISDIR == _IN_ATTRIB else CHANGED
                for holder in self.holders.get(wd, ()):
                    if not (wd == holder.top and name in holder.ignore):
                        holder.note(kind)


_LOCK = threading.Lock()
_instance: _Instance | None = None


def _shared() -> _Instance:
    global _instance
    if _instance is None:
        _instance = _Instance()
    return _instance


def _forget_in_child() -> None:
    global _LOCK, _instance
    _LOCK = threading.Lock()  # another thread may have held it at the fork
    if _instance is not None:
        os.close(_instance.fd)
        _instance = None


os.register_at_fork(after_in_child=_forget_in_child)


class TreeWatch:
    """Watches on `folders` (the first is the tree's top; what happens to its entries named in `ignore` aside).

    Raises:
        OSError: inotify is unavailable, or a folder could not be watched.
    """

    def __init__(self, folders: list[str], ignore: tuple[str, ...] = ()):
        self.ignore = {os.fsencode(name) for name in ignore}
        self.top = -1
        self._wds: list[int] = []
        self._seen = NOTHING
        with _LOCK:
            self._instance = _shared()
            try:
                for folder in folders:
                    self._wds.append(self._instance.add(folder, self))
                self.top = self._wds[0] if self._wds else -1  # set before any read: the lock is held
            except BaseException:
                self._release()
                raise

    def note(self, kind: str) -> None:
        self._seen = max(self._seen, kind, key=_SEVERITY.index)

    def seen(self) -> str:
        """What happened since the last call: NOTHING, TIMES (only attribute changes: times, mode, owner,
        links; nothing written, made, moved or removed), LOST (the event queue overflowed) or CHANGED
        (anything else), the worst of what the events say."""
        with _LOCK:
            if self._instance is _instance:  # else this process is a fork's child: the queue is not its own
                self._instance.read()
            else:
                self._seen = LOST
            seen, self._seen = self._seen, NOTHING
        return seen

    def close(self) -> None:
        """Remove the watches (idempotent)."""
        with _LOCK:
            self._release()

    def _release(self) -> None:
        if self._instance is _instance:
            for wd in self._wds:
                self._instance.remove(wd, self)
        self._wds = []
