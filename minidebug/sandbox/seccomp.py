"""A seccomp filter that keeps a program in the process group it was started in.

Where no PID namespace (bwrap) or pids cgroup holds an episode's processes together, killing the process
group is what ends them, so a program must not leave it: `setsid` and `setpgid` fail with EPERM for it and
everything it starts. (A program that needs a session of its own, say a test that starts a daemon with
`start_new_session=True`, then gets that error; inside bwrap it does not.)
"""

from __future__ import annotations

import ctypes
import errno
import platform

_ARCHES = {"x86_64": (0xC000003E, 112, 109), "aarch64": (0xC00000B7, 157, 154)}  # audit arch, setsid, setpgid
_LOAD_WORD, _JUMP_IF_EQUAL, _RETURN = 0x20, 0x15, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Instruction))]


def available() -> bool:
    return platform.machine() in _ARCHES


class StayInGroup:
    """The filter, built in the host; `apply()` runs in a child between fork and exec."""

    def __init__(self):
        arch, setsid, setpgid = _ARCHES[platform.machine()]
        code = [
            (_LOAD_WORD, 0, 0, 4),               # the syscall's architecture
            (_JUMP_IF_EQUAL, 0, 3, arch),        # another one: allow
            (_LOAD_WORD, 0, 0, 0),               # the syscall's number
            (_JUMP_IF_EQUAL, 2, 0, setsid),
            (_JUMP_IF_EQUAL, 1, 0, setpgid),
            (_RETURN, 0, 0, _ALLOW),
            (_RETURN, 0, 0, _ERRNO | errno.EPERM),
        ]
        self._code = (_Instruction * len(code))(*[_Instruction(*i) for i in code])
        self._program = _Program(len(code), self._code)
        self._libc = ctypes.CDLL(None, use_errno=True)

    def apply(self) -> None:
        """Install the filter in this process (inherited by everything it starts). Raises OSError on failure."""
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._program), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
