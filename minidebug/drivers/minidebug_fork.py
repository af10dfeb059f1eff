"""A warm eval interpreter's forks (see minidebug_eval.serve): what a `fork` request asks to run, the signals
the host sends a forked pdb session, and the forked child's set-up before it runs anything: a session of its
own, its descriptors, its signal handling, its Landlock scopes and the seccomp filter.

Imported by the warm interpreter only, before it says it is ready; it runs no code of the project.
"""

import json
import os

from minidebug_protocol import FORK, INTERRUPT, KILL

_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP = 1, 38, 22


def fork_request(channel, message):
    """What to run in a forked child instead of the tests (`fork {json}`: a pdb session or a probe's run, see
    minidebug_forked), or None for any other message."""
    if not message.startswith(FORK + b" "):
        return None
    while not message.endswith(b"\n") and len(message) < 1 << 20:
        chunk = channel.recv(1 << 16)
        if not chunk:
            return None
        message += chunk
    try:
        program = json.loads(message[len(FORK) + 1:])
    except ValueError:
        return None
    if not (isinstance(program, dict) and program.get("program") in ("pdb", "probe")
            and isinstance(program.get("sys_path"), list)):
        return None
    return program


def serve_session(channel, pid):
    """While a forked pdb session runs: on `int` from the host, SIGINT to its process group (Ctrl-C); on
    `kill`, or when the host is gone, SIGKILL. Returns once the child has ended: False if the host is gone."""
    import select
    import signal

    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([channel, pidfd], [], [])
            if pidfd in ready:
                return True
            try:
                data = channel.recv(64)
            except OSError:
                data = b""
            for word in data.split() if data else [KILL]:
                try:
                    os.killpg(pid, signal.SIGINT if word == INTERRUPT else signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not data:
                os.waitpid(pid, 0)
                return False
    finally:
        os.close(pidfd)


def become_child(libc, output, instructions, session_made, scopes, terminal=False):
    """In a forked child: a session of its own (then `session_made` is closed, which the parent waits for),
    `output` as stdout and stderr, an empty pipe of its own as stdin (or, with `terminal`, `output` is a
    terminal: its controlling terminal, and stdin, stdout and stderr), SIGKILL when the warm parent dies,
    Python's SIGINT handler, not dumpable (as the warm parent, and as a fresh run: see minidebug_eval.run), a
    Landlock domain of its own with `scopes` (ABI 6: so it cannot signal the warm parent, which shares its
    domain otherwise), then the seccomp filter the host built (see seccomp.py)."""
    import ctypes
    import signal

    os.setsid()
    if terminal:
        import fcntl
        import termios

        fcntl.ioctl(output, termios.TIOCSCTTY, 0)
    os.close(session_made)
    for target in (0, 1, 2) if terminal else (1, 2):
        os.dup2(output, target)
    os.close(output)
    if not terminal:
        empty, closed = os.pipe()  # stdin of its own, empty: nothing a run sets on it reaches the next
        os.close(closed)
        os.dup2(empty, 0)
        os.close(empty)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has it (serve ignores it)
    if (scopes or instructions) and libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        os._exit(126)  # what both need
    if scopes:
        _scope_landlock(libc, scopes)
    if instructions:
        class Instruction(ctypes.Structure):
            _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                        ("k", ctypes.c_uint32)]

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Instruction))]

        code = (Instruction * len(instructions))(*[Instruction(*i) for i in instructions])
        program = Program(len(instructions), code)
        if libc.prctl(_PR_SET_SECCOMP, 2, ctypes.byref(program), 0, 0) != 0:
            os._exit(126)  # never run a child without the filter


def _scope_landlock(libc, scopes):
    """A Landlock domain of this process's own that handles no file or network access, only `scopes` (no new
    privileges already set; never run the child without it)."""
    import ctypes

    class Attributes(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    create, restrict = 444, 446  # landlock_create_ruleset, landlock_restrict_self (x86-64 and arm64 alike)
    libc.syscall.restype = ctypes.c_long
    attributes = Attributes(0, 0, scopes)
    ruleset = libc.syscall(create, ctypes.byref(attributes), ctypes.c_size_t(ctypes.sizeof(attributes)),
                           ctypes.c_uint32(0))
    if ruleset < 0 or libc.syscall(restrict, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        os._exit(126)
    os.close(ruleset)
