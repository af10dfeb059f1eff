"""`minidebug check` over every bundled task, and on tasks built to fail each check."""

import re
import subprocess
import sys

import pytest

from minidebug.run.cli import main
from minidebug.runner.pool import WarmPool
from minidebug.taskcheck.check import CHECKS, check_task, format_reports
from minidebug.taskcheck.gold import Eval, gold_run
from minidebug.tasks.task import bundled_task_names, load_task
from tests.conftest import CALC, CALC_PATCH, CALC_TOML
from tests.taskcheck.test_validate import negate_repo, setup_task  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def pool():
    """Waiting eval interpreters the checks of this module share, as `minidebug check` does for its tasks."""
    with WarmPool() as shared:
        yield shared


@pytest.mark.parametrize("name", [name if index % 4 == 0 else pytest.param(name, marks=pytest.mark.slow)
                                  for index, name in enumerate(bundled_task_names())])
def test_every_bundled_task_passes_every_check(name, cache_dir, pool):
    """In the sandbox `minidebug check` picks (bubblewrap where it works); the oracle check also fails a gold
    patch that the eval's watch flags, so no bundled fix looks like forgery. Every fourth task here, all of them
    with -m slow. (tests/sandbox/test_sandbox.py: every tenth task under Landlock.)"""
    report = check_task(load_task(name), cache_dir=cache_dir, warm_pool=pool)
    assert report.ok, format_reports([report])


@pytest.mark.parametrize("name", bundled_task_names()[5::10])
def test_bundled_tasks_pass_every_check_without_a_sandbox(name, cache_dir, pool):
    report = check_task(load_task(name), cache_dir=cache_dir, sandbox=None, warm_pool=pool)
    assert report.ok, format_reports([report])


def test_a_gold_patch_the_watch_flags_fails_the_oracle_check(task_dir, cache_dir):
    patch = CALC_PATCH.replace("    +    return a + b", "    +    __import__('sys')._getframe(1)\n    +    return a + b")
    patch = patch.replace("@@ -1,5 +1,5 @@", "@@ -1,5 +1,6 @@")
    report = check_task(load_task(task_dir(CALC, CALC_TOML, patch)), cache_dir=cache_dir)
    assert report.results["fails"] == "ok" and report.results["reset"] == "ok"
    assert report.results["oracle"].startswith(
        "the eval flags the gold patch as reaching into the test runner: calc.py:2: walks the stack"), report.results


def test_the_gold_run_evals_the_base_the_gold_patch_and_the_reset(make_env, calc_task):
    run = gold_run(make_env(load_task(calc_task), terminate_on_success=False, sandbox=None))
    tests = {"test_calc.py::test_add": "failed", "test_calc.py::test_mul": "passed"}
    assert run.base == run.after_reset == Eval(1, 2, tests)
    assert run.gold == Eval(2, 2, dict(tests, **{"test_calc.py::test_add": "passed"}))
    assert run.edit_error == "" and run.gold.passed(tests) == 2 and run.base.reward == 0.5


def test_a_task_whose_tests_already_pass_fails_the_check(task_dir, cache_dir):
    fixed = dict(CALC, **{"calc.py": CALC["calc.py"].replace("a - b", "a + b")})
    patch = CALC_PATCH.replace("-    return a - b\n    +    return a + b", "-    return a + b\n    +    return a - b")
    report = check_task(load_task(task_dir(fixed, CALC_TOML, patch)), cache_dir=cache_dir)
    assert report.results["fails"].startswith("every test already passes")
    assert report.results["oracle"] == \
        "the gold patch leaves 1 test(s) failing (not counted): test_calc.py::test_add"
    assert not report.ok


def test_a_hidden_file_that_stays_hidden_passes_the_check(task_dir, cache_dir):
    files = dict(CALC, **{"answer_key.py": "ANSWER = 'a + b'\n"})
    report = check_task(load_task(task_dir(files, CALC_TOML + 'hidden = ["answer_key.py"]\n', CALC_PATCH)),
                        cache_dir=cache_dir)
    assert report.ok, format_reports([report])


def test_cli_prints_a_table_and_fails_on_a_bad_task(task_dir, cache_dir):
    fixed = dict(CALC, **{"calc.py": CALC["calc.py"].replace("a - b", "a + b")})
    bad = task_dir(fixed, CALC_TOML, CALC_PATCH.replace("-    return a - b\n    +    return a + b",
                                                         "-    return a + b\n    +    return a - b"), name="bad")
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "check", "off_by_one", str(bad)],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "MINIDEBUG_CACHE": str(cache_dir)})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["task", "fails", "oracle", "reset", "pdb", "hidden", "pdb", "stopped", "at"]
    assert lines[1].split()[:6] == ["off_by_one", "ok", "ok", "ok", "ok", "ok"]
    assert re.fullmatch(r"\S+\.py:\d+", lines[1].split()[6])  # the line the pdb check used
    assert lines[2].split()[:3] == ["bad", "FAIL", "FAIL"]
    assert lines[-1] == "1/2 tasks pass every check"


def test_a_gold_patch_that_cannot_be_measured_is_reported_with_the_reason(task_dir, cache_dir):
    # A zero-context hunk: `git apply` anchors it at the end of the file, so the gold run passes no test.
    files = {"calc.py": "def add(a, b):\n    # returns the sum\n    return a - b\n",
             "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
    task = load_task(task_dir(files, CALC_TOML, "--- a/calc.py\n+++ b/calc.py\n@@ -2,0 +3,1 @@\n+    b = -b\n"))
    report = check_task(task, cache_dir=cache_dir, sandbox=None)
    assert report.results["oracle"].startswith("the gold patch scores 0.00 (error: eval:")
    assert "no test passes with solution.patch applied" in report.results["oracle"]


# -- the hidden, reset and pdb checks can fail: each on a small task built to trip exactly that check ------

ADD = "def add(a, b):\n    return a - b\n"
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ADD_PATCH = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
ADD_TOML = 'description = "add() gives wrong sums"\neval = "python -m pytest -q"\n'
KEY = "ANSWER = 'return a + b'\n"


def check_cli(task, cache_dir, monkeypatch, capsys) -> tuple[int, dict[str, str], str]:
    """`minidebug check TASK --sandbox none`: the exit status, the task's row (check -> ok/FAIL), the output."""
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    status = main(["check", str(task), "--sandbox", "none"])
    out = capsys.readouterr().out
    row = out.splitlines()[1].split()
    assert row[0] == task.name, out
    return status, dict(zip(CHECKS, row[1:6])), out


@pytest.mark.parametrize("files, hidden, leak", [
    ({"secret/answer_key.py": KEY, "answer_key.py": KEY}, "secret/answer_key.py",
     "answer_key.py, answer_key.py (a copy of secret/answer_key.py)"),  # found by name, and by its bytes
    ({"answer_key.py": KEY, "notes/key.txt": KEY}, "answer_key.py", "notes/key.txt (a copy of answer_key.py)"),
    ({"docs/fix.diff": ADD_PATCH}, None, "docs/fix.diff (a copy of solution.patch)"),
], ids=["same-name-elsewhere", "renamed-copy", "solution-copy"])
def test_a_hidden_file_or_the_solution_left_visible_fails_the_hidden_check(files, hidden, leak, task_dir,
                                                                          cache_dir, monkeypatch, capsys):
    toml = ADD_TOML + (f'hidden = ["{hidden}"]\n' if hidden else "")
    task = task_dir({"calc.py": ADD, "test_calc.py": ADD_TEST, **files}, toml, ADD_PATCH)
    status, row, out = check_cli(task, cache_dir, monkeypatch, capsys)
    assert status == 1
    assert row == {"fails": "ok", "oracle": "ok", "reset": "ok", "pdb": "ok", "hidden": "FAIL"}, out
    assert f"  hidden: visible to the agent: {leak}\n" in out


def test_a_fix_that_leaves_state_outside_the_worktree_fails_the_reset_check(task_dir, tmp_path, cache_dir,
                                                                           monkeypatch, capsys):
    """The fixed code leaves a file outside the worktree that the buggy code reads: reset cannot undo it."""
    state = tmp_path / "fixed-once"
    calc = (f"import os\n\nSTATE = {str(state)!r}\n\n\ndef add(a, b):\n    total = a - b\n"
            "    if os.path.exists(STATE):\n        total = a + b\n    return total\n")
    patch = ("--- a/calc.py\n+++ b/calc.py\n@@ -5,4 +5,5 @@\n \n def add(a, b):\n-    total = a - b\n"
             "+    total = a + b\n+    open(STATE, \"w\").close()\n     if os.path.exists(STATE):\n")
    # the counted tests are listed, so no gold run before the base eval leaves the state behind
    toml = ADD_TOML + 'tests = ["test_calc.py::test_add"]\n'
    task = task_dir({"calc.py": calc, "test_calc.py": ADD_TEST}, toml, patch)
    status, row, out = check_cli(task, cache_dir, monkeypatch, capsys)
    assert status == 1
    assert row == {"fails": "ok", "oracle": "ok", "reset": "FAIL", "pdb": "ok", "hidden": "ok"}, out
    assert "  reset: reset did not bring the bug back\n" in out
    assert state.exists()


def test_an_entrypoint_that_never_runs_the_change_fails_the_pdb_check(task_dir, cache_dir, monkeypatch, capsys):
    calc = ADD + "\n\ndef mul(a, b):\n    return a * b\n"
    toml = ADD_TOML + 'entrypoint = "python main.py"\n'
    patch = ADD_PATCH.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,3 @@") + " \n"
    main_py = "from calc import mul\n\nprint(mul(2, 3))\n"  # add(), the changed code, never runs
    task = task_dir({"calc.py": calc, "test_calc.py": ADD_TEST, "main.py": main_py}, toml, patch)
    status, row, out = check_cli(task, cache_dir, monkeypatch, capsys)
    assert status == 1
    assert row == {"fails": "ok", "oracle": "ok", "reset": "ok", "pdb": "FAIL", "hidden": "ok"}, out
    assert "  pdb: the entrypoint never stops at the lines that run nearest to the gold patch's changes: calc.py:2\n" \
        in out


@pytest.mark.slow  # builds failing set-ups from scratch; validate's row says the same: tests/taskcheck/test_validate.py
def test_a_task_whose_setup_fails_says_which_command_and_why_on_one_line(negate_repo, tmp_path, cache_dir,  # noqa: F811
                                                                        monkeypatch, capsys):
    command = "python -c \"import sys; print('building'); sys.exit('no compiler configured')\""
    task = setup_task(tmp_path, negate_repo, [command], "setup_fails")
    status, row, out = check_cli(task, cache_dir, monkeypatch, capsys)
    assert status == 1 and set(row.values()) == {"FAIL"}, out
    line = f"SetupError: setup command `{command}` failed: no compiler configured"
    assert out.splitlines()[2:7] == [f"  {check}: {line}" for check in CHECKS], out
