"""`minidebug import swebench`: instances in both JSON shapes, from a local repository with history."""

import json
import subprocess
import textwrap

import pytest

from minidebug.run.cli import main
from minidebug.scoring.evaluate import score
from minidebug.scoring.ids import match_outcomes
from minidebug.scoring.pytest_run import PytestRun
from minidebug.taskcheck.check import check_task, format_reports
from minidebug.tasks.importers.swebench import parse_test_ids, portable, select_instances
from minidebug.tasks.task import load_task

TEST_PATCH = textwrap.dedent("""\
    --- /dev/null
    +++ b/tests/test_double.py
    @@ -0,0 +1,5 @@
    +from mathlib.ops import double
    +
    +
    +def test_double():
    +    assert double(4) == 8
    """)
GOLD = ("--- a/mathlib/ops.py\n+++ b/mathlib/ops.py\n@@ -1,6 +1,6 @@\n def double(x):\n     # twice x\n"
        "-    return x + x + 1\n+    return 2 * x\n \n \n def negate(x):\n")


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def clones(tmp_path):
    """A folder of local clones holding `example__mathlib`, whose second commit brought a bug."""
    repo = tmp_path / "repos" / "example__mathlib"
    (repo / "mathlib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "mathlib" / "__init__.py").write_text("")
    (repo / "mathlib" / "ops.py").write_text("def double(x):\n    # twice x\n    return 2 * x\n\n\n"
                                             "def negate(x):\n    return -x\n")
    (repo / "tests" / "test_ops.py").write_text("from mathlib.ops import negate\n\n\ndef test_negate():\n"
                                                "    assert negate(3) == -3\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "mathlib" / "ops.py").write_text("def double(x):\n    # twice x\n    return x + x + 1\n\n\n"
                                             "def negate(x):\n    return -x\n")
    git(repo, "commit", "-qam", "faster double")
    return tmp_path / "repos", git(repo, "rev-parse", "HEAD")


def instance(commit, instance_id="example__mathlib-1", as_strings=False, **changes):
    tests = {"FAIL_TO_PASS": ["tests/test_double.py::test_double"], "PASS_TO_PASS": ["tests/test_ops.py::test_negate"]}
    data = {"instance_id": instance_id, "repo": "example/mathlib", "base_commit": commit, "patch": GOLD,
            "test_patch": TEST_PATCH, "problem_statement": "double(4) gives 9 \U0001f622 \"since\" v2\\n",
            "hints_text": "", "version": "2.0", "environment_setup_commit": commit,
            **{k: json.dumps(v) if as_strings else v for k, v in tests.items()}}
    data.update(changes)
    return data


def test_both_json_shapes_import_to_tasks_that_pass_check(clones, tmp_path, cache_dir, capsys):
    repos, commit = clones
    as_list = tmp_path / "instances.json"
    recorded_elsewhere = ["tests/test_ops.py::test_negate", "tests/test_ops.py::test_file[/n/fs/x/a.dcm-data0]"]
    as_list.write_text(json.dumps([instance(commit, PASS_TO_PASS=recorded_elsewhere),
                                   instance(commit, "example__mathlib-2", patch=""),
                                   instance(commit, "example__mathlib-3",
                                            FAIL_TO_PASS=["test_double (tests.test_double.Case)"])]))
    as_lines = tmp_path / "instances.jsonl"
    as_lines.write_text(json.dumps(instance(commit, as_strings=True)) + "\n")

    assert main(["import", "swebench", str(as_list), "--repos", str(repos), "--out", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"1 task(s) written to {tmp_path / 'a'}", "1 written with changes:",
        "  example__mathlib-1: 1 PASS_TO_PASS id(s) left out: naming a path of the machine that "
        "recorded them, so no run here can produce them; no environment recipe for example/mathlib: its venv has "
        "pytest only (write a recipe table, or pass --setup)", "2 skipped:", "  example__mathlib-2: missing patch",
        "  example__mathlib-3: its test ids are not all of one shape: pytest node ids (path::name), Django's "
        "(`name (module.Class)`) or bare test names (sympy's)"]
    assert main(["import", "swebench", str(as_lines), "--repos", str(repos), "--out", str(tmp_path / "b")]) == 0
    first, second = load_task(tmp_path / "a" / "example__mathlib-1"), load_task(tmp_path / "b" / "example__mathlib-1")
    assert first.spec == second.spec
    assert first.spec.source.git == str((repos / "example__mathlib").resolve()) and first.spec.source.commit == commit
    assert first.description == "double(4) gives 9 \U0001f622 \"since\" v2\\n"
    assert first.spec.fail_to_pass == ["tests/test_double.py::test_double"]
    assert first.spec.readonly == ["tests/test_double.py"] and "2.0" in first.spec.tags
    assert first.spec.eval == "python -m pytest -q tests/test_double.py tests/test_ops.py"

    report = check_task(first, cache_dir=cache_dir, sandbox=None)
    assert report.ok, format_reports([report])


def test_filter_slice_and_test_lists():
    instances = [{"instance_id": f"x__y-{i}"} for i in range(10)] + [{"instance_id": "other-1"}]
    assert [i["instance_id"] for i in select_instances(instances, r"^x__y-[0-4]$", "1:3")] == ["x__y-1", "x__y-2"]
    assert len(select_instances(instances, None, ":-1")) == 10
    with pytest.raises(ValueError, match="--slice"):
        select_instances(instances, None, "1-3")
    with pytest.raises(ValueError, match="--filter"):
        select_instances(instances, "(", None)
    assert parse_test_ids('["a::b"]', "F") == ["a::b"] and parse_test_ids(["a::b"], "F") == ["a::b"]
    assert parse_test_ids("", "F") == [] and parse_test_ids(None, "F") == []
    assert portable("t.py::test_x") and portable("t.py::C::test_x[1-2]")
    assert portable("t.py::test_unpack[")  # cut at a space when it was recorded: scored by prefix
    assert not portable("t.py::test_x[/n/fs/temp/pkg/data/a.dcm-data0]")  # a path of the recording machine
    assert not portable("t.py::test_x[/tmp/pytest-of-u/pytest-3/x0]") and not portable("t.py::t[a-/c/b.py]")
    assert portable("t.py::test_is_fs_root[/-True]") and portable("t.py::test_is_fs_root[/projects-False]")
    assert not portable("t.py::test_x[here-1]", ["here"])  # under a path the caller names
    with pytest.raises(ValueError, match="not a JSON list"):
        parse_test_ids("[a::b", "F")


@pytest.mark.slow  # three tasks validated twice: about a minute on 2 loaded cores
def test_validate_reports_each_task_and_keeps_going(clones, tmp_path, cache_dir, monkeypatch, capsys):
    repos, commit = clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    instances = tmp_path / "instances.jsonl"
    broken_env = instance(commit, "example__mathlib-4")  # its setup cannot run here
    already_passing = instance(commit, "example__mathlib-5", FAIL_TO_PASS=["tests/test_ops.py::test_negate"],
                               PASS_TO_PASS=[])
    instances.write_text("\n".join(json.dumps(i) for i in [instance(commit), broken_env, already_passing]) + "\n")
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t"),
                 "--filter", "mathlib-[15]$"]) == 0
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t"),
                 "--filter", "mathlib-4$", "--setup", "pip install no-such-package-minidebug-test==0.0.1"]) == 0
    capsys.readouterr()
    tasks = [str(tmp_path / "t" / f"example__mathlib-{n}") for n in (1, 4, 5)]
    assert main(["validate", *tasks, "-j", "2", "--sandbox", "none"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["task", "base", "F2P", "fail", "gold", "F2P", "pass", "gold", "P2P", "pass", "collect",
                                "errors", "reset", "verdict"]
    assert lines[1].split() == ["example__mathlib-1", "1/1", "1/1", "1/1", "-", "ok", "valid"]
    assert lines[2].startswith("  python 3.") and "the task's own (pytest only" in lines[2] and "built in" in lines[2]
    assert lines[3].split()[-1] == "INVALID" and "install: pip install no-such-package" in lines[4]
    assert "cannot run here" in lines[5] and "no-such-package" in lines[5]
    assert lines[6].split()[-1] == "INVALID" and "already pass on the base" in lines[8]
    assert lines[9] == "  base: tests/test_ops.py::test_negate (passed, expected to fail)"
    assert lines[-1] == "1/3 tasks valid"
    assert main(["validate", *tasks, "-j", "2", "--sandbox", "none", "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # a line per task, in order
    assert [(row["task"], row["ok"]) for row in rows] == [
        ("example__mathlib-1", True), ("example__mathlib-4", False), ("example__mathlib-5", False)]


CUT_TEST_PATCH = textwrap.dedent("""\
    --- /dev/null
    +++ b/tests/test_double.py
    @@ -0,0 +1,11 @@
    +import pytest
    +from mathlib.ops import double
    +
    +
    +@pytest.mark.parametrize("label", ["four doubled", "four"])
    +def test_double(label):
    +    assert double(4) == 8
    +
    +@pytest.mark.parametrize("text", ["a b"])
    +def test_text(text):
    +    assert text == "a b"
    """)


def test_ids_cut_at_a_space_are_imported_and_scored_by_prefix(clones, tmp_path, cache_dir, monkeypatch, capsys):
    repos, commit = clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    cut, spaced = "tests/test_double.py::test_double[four", "tests/test_double.py::test_text[a b]"
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit, "example__mathlib-7", test_patch=CUT_TEST_PATCH,
                                              FAIL_TO_PASS=[cut], PASS_TO_PASS=[spaced])]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    assert "skipped" not in capsys.readouterr().out
    task = load_task(tmp_path / "t" / "example__mathlib-7")
    assert task.spec.fail_to_pass == [cut] and task.spec.pass_to_pass == [spaced]  # both round-trip task.toml

    assert main(["validate", str(task.root), "--sandbox", "none", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    # the cut id stands for test_double[four doubled] and test_double[four]: both fail on the base, pass with gold
    assert (row["base_failing"], row["gold_f2p_passing"], row["gold_p2p_passing"]) == (1, 1, 1)


def test_cut_ids_match_every_run_id_cut_to_them():
    outcomes = {"t.py::test_p[select name]": "passed", "t.py::test_p[select other]": "failed",
                "t.py::test_p[selection]": "passed", "t.py::test_q[a b]": "passed", "t.py::test_r": "passed"}
    tests, matched = match_outcomes(["t.py::test_p[select", "t.py::test_q[a", "t.py::test_q[a b]", "t.py::test_s["],
                                    outcomes)
    assert tests == {"t.py::test_p[select": "failed", "t.py::test_q[a": "passed", "t.py::test_q[a b]": "passed",
                     "t.py::test_s[": "did not run"}
    assert matched == {"t.py::test_p[select name]", "t.py::test_p[select other]", "t.py::test_q[a b]"}
    run = PytestRun({"t.py::test_p[select name]": "passed", "t.py::test_r": "passed"}, "")
    result = score(run, ("t.py::test_p[select", "t.py::test_r"), ["t.py::test_p[select"], ["t.py::test_r"])
    assert (result.score, result.max_score, result.notes) == (1, 1, ())  # no run id left "not counted"


def test_a_repository_missing_under_repos_fails_its_instance(clones, tmp_path, capsys):
    repos, commit = clones
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit), instance(commit, "other__lib-1", repo="other/lib")]))
    out = tmp_path / "t"
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"1 task(s) written to {out}" and "1 FAILED:" in lines
    assert lines[-1] == (f"  other__lib-1: no clone of other/lib under {repos} (as other__lib or lib); clone it "
                         "there, or pass --fetch-missing to use https://github.com/other/lib.git")
    assert sorted(p.name for p in out.iterdir()) == ["example__mathlib-1"]  # nothing written for it

    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(out),
                 "--fetch-missing"]) == 0
    assert load_task(out / "other__lib-1").spec.source.git == "https://github.com/other/lib.git"


def test_a_clone_missing_objects_fails_its_instance_saying_why(clones, tmp_path, capsys):
    repos, commit = clones
    source = repos / "example__mathlib"
    first = git(source, "rev-parse", "HEAD~1")
    made = {}
    for kind, options in {"shallow": ["--depth", "1"], "partial": ["--filter=blob:none", "--upload-pack",
                                                                    "git -c uploadpack.allowfilter=true upload-pack"],
                          "corrupt": ["--no-local"]}.items():
        clone = tmp_path / kind / "example__mathlib"
        git(tmp_path, "clone", "-q", "--bare", *options, f"file://{source}", str(clone))
        made[kind] = clone
    pack = next((made["corrupt"] / "objects" / "pack").glob("*.pack"))
    data = bytearray(pack.read_bytes())
    data[40:-24] = bytes(b ^ 0x55 for b in data[40:-24])
    pack.chmod(0o644)
    pack.write_bytes(data)
    reasons = {"shallow": f"{made['shallow']} lacks commit {first[:12]} (a shallow clone: `git -C "
                          f"{made['shallow']} fetch --unshallow` completes it)",
               "partial": f"{made['partial']} lacks 3 object(s) of commit {commit[:12]}'s files (a partial clone",
               "corrupt": f"{made['corrupt']}: the files of commit {commit[:12]} cannot be read: fatal: packed object"}
    for kind, reason in reasons.items():
        base = first if kind == "shallow" else commit
        instances = tmp_path / f"{kind}.json"
        instances.write_text(json.dumps([instance(base, environment_setup_commit=base)]))
        out = tmp_path / f"out-{kind}"
        assert main(["import", "swebench", str(instances), "--repos", str(tmp_path / kind), "--out", str(out)]) == 1
        printed = capsys.readouterr().out
        assert f"  example__mathlib-1: {reason}" in printed, printed
        assert not out.exists()


def test_data_files_of_the_test_patch_are_read_only_and_not_given_to_pytest(clones, tmp_path, cache_dir, capsys):
    """As SWE-bench's harness: a test patch's data files (flask's tests/static/config.toml) are not in the eval
    command, where pytest collects nothing from one and stops; they are the task's, read-only."""
    repos, commit = clones
    data = "--- /dev/null\n+++ b/tests/static/config.toml\n@@ -0,0 +1 @@\n+double = 8\n"
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit, test_patch=TEST_PATCH + data)]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    task = load_task(tmp_path / "t" / "example__mathlib-1")
    assert task.spec.eval == "python -m pytest -q tests/test_double.py tests/test_ops.py"
    assert task.spec.readonly == ["tests/static/config.toml", "tests/test_double.py"]
    report = check_task(task, cache_dir=cache_dir, sandbox=None)
    assert report.ok, format_reports([report])


@pytest.mark.parametrize("field, path, why", [
    ("test_patch", "../outside.py", "the test patch (`test_patch`) cannot be used: the patch names '../outside.py'"),
    ("test_patch", "tests/../../up.py", "the test patch (`test_patch`) cannot be used: the patch names "
     "'tests/../../up.py'"),
    ("patch", "/etc/minidebug-x", "the gold patch (`patch`) cannot be used: the patch names '/etc/minidebug-x'"),
], ids=["dotdot", "dotdot-inside", "absolute"])
def test_a_patch_naming_a_path_outside_the_project_is_refused_at_import(clones, tmp_path, capsys, field, path, why):
    repos, commit = clones
    outside = f"--- /dev/null\n+++ {'b/' if not path.startswith('/') else ''}{path}\n@@ -0,0 +1 @@\n+x = 1\n"
    patch = {"test_patch": TEST_PATCH + outside} if field == "test_patch" else {"patch": GOLD + outside}
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit), instance(commit, "example__mathlib-9", **patch)]))
    out = tmp_path / "t"
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == ["1 skipped:", f"  example__mathlib-9: {why}, which is not a path inside the project "
                                        "(git apply refuses it too)"], lines
    assert sorted(p.name for p in out.iterdir()) == ["example__mathlib-1"]  # nothing written for it
    load_task(out / "example__mathlib-1")


def test_validate_says_why_no_test_ran(clones, tmp_path, cache_dir, monkeypatch, capsys):
    """An eval whose runner stopped before its first test, with no collection error to say why (the eval driver
    crashed on Python 3.9 once), is a row that gives the exception, not only each test "did not run"."""
    repos, commit = clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    broken = ("--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1,2 @@\n+def pytest_collection_finish(session):\n"
              "+    raise LookupError('the runner broke before the first test')\n")
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit, test_patch=TEST_PATCH + broken)]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "t" / "example__mathlib-1"), "--sandbox", "none", "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["problem"].startswith("no test ran in the base eval: ") and "LookupError: the runner broke before the " \
        "first test; no test ran in the gold eval: " in row["problem"], row["problem"]


SLOW_TEST_PATCH = textwrap.dedent("""\
    --- /dev/null
    +++ b/tests/test_double.py
    @@ -0,0 +1,7 @@
    +import time
    +from mathlib.ops import double
    +
    +
    +def test_double():
    +    time.sleep(60)
    +    assert double(4) == 8
    """)


@pytest.mark.slow  # builds a venv and waits out three evals
def test_validate_says_an_eval_timed_out_and_takes_a_longer_limit(clones, tmp_path, cache_dir, monkeypatch, capsys):
    """An eval killed at eval_timeout is the row's first problem (sympy__sympy-11870's test file takes more than
    60 s), not 'still fail with the gold patch'; `--eval-timeout` sets the limit."""
    repos, commit = clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([instance(commit, test_patch=SLOW_TEST_PATCH, PASS_TO_PASS=[])]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    capsys.readouterr()
    task = str(tmp_path / "t" / "example__mathlib-1")
    assert main(["validate", task, "--sandbox", "none", "--json", "--eval-timeout", "2"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["problem"].startswith("the base eval timed out after 2 s (the task's eval_timeout: `--eval-timeout` "
                                     "or the task's [limits] raise it); the gold eval timed out after 2 s")
