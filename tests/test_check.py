"""`minidebug check` over every bundled task, and on tasks built to fail each check."""

import re
import subprocess
import sys

import pytest

from minidebug.taskcheck.check import check_task, format_reports
from minidebug.tasks.task import bundled_task_names, load_task
from tests.conftest import CALC, CALC_PATCH, CALC_TOML


@pytest.mark.parametrize("name", bundled_task_names())
def test_every_bundled_task_passes_every_check(name, cache_dir):
    report = check_task(load_task(name), cache_dir=cache_dir, sandbox=None)  # tests/test_sandbox.py: with one
    assert report.ok, format_reports([report])


def test_a_task_whose_tests_already_pass_fails_the_check(task_dir, cache_dir):
    fixed = dict(CALC, **{"calc.py": CALC["calc.py"].replace("a - b", "a + b")})
    patch = CALC_PATCH.replace("-    return a - b\n    +    return a + b", "-    return a + b\n    +    return a - b")
    report = check_task(load_task(task_dir(fixed, CALC_TOML, patch)), cache_dir=cache_dir)
    assert report.results["fails"].startswith("every test already passes")
    assert report.results["oracle"] == \
        "the gold patch leaves 1 test(s) failing (not counted): test_calc.py::test_add"
    assert not report.ok


def test_hidden_leaks_are_caught(task_dir, cache_dir):
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
