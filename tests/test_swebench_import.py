"""`minidebug import swebench`: instances in both JSON shapes, from a local repository with history."""

import json
import subprocess
import textwrap

import pytest

from minidebug.taskcheck.check import check_task, format_reports
from minidebug.run.cli import main
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
        "  example__mathlib-1: 1 PASS_TO_PASS id(s) left out: cut short or naming a path of the machine that "
        "recorded them, so no run here can produce them; no environment recipe for example/mathlib: its venv has "
        "pytest only (write a recipe table, or pass --setup)", "2 skipped:", "  example__mathlib-2: missing patch",
        "  example__mathlib-3: its test ids are not pytest node ids (path::name); only pytest suites are supported"]
    assert main(["import", "swebench", str(as_lines), "--repos", str(repos), "--out", str(tmp_path / "b")]) == 0
    first, second = load_task(tmp_path / "a" / "example__mathlib-1"), load_task(tmp_path / "b" / "example__mathlib-1")
    assert first.spec == second.spec
    assert first.spec.source.git == str((repos / "example__mathlib").resolve()) and first.spec.source.commit == commit
    assert first.description == "double(4) gives 9 \U0001f622 \"since\" v2\\n"
    assert first.spec.fail_to_pass == ["tests/test_double.py::test_double"]
    assert first.spec.readonly == ["tests/test_double.py"] and "2.0" in first.spec.tags

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
    assert not portable("t.py::test_unpack[")  # cut at a space when it was recorded
    assert not portable("t.py::test_x[/n/fs/temp/pkg/data/a.dcm-data0]")  # a path of the recording machine
    with pytest.raises(ValueError, match="not a JSON list"):
        parse_test_ids("[a::b", "F")


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
    assert lines[0].split() == ["task", "base", "F2P", "fail", "gold", "F2P", "pass", "gold", "P2P", "pass", "reset",
                                "verdict"]
    assert lines[1].split() == ["example__mathlib-1", "1/1", "1/1", "1/1", "ok", "valid"]
    assert lines[2].split()[-1] == "INVALID" and "cannot run here" in lines[3] and "no-such-package" in lines[3]
    assert lines[4].split()[-1] == "INVALID" and "already pass on the base" in lines[5]
    assert lines[-1] == "1/3 tasks valid"
