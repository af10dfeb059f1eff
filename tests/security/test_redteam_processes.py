"""A program the tests start cannot reach the eval driver (its memory, its descriptors, ptrace) nor change
another process's limits, priority or scheduling; what a run's uid 0 could set on the warm interpreter
through /proc ends that interpreter. Fresh and forked runs, every sandbox. Nothing here writes outside the
sandbox but to processes the test itself started."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from minidebug.sandbox.choose import bwrap_works, landlock_works

SANDBOXES = [None, pytest.param("landlock", marks=pytest.mark.skipif(not landlock_works(), reason="no Landlock")),
             pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap"))]

# Started by the test, as the agent's code would: what it can do to the driver, its parent.
REACH = r'''
import ctypes, os, resource, sys
parent = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
seen = []
try:
    with open(f"/proc/{parent}/mem", "rb") as memory:
        seen.append("mem opened")
except OSError:
    seen.append("mem refused")
pidfd = libc.syscall(434, parent, 0)  # pidfd_open
copied = libc.syscall(438, pidfd, 0, 0) if pidfd >= 0 else -1  # pidfd_getfd of its stdin
seen.append("fd taken" if copied >= 0 else "fd refused")
PTRACE_SEIZE = 0x4206
seen.append("traced" if libc.ptrace(PTRACE_SEIZE, parent, 0, 0) == 0 else "trace refused")
try:
    resource.prlimit(parent, resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
    seen.append("limits set")
except OSError:
    seen.append("limits refused")
seen.append("priority set" if libc.setpriority(0, parent, os.getpriority(os.PRIO_PROCESS, parent)) == 0
            else "priority refused")
resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))  # its own: allowed
os.nice(0)
os.sched_setaffinity(0, os.sched_getaffinity(0))
print(" ".join(seen))
'''

TEST = f'''
import subprocess
import sys

REACH = {REACH!r}


def test_reach():
    done = subprocess.run([sys.executable, "-c", REACH], capture_output=True, text=True)
    assert False, "REACH " + done.stdout.strip() + done.stderr.strip()[-300:]
'''

REFUSED = "REACH mem refused fd refused trace refused limits refused priority refused"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_program_the_tests_start_cannot_reach_the_driver_or_change_another_process(make_env, task_dir, sandbox):
    task = task_dir({"test_reach.py": TEST}, toml='description = "d"\neval = "python -m pytest -q"\n')
    fresh = make_env(task, sandbox=sandbox, eval_mode="fresh")
    fresh.reset()
    results = [fresh.evaluate()]  # the task's tests are known from here on: the next env's evals are forked
    env = make_env(task, sandbox=sandbox, terminate_on_success=False)
    env.reset()
    results += [env.evaluate() for _ in range(2)]
    assert [r.forked for r in results] == [False, True, True]
    # Root with no sandbox keeps its capabilities (CAP_SYS_PTRACE among them): nothing holds it off the driver.
    expected = "limits refused priority refused" if sandbox is None and os.geteuid() == 0 else REFUSED
    for result in results:
        assert expected in result.output, result.output[-3000:]


def test_unconfined_the_same_program_reaches_its_parent():
    """What the filter and the driver's settings take away: as its own child, the program does all of it."""
    done = subprocess.run([sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, "
                           f"'-c', {REACH!r}])"], capture_output=True, text=True)
    assert "mem opened" in done.stdout and "limits set" in done.stdout, done.stdout + done.stderr


@pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap")
def test_under_bwrap_a_setting_a_run_writes_on_the_warm_interpreter_reaches_no_later_run(make_env, task_dir):
    test = """
import os


def test_parent_setting():
    path = f"/proc/{os.getppid()}/oom_score_adj"
    with open(path) as file:
        value = file.read().strip()
    try:
        with open(path, "w") as file:  # the run's parent: a process of the sandbox (the warm interpreter)
            file.write("500")
    except OSError:
        pass
    assert value != "500", "a setting an earlier run made"
"""
    env = make_env(task_dir({"test_setting.py": test}, toml='description = "d"\neval = "python -m pytest -q"\n'),
                   sandbox="bwrap", terminate_on_success=False)
    env.reset()
    results = [env.evaluate() for _ in range(4)]
    assert [r.tests for r in results] == [{"test_setting.py::test_parent_setting": "passed"}] * 4, \
        results[-1].output[-2000:]


INIT = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
try:
    open("/proc/1/mem", "rb").close()
    seen = "mem opened"
except OSError:
    seen = "mem refused"
print(seen, "traced" if libc.ptrace(0x4206, 1, 0, 0) == 0 else "trace refused")
'''


@pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap")
def test_under_bwrap_a_forked_run_cannot_trace_the_sandboxs_first_process(make_env, task_dir):
    """bwrap's own init runs with no seccomp filter: traced, it would make any call for the run. A warm
    interpreter is its sandbox's first process instead, and it is not dumpable."""
    test = f'''
import subprocess
import sys


def test_init():
    done = subprocess.run([sys.executable, "-c", {INIT!r}], capture_output=True, text=True)
    assert False, "INIT " + done.stdout.strip()
'''
    env = make_env(task_dir({"test_init.py": test}, toml='description = "d"\neval = "python -m pytest -q"\n'),
                   sandbox="bwrap", terminate_on_success=False)
    env.reset()
    env.evaluate()
    for _ in range(2):
        result = env.evaluate()
        assert result.forked and "INIT mem refused trace refused" in result.output, result.output[-2000:]


STDIN_STATE = '''\
import fcntl
import os

F_GETPIPE_SZ, F_SETPIPE_SZ = 1032, 1031


def test_stdin():
    fds = {}
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor
            pass
    pipes = sorted(fd for fd, target in fds.items() if target.startswith("pipe:") and fd not in (1, 2))
    seen = {fd: (fds[fd], fcntl.fcntl(fd, F_GETPIPE_SZ)) for fd in pipes}
    print("SEEN", seen)
    for fd in pipes:
        fcntl.fcntl(fd, F_SETPIPE_SZ, 1 << 19)  # a mark the next run would find on a pipe it shares
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_forked_run_shares_no_pipe_with_the_next(make_env, task_dir, sandbox):
    # Every forked run held the warm interpreter's stdin (pytest's capture keeps a copy): a run that set its
    # size (or flags, or owner signal) passed a number to the next eval, of this episode or another's.
    toml = 'description = "d"\neval = "python -m pytest -q -s"\n'
    env = make_env(task_dir({"test_stdin.py": STDIN_STATE}, toml=toml), sandbox=sandbox, terminate_on_success=False)
    env.reset()
    results = [env.evaluate() for _ in range(3)]
    assert [r.forked for r in results][1:] == [True, True]
    for result in results:
        seen = re.search(r"SEEN (\{.*\})", result.output)
        assert seen, result.output[-1500:]
        assert "524288" not in seen.group(1), seen.group(1)  # no pipe arrives already marked
