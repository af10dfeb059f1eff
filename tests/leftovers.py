"""A pytest plugin of the suite's: the processes a failed test leaves are killed and reported as its own.

Before each test, the live processes of this test process are noted: its descendants and any process working
in its temp folder (the orphan of an episode it ran). After the teardown of a test that failed (a timeout
included), every process of those that was not there before is killed, and the teardown reports an error
naming them, so that they cannot fail a later test's "nothing is left" check. A passing test's processes are
left alone: a module's shared fixtures (a pool of warm interpreters, a pdb session) outlive the test that
started them, and the tests check their own leftovers.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from minidebug.sandbox.reaper import processes, send, start_time, working_in

_BEFORE = pytest.StashKey[set]()
_FAILED = pytest.StashKey[bool]()


def live_processes() -> set[tuple[int, str]]:
    """This test process's live processes, as (pid, start time): its descendants and what works in its temp
    folder."""
    table = processes()
    children: dict[int, list[int]] = {}
    for stat in table:
        children.setdefault(stat.ppid, []).append(stat.pid)
    mine, stack = set(), [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            mine.add(child)
            stack.append(child)
    folder = [Path(tempfile.gettempdir()).resolve()]
    mine |= {stat.pid for stat in table if stat.pid != os.getpid() and working_in(stat.pid, folder)}
    return {(pid, start) for pid in mine if (start := start_time(pid)) is not None}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_BEFORE] = live_processes()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.stash[_FAILED] = True
    if call.when != "teardown" or not item.stash.get(_FAILED, False):
        return
    left = live_processes() - item.stash.get(_BEFORE, set())
    if not left:
        return
    lines = [f"{pid}: {_command_line(pid)}" for pid, _ in sorted(left)]
    send([pid for pid, start in left if start_time(pid) == start])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and live_processes() & left:
        time.sleep(0.05)
    report.outcome = "failed"
    report.longrepr = f"the failed test left {len(left)} process(es), now killed:\n" + "\n".join(lines)


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip() or "?"
    except OSError:
        return "?"
