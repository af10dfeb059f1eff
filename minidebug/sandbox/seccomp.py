"""A seccomp filter that keeps a program in the process group it was started in (and, under Landlock, off
the network), and lets it leave nothing for a later program where no folder minidebug empties holds it:
no System V IPC object, POSIX message queue, key, extended attribute or file flag; nor tell another
program anything through a file both may read (its locks, watches, cached pages).

Where no PID namespace (bwrap) or pids cgroup holds an episode's processes together, killing the process
group is what ends them, so a program must not leave it: `setsid` and `setpgid` fail with EPERM for it and
everything it starts. (A program that needs a session of its own, say a test that starts a daemon with
`start_new_session=True`, then gets that error; inside bwrap it does not.)

Only the native system call ABI gets through: a call made through another one (on x86-64 the 32-bit
`int 0x80` entry) kills the process, and an x32 call (its number has bit 30 set) fails with EPERM, so no
second set of numbers for `setsid` slips past.

The kernel keeps System V shared memory, semaphores and message queues, POSIX message queues and keys
(keyrings) after the program that made them has ended, outside any folder minidebug empties, and extended
attributes and file flags stay on a folder that is emptied; so `shmget`, `semget`, `msgget`, `mq_open`,
`add_key`, `request_key`, `keyctl`, the calls that set or remove an extended attribute and the `ioctl`
requests that set a file's flags (`chattr`), generation number, encryption or verity fail with EPERM for
every program. (Python's own `multiprocessing` and `shared_memory` use files in /dev/shm instead, which
stay allowed.) io_uring's operations (setxattr among them) never pass through a seccomp filter, so
`io_uring_setup`, `io_uring_enter` and `io_uring_register` fail with EPERM for every program too, and the
calls that set another process's limits, priority or scheduling (`prlimit64`, `setpriority`, `ioprio_set`,
`sched_setparam`, `sched_setscheduler`, `sched_setaffinity`, `sched_setattr`) work on the caller alone
(pid 0), since neither Landlock nor a shared user keeps a program off a warm interpreter or the host's
processes there. Under bwrap, whose PID namespace holds a program's processes together, the filter refuses
only those.

Landlock does not cover a file's mode, owner or times, so a program could change those of any file its
user owns (every file, for root), the venv's that other episodes share among them, and pass bits to them
that way: under Landlock `chmod` and `chown` in all their forms fail with EPERM too, and so does setting a
file's times, to now or to anything else (`utime`, `utimes`, `futimesat`, `utimensat`: `os.utime` raises
PermissionError, `touch` creates a file that does not exist yet but reports the error, and changes nothing of
one that does).

Programs of two episodes (or an eval's scored run and a later program) share files they may only read: the
venv, the interpreter, the system's. Nothing of such a file may carry a bit from one to the other, so for
every program a lock is a no-op that succeeds (`flock`, and `fcntl`'s F_SETLK, F_SETLKW and their OFD forms:
one program's lock is never another's to see, nor, then, its own second process's), leases and directory
notices fail with EPERM (`fcntl` F_SETLEASE, F_NOTIFY), there are no watches (`inotify_init`,
`inotify_init1`, `inotify_add_watch`, `fanotify_init`, `fanotify_mark`: ENOSYS, as on a kernel without
them), and no program evicts a file's pages from the page cache or asks which are cached (`posix_fadvise`
DONTNEED and NOREUSE, `madvise` MADV_COLD and MADV_PAGEOUT are no-ops that succeed; `mincore` and `cachestat`
fail with ENOSYS; `preadv2` and `pwritev2` with RWF_NOWAIT fail with EOPNOTSUPP). What is left is timing:
a program can read a file no one has read for long and so bring it into the cache, which a later read by
another is faster for, once per file until memory pressure evicts it.

Under Landlock, which refuses TCP but not UDP or unix sockets named by a path, the filter also refuses
`socket()` (EACCES) for every address family, so no program reaches anything outside by a socket it makes,
as in bwrap's empty network namespace; `socketpair()` (what asyncio and multiprocessing use inside one
program) still works.
"""

from __future__ import annotations

import ctypes
import errno
import platform

# audit arch, setsid, setpgid, socket
_ARCHES = {"x86_64": (0xC000003E, 112, 109, 41), "aarch64": (0xC00000B7, 157, 154, 198)}
# shmget, semget, msgget, mq_open, add_key, request_key, keyctl; setxattr, lsetxattr, fsetxattr, removexattr,
# lremovexattr, fremovexattr, setxattrat, removexattrat
_LEFT_BEHIND = {"x86_64": (29, 64, 68, 240, 248, 249, 250, 188, 189, 190, 197, 198, 199, 463, 466),
                "aarch64": (194, 190, 186, 180, 217, 218, 219, 5, 6, 7, 14, 15, 16, 463, 466)}
# io_uring_setup, io_uring_enter, io_uring_register (the same numbers on both)
_IO_URING = (425, 426, 427)
# Calls that act on a process named by their arguments, allowed on the caller alone (each argument index must
# hold the value given): prlimit64(0, ...); sched_setparam, sched_setscheduler, sched_setaffinity and
# sched_setattr(0, ...); setpriority(PRIO_PROCESS, 0, ...); ioprio_set(IOPRIO_WHO_PROCESS, 0, ...)
_SELF_ONLY = {"x86_64": ((302, ((0, 0),)), (142, ((0, 0),)), (144, ((0, 0),)), (203, ((0, 0),)), (314, ((0, 0),)),
                         (141, ((0, 0), (1, 0))), (251, ((0, 1), (1, 0)))),
              "aarch64": ((261, ((0, 0),)), (118, ((0, 0),)), (119, ((0, 0),)), (122, ((0, 0),)), (274, ((0, 0),)),
                          (140, ((0, 0), (1, 0))), (30, ((0, 1), (1, 0))))}
# chmod, fchmod, fchmodat, fchmodat2, chown, fchown, lchown, fchownat (arm64 has only the *at and f* forms)
_OWNERSHIP = {"x86_64": (90, 91, 268, 452, 92, 93, 94, 260), "aarch64": (52, 53, 452, 54, 55)}
# ioctl, and its requests that set what stays on a file or folder however it is emptied: FS_IOC_SETFLAGS and
# FS_IOC_SETVERSION (both sizes), FS_IOC_FSSETXATTR, FS_IOC_SET_ENCRYPTION_POLICY, FS_IOC_ADD_ENCRYPTION_KEY,
# FS_IOC_ENABLE_VERITY
_IOCTL = {"x86_64": 16, "aarch64": 29}
_FILE_ATTRIBUTE_IOCTLS = (0x40086602, 0x40046602, 0x40087602, 0x40047602, 0x401C5820, 0x800C6613, 0xC0506617,
                          0x40806685)
# utime, utimes, futimesat, utimensat (arm64 has only the last)
_SET_TIMES = {"x86_64": (132, 235, 261, 280), "aarch64": (88,)}
# Calls by which one program could tell another something through a file both may read (see the docstring):
# flock (a no-op that succeeds); inotify_init, inotify_init1, inotify_add_watch, fanotify_init, fanotify_mark,
# mincore, cachestat (ENOSYS, as on a kernel without them)
_FLOCK = {"x86_64": 73, "aarch64": 32}
_WATCHES = {"x86_64": (253, 294, 254, 300, 301, 27, 451), "aarch64": (26, 27, 262, 263, 232, 451)}
# (number, argument index, [(values, errno)]): the argument's values that fail with errno (0: a no-op that
# succeeds). fcntl: F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW a no-op, F_SETLEASE and F_NOTIFY EPERM;
# fadvise64: POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE a no-op; madvise: MADV_COLD, MADV_PAGEOUT a no-op.
_ARGUMENT_RULES = {
    "x86_64": ((72, 1, [((6, 7, 37, 38), 0), ((1024, 1026), errno.EPERM)]), (221, 3, [((4, 5), 0)]),
               (28, 2, [((20, 21), 0)])),
    "aarch64": ((25, 1, [((6, 7, 37, 38), 0), ((1024, 1026), errno.EPERM)]), (223, 3, [((4, 5), 0)]),
                (233, 2, [((20, 21), 0)])),
}
# preadv2, pwritev2 with RWF_NOWAIT (which tells whether a file's pages are cached): EOPNOTSUPP
_NOWAIT = {"x86_64": (327, 328), "aarch64": (286, 287)}
_RWF_NOWAIT = 0x08
_X32_BIT = 0x40000000  # x86-64's x32 ABI: same audit arch, numbers from here up
_LOAD_WORD, _JUMP_IF_EQUAL, _JUMP_IF_AT_LEAST, _JUMP_IF_SET, _RETURN = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO, _KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _self_only(number: int, conditions: tuple[tuple[int, int], ...]) -> list[tuple[int, int, int, int]]:
    """Instructions that allow syscall `number` only where each (argument index, value) holds, else EPERM."""
    size = 4 * len(conditions) + 2  # what follows the first jump
    code = [(_JUMP_IF_EQUAL, 0, size, number)]
    for index, value in conditions:
        low = 16 + 8 * index  # seccomp_data.args[index]: its low word, then its high word
        at = len(code)  # the low word's load; the refusal is the block's last instruction, at `size`
        code += [(_LOAD_WORD, 0, 0, low), (_JUMP_IF_EQUAL, 0, size - at - 2, value),
                 (_LOAD_WORD, 0, 0, low + 4), (_JUMP_IF_EQUAL, 0, size - at - 4, 0)]
    return code + [(_RETURN, 0, 0, _ALLOW), (_RETURN, 0, 0, _ERRNO | errno.EPERM)]


def _argument_rule(number: int, index: int, tests: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Instructions that, for syscall `number`, return `_ERRNO | error` where its argument `index` (the low
    word) passes one of `tests` ((jump opcode, value, error): equal to the value, or with its bits set), and
    allow it otherwise."""
    count = len(tests)
    code = [(_JUMP_IF_EQUAL, 0, 2 * count + 2, number), (_LOAD_WORD, 0, 0, 16 + 8 * index)]
    for opcode, value, _ in tests:  # a hit jumps `count` instructions on: past the later tests and ALLOW, to
        code.append((opcode, count, 0, value))  # the earlier tests' returns and then its own
    code.append((_RETURN, 0, 0, _ALLOW))
    code += [(_RETURN, 0, 0, _ERRNO | error) for _, _, error in tests]
    return code


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Instruction))]


def available() -> bool:
    return platform.machine() in _ARCHES


class ProgramFilter:
    """The filter, built in the host; `apply()` runs in a child between fork and exec. With `keep_group`, it
    refuses `setsid` and `setpgid`; with `no_sockets`, `socket()`; with `no_ownership`, changing a file's
    mode, owner or times."""

    def __init__(self, keep_group: bool = True, no_sockets: bool = False, no_ownership: bool = False):
        machine = platform.machine()
        arch, setsid, setpgid, socket = _ARCHES[machine]
        refused = [(number, errno.EPERM) for number in _LEFT_BEHIND[machine] + _IO_URING]
        refused += [(number, errno.EPERM) for number in _OWNERSHIP[machine] + _SET_TIMES[machine]] \
            if no_ownership else []
        refused += [(setsid, errno.EPERM), (setpgid, errno.EPERM)] if keep_group else []
        refused += [(socket, errno.EACCES)] if no_sockets else []
        refused += [(_FLOCK[machine], 0)] + [(number, errno.ENOSYS) for number in _WATCHES[machine]]
        # A jump's offsets count the instructions it skips.
        code = [
            (_LOAD_WORD, 0, 0, 4),                    # the syscall's architecture
            (_JUMP_IF_EQUAL, 1, 0, arch),
            (_RETURN, 0, 0, _KILL_PROCESS),           # another ABI (32-bit `int 0x80`, arm32 compat)
            (_LOAD_WORD, 0, 0, 0),                    # the syscall's number
        ]
        if machine == "x86_64":
            code += [(_JUMP_IF_AT_LEAST, 0, 1, _X32_BIT), (_RETURN, 0, 0, _ERRNO | errno.EPERM)]  # x32: EPERM
        for number, error in refused:
            code += [(_JUMP_IF_EQUAL, 0, 1, number), (_RETURN, 0, 0, _ERRNO | error)]
        for number, conditions in _SELF_ONLY[machine]:
            code += _self_only(number, conditions)
        for number, index, rules in _ARGUMENT_RULES[machine]:
            code += _argument_rule(number, index, [(_JUMP_IF_EQUAL, value, error) for values, error in rules
                                                   for value in values])
        for number in _NOWAIT[machine]:
            code += _argument_rule(number, 5, [(_JUMP_IF_SET, _RWF_NOWAIT, errno.EOPNOTSUPP)])
        code += _argument_rule(_IOCTL[machine], 1, [(_JUMP_IF_EQUAL, request, errno.EPERM)  # the kernel reads
                                                    for request in _FILE_ATTRIBUTE_IOCTLS])  # 32 bits of it
        code.append((_RETURN, 0, 0, _ALLOW))
        self.instructions = tuple(code)  # (code, jt, jf, k) each: what a warm eval interpreter installs itself
        self._code = (_Instruction * len(code))(*[_Instruction(*i) for i in code])
        self._program = _Program(len(code), self._code)
        self._libc = ctypes.CDLL(None, use_errno=True)

    def apply(self) -> None:
        """Install the filter in this process (inherited by everything it starts). Raises OSError on failure."""
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._program), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
