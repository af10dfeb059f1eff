"""`minidebug validate` explains each row: collection errors, the tests that did not behave and their first
error line, the recipe, the interpreter and the build time; `--json` gives one object per task."""

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from minidebug.run.cli import main
from minidebug.taskcheck.pytest_output import PytestOutput
from minidebug.taskcheck.validate import Trouble
from tests.tasks import test_swebench_import
from tests.tasks.test_swebench_import import TEST_PATCH, instance

mathlib_clones = test_swebench_import.clones  # the same fixture, under this name here

BROKEN_CONFTEST = TEST_PATCH + ("--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1 @@\n"
                                "+import minidebug_no_such_module\n")


def test_a_conftest_import_error_is_a_collection_error_with_its_first_line(mathlib_clones, tmp_path, cache_dir,
                                                                           monkeypatch, capsys):
    repos, commit = mathlib_clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit, "example__mathlib-8", test_patch=BROKEN_CONFTEST)]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    task = str(tmp_path / "t" / "example__mathlib-8")
    capsys.readouterr()

    assert main(["validate", task, "--sandbox", "none"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["example__mathlib-8", "1/1", "0/1", "0/1", "base", "1", "gold", "1", "ok", "INVALID"]
    error = "ModuleNotFoundError: No module named 'minidebug_no_such_module'"
    assert f"  base: tests/conftest.py (collection error): {error}" in lines
    assert f"  gold: tests/conftest.py (collection error): {error}" in lines
    assert "  gold: tests/test_double.py::test_double (did not run, expected to pass)" in lines

    assert main(["validate", task, "--sandbox", "none", "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert (row["ok"], row["base_collect_errors"], row["gold_collect_errors"]) == (False, 1, 1)
    assert {"phase": "base", "test": "tests/conftest.py", "outcome": "collection error", "expected": "",
            "first_line": error} in row["troubles"]
    assert row["python"].split()[0].count(".") == 2 and row["build_seconds"] > 0
    assert row["recipe"].startswith("the task's own (pytest only")


def test_each_failed_test_gets_the_first_error_line_pytest_printed():
    output = PytestOutput.read("\n".join([
        "=================================== FAILURES ===================================",
        "_____________________________ test_p[select name] ______________________________",
        ">       assert x == 'other'", "E       AssertionError: long message", "E       assert 'a' == 'b'",
        "____________________________________ Case.test_a ____________________________________",
        "E     File \"t.py\", line 1", "E   SyntaxError: invalid syntax",
        "==================================== ERRORS ====================================",
        "___________________________ ERROR at setup of test_e ___________________________",
        "E       fixture 'fx' not found",
        "_______________________ ERROR collecting tests/test_b.py _______________________",
        "E   ImportError: cannot import name 'nosuch' from 'os'",
        "=========================== short test summary info ============================",
        "FAILED t.py::test_x - ValueError: from the summary only",
        "ERROR t.py::test_e"]))
    assert output.first_line("t.py::test_p[select") == "AssertionError: long message"
    assert output.first_line("t.py::test_p[select name]") == "AssertionError: long message"
    assert output.first_line("t.py::Case::test_a") == "SyntaxError: invalid syntax"
    assert output.first_line("t.py::test_e") == "fixture 'fx' not found"
    assert output.first_line("t.py::test_x") == "ValueError: from the summary only"
    assert output.first_line("t.py::test_p") == ""
    assert output.collection_errors() == [("tests/test_b.py", "ImportError: cannot import name 'nosuch' from 'os'")]
    assert PytestOutput.read("ERROR: file or directory not found: t.py\n").collection_errors() == [
        ("the command line", "file or directory not found: t.py")]


# -- a task that cannot be built here: its row says which step failed and why, on one line ----------------------

def _git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def negate_repo(tmp_path_factory):
    """A git repository whose negate() is wrong; returns (path, commit)."""
    repo = tmp_path_factory.mktemp("negate") / "negate"
    (repo / "tests").mkdir(parents=True)
    (repo / "ops.py").write_text("def negate(x):\n    return x\n")
    (repo / "tests" / "test_ops.py").write_text("from ops import negate\n\n\ndef test_negate():\n"
                                                "    assert negate(3) == -3\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return repo, _git(repo, "rev-parse", "HEAD")


def setup_task(root: Path, repo: tuple[Path, str], setup: list[str], name: str) -> Path:
    """A `[source]` task on `repo` whose own `setup` commands build its venv, with the gold patch."""
    task = root / name
    task.mkdir(parents=True)
    (task / "task.toml").write_text(textwrap.dedent(f"""\
        description = "negate(3) gives 3."
        eval = "python -m pytest -q tests"
        fail_to_pass = ["tests/test_ops.py::test_negate"]
        [source]
        git = "{repo[0]}"
        commit = "{repo[1]}"
        """) + f"setup = {json.dumps(setup)}\n")
    (task / "solution.patch").write_text("--- a/ops.py\n+++ b/ops.py\n@@ -1,2 +1,2 @@\n def negate(x):\n"
                                         "-    return x\n+    return -x\n")
    return task


FAILING_SETUPS = [  # one in the default run, the others with `pytest -m slow` (a venv each)
    pytest.param("python -c \"import sys; sys.exit('boom')\"", "boom", id="exit-message", marks=pytest.mark.slow),
    pytest.param("python -c \"print('step 1'); raise ValueError('no config')\"", "ValueError: no config",
                 id="exception"),
    pytest.param("python -m pip install minidebug-no-such-package-7f3a",
                 "pip finds no release of minidebug-no-such-package-7f3a for this Python", id="pip",
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize("command, why", FAILING_SETUPS)
def test_a_failed_setup_command_is_on_the_row_with_why(command, why, negate_repo, tmp_path, cache_dir, monkeypatch,
                                                       capsys):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = setup_task(tmp_path, negate_repo, ["python -c pass", command], "setup_fails")
    assert main(["validate", str(task), "--sandbox", "none"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-1] == "INVALID"
    assert lines[3] == f"  cannot run here: SetupError: setup command `{command}` failed: {why}", lines
    assert lines[-1] == "0/1 tasks valid"


@pytest.mark.slow  # a venv of its own: run with `pytest -m slow`
def test_a_failed_install_of_the_venvs_packages_is_on_the_row_with_why(task_dir, cache_dir, monkeypatch, capsys):
    """The packages step of a build (a recipe's `packages`, a task's `requirements`): the step and why."""
    from tests.conftest import CALC, CALC_PATCH

    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = task_dir(CALC, 'description = "add"\neval = "python -m pytest -q"\nfail_to_pass = ["test_calc.py::test_add"]\n'
                          'requirements = ["minidebug-no-such-package-7f3a<2"]\n', CALC_PATCH)
    assert main(["validate", str(task), "--sandbox", "none"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("  cannot run here: SetupError: pip install "), lines
    assert lines[3].endswith(" failed: pip finds no release of minidebug-no-such-package-7f3a<2 for this Python"), lines


def test_a_test_that_needs_the_network_is_said_to(task_dir, cache_dir, monkeypatch, capsys):
    """requests' old tests call httpbin.org: in a sandbox without a network (or offline) the row says why the
    gold patch's run fails, not only that it does."""
    from tests.conftest import CALC, CALC_PATCH

    files = dict(CALC)
    files["test_calc.py"] = textwrap.dedent("""\
        import urllib.request

        from calc import add


        def test_add():
            assert add(2, 3) == 5
            urllib.request.urlopen("http://httpbin.org/get", timeout=5)
        """)
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = task_dir(files, 'description = "add"\neval = "python -m pytest -q"\n'
                           'fail_to_pass = ["test_calc.py::test_add"]\n', CALC_PATCH)
    assert main(["validate", str(task), "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["problem"].startswith("needs the network: not runnable in a sandbox without one (1 test(s) "
                                     "reached for it, e.g. test_calc.py::test_add: "), row["problem"]
    assert "still fail with the gold patch" in row["problem"]


def test_pass_to_pass_tests_that_fail_on_the_base_too_are_said_to(task_dir, cache_dir, monkeypatch, capsys):
    """pytest-dev__pytest-11148's test_better_reporting_on_conftest_load_failure failed with the gold patch and on
    the base alike: the row says it is not the gold patch's doing."""
    from tests.conftest import CALC, CALC_PATCH

    files = {**CALC, "test_other.py": "def test_broken():\n    assert False\n\n\ndef test_fine():\n    pass\n"}
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = task_dir(files, 'description = "add"\neval = "python -m pytest -q"\n'
                           'fail_to_pass = ["test_calc.py::test_add"]\n'
                           'pass_to_pass = ["test_calc.py::test_mul", "test_other.py::test_broken", '
                           '"test_other.py::test_fine"]\n', CALC_PATCH)
    assert main(["validate", str(task), "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["problem"] == "1 PASS_TO_PASS test(s) fail with the gold patch (1 of them on the base too: not the " \
                             "gold patch's doing)", row


@pytest.mark.unit
def test_fail_to_pass_tests_passing_on_the_base_say_what_is_known_of_why():
    """sympy__sympy-13177's test_mod_inverse is FAIL_TO_PASS in SWE-bench's log and passes on its base here:
    SWE-bench ran `bin/test -C` (sympy's cache off, a random hash seed), where the base's RecursionError comes
    and goes with the seed. The row says so for sympy's tasks, and only the count for others."""
    from minidebug.taskcheck.validate import already_passing

    sympy = already_passing(1, "sympy/sympy")
    assert sympy.startswith("1 FAIL_TO_PASS test(s) already pass on the base (SWE-bench ran `bin/test -C`: ")
    assert "SYMPY_USE_CACHE=no PYTHONHASHSEED=2" in sympy
    assert already_passing(2, "pallets/flask") == already_passing(2, None) == \
        "2 FAIL_TO_PASS test(s) already pass on the base"


@pytest.mark.unit
def test_fail_to_pass_tests_passing_on_a_base_whose_run_ends_in_an_internal_error_say_so():
    """pytest-dev__pytest-7168's FAIL_TO_PASS lists every test of test_saferepr.py: on the base, the new test
    ends the run in pytest's INTERNALERROR, which prints no summary of the ten that passed before it, so
    SWE-bench's log recorded them as failing."""
    from minidebug.taskcheck.validate import already_passing

    said = already_passing(10, "pytest-dev/pytest", internal_error=True)
    assert said.startswith("10 FAIL_TO_PASS test(s) already pass on the base (the base's run ends in pytest's "
                           "INTERNALERROR, after which pytest prints no summary of the tests that passed"), said
    both = already_passing(1, "sympy/sympy", internal_error=True)
    assert "SWE-bench ran `bin/test -C`" in both and "INTERNALERROR" in both


@pytest.mark.unit
def test_collection_errors_printed_by_the_tests_own_runs_of_pytest_are_not_the_eval_s():
    """pytest's own tests run pytest (pytester) and their failures show its output, collection errors and all:
    those are not the eval's, which reports its own."""
    from minidebug.taskcheck.gold import Eval
    from minidebug.taskcheck.validate import _explained

    inner = "\n".join([
        "=================================== FAILURES ===================================",
        "_________________________________ test_inner __________________________________",
        "E       Failed: nomatch: '*1 error*'",
        "----------------------------- Captured stdout call -----------------------------",
        "==================================== ERRORS ====================================",
        "_______________________ ERROR collecting test_fun.py ________________________",
        "E   SyntaxError: invalid syntax",
        "=========================== short test summary info ============================",
        "FAILED testing/test_x.py::test_inner - Failed: nomatch: '*1 error*'",
    ])
    ran = Eval(tests={"testing/test_x.py::test_inner": "failed"}, output=inner)
    assert _explained("gold", ran, {"testing/test_x.py::test_inner": "pass"}) == (0, (
        Trouble("gold", "testing/test_x.py::test_inner", "failed", "pass", "Failed: nomatch: '*1 error*'"),))
    its_own = Eval(tests={"testing/test_x.py::test_inner": "failed"}, output=inner, collect_errors=1)
    assert _explained("gold", its_own, {})[0] == 1
