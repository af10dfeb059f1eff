"""The suite's own guard (tests/leftovers.py): a failed test's processes are killed and reported as its own."""

import sys
from pathlib import Path

from minidebug.sandbox.reaper import processes
from tests.conftest import cmdlines

ROOT = Path(__file__).resolve().parents[2]

INNER = '''
import subprocess, sys, time

from tests.conftest import descendants


def test_fails_and_leaves_a_sleeper():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(607)"], start_new_session=True)
    assert False, "failed on purpose"


def test_times_out_and_leaves_a_sleeper():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(607)"])
    time.sleep(30)


KEPT = []


def test_passes_and_leaves_a_sleeper():
    KEPT.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(608)"]))


def test_a_later_test_sees_only_what_passing_tests_kept():
    try:
        assert descendants() == {KEPT[0].pid}  # not the failed tests' sleepers
    finally:
        KEPT[0].kill()
'''


def test_a_failed_or_timed_out_tests_processes_are_killed_and_reported_as_its_own(pytester, monkeypatch):
    pytester.makepyfile(test_inner=INNER)
    pytester.makeini("[pytest]\n")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess("-p", "tests.leftovers", "-n", "0", "--timeout", "3", timeout=120)
    result.assert_outcomes(passed=2, failed=2, errors=2)
    out = result.stdout.str()
    # The report's own lines (a short summary line, as newer pytest writes, starts with "ERROR").
    reports = [line for line in out.splitlines() if line.startswith("the failed test left 1 process(es), now killed:")]
    assert len(reports) == 2, out
    assert "ERROR at teardown of test_fails_and_leaves_a_sleeper" in out
    assert "ERROR at teardown of test_times_out_and_leaves_a_sleeper" in out
    assert "time.sleep(608)" not in out
    assert sys.executable in out
    # (sleep lengths no other test uses: the suite's workers run other tests' sleepers meanwhile)
    assert not [line for line in cmdlines(s.pid for s in processes()) if "time.sleep(607)" in line
                or "time.sleep(608)" in line]
