"""Landlock (Linux ≥ 5.13): the sandbox's file-system part where user namespaces (and so bwrap) are not
available. Unprivileged and per process: a program may read only the folders it is granted and write only
its own; with ABI 4 or later, TCP connect and bind are refused too; with ABI 6 or later, it can neither
signal a process outside its own ruleset's domain (the host, another program of the episode) nor reach an
abstract unix socket made outside it.

The ruleset is built once in the host (`Ruleset`) and applied in each child between fork and exec
(`Ruleset.restrict`), which is all a child does with it.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
READ = EXECUTE | READ_FILE | READ_DIR
_ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect (ABI 4+)
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6+


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=1)
def abi() -> int:
    """The kernel's Landlock ABI version (0: not available)."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


class Ruleset:
    """A Landlock ruleset: `read` folders readable, `write` folders writable, the files under `devices`
    readable and writable (no device can be made there), everything else out of reach.

    Raises:
        OSError: Landlock is not available, or a rule cannot be added.
    """

    def __init__(self, read: list[Path], write: list[Path], hide: Sequence[Path] = (), devices: Sequence[Path] = ()):
        hide = [Path(h) for h in hide]
        version = abi()
        if version < 1:
            raise OSError("Landlock is not available on this kernel")
        self.all_fs = _ALL_BY_ABI.get(version, _ALL_BY_ABI[5])
        create, self._add, self._restrict = _SYSCALLS[platform.machine()]
        self.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
        attr = _RulesetAttr(self.all_fs, _NET_TCP if version >= 4 else 0, self.scoped)
        size = 24 if version >= 6 else 16 if version >= 4 else 8  # the fields this kernel knows
        libc = self._libc = _libc()  # bound now: the child between fork and exec only calls it
        libc.syscall.restype = ctypes.c_long
        self.fd = int(libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        try:
            for folder in read:
                for granted in _grant_except(Path(folder), hide):
                    above_hidden = any(granted in h.parents for h in hide)
                    self._allow(granted, READ_DIR if above_hidden else READ)
            for folder in write:
                self._allow(Path(folder), self.all_fs)
            for folder in devices:
                self._allow(Path(folder), READ | WRITE_FILE)
        except BaseException:
            os.close(self.fd)
            raise

    def _allow(self, path: Path, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        try:
            if not path.is_dir():
                access &= EXECUTE | READ_FILE | WRITE_FILE | (1 << 14) | (1 << 15)  # file rights only
            rule = _PathBeneathAttr(access & self.all_fs, fd)
            if self._libc.syscall(self._add, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path} failed")
        finally:
            os.close(fd)

    def restrict(self) -> None:
        """In a child before exec: no new privileges, then this ruleset for good. Raises OSError on failure."""
        libc = self._libc
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(self._restrict, self.fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _grant_except(folder: Path, hide: list[Path]) -> list[Path]:
    """folder, or, when a hidden path lies below it, every entry along the way except the hidden ones."""
    inside = [h for h in hide if folder in h.parents]
    if any(h == folder for h in hide):
        return []
    if not inside:
        return [folder]
    granted: list[Path] = [folder]  # listed (READ_DIR only, see Ruleset); the hidden entries stay unreadable
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            granted += _grant_except(entry, inside)
        elif entry not in inside:
            granted.append(entry)
    return granted
