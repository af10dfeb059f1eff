"""`minidebug instances`: SWE-bench-format instances from fix commits of a repository's history, their
FAIL_TO_PASS and PASS_TO_PASS measured by running the tests; what cannot make an instance says why."""

import json
import subprocess

import pytest

from minidebug.run.cli import main
from minidebug.tasks.history import HistoryError, instance_from_commit, is_test_file


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit_files(repo, message, files):
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


OPS = "def double(x):\n    return {}\n\n\ndef negate(x):\n    return -x\n"
TESTS = ("from calc.ops import double, negate\n\n\ndef test_negate():\n    assert negate(3) == -3\n\n\n"
         "def test_broken_before_and_after():\n    assert double(1) == 3\n")


def calc_repo(tmp_path):
    """`example__calc` under a folder of clones, at its buggy base commit."""
    repo = tmp_path / "repos" / "example__calc"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    commit_files(repo, "calc 1.4", {"pyproject.toml": '[project]\nname = "calc"\nversion = "1.4.2"\n',
                                    "calc/__init__.py": "", "calc/ops.py": OPS.format("x + x + 1"),
                                    "tests/test_ops.py": TESTS})
    return repo


@pytest.fixture
def history(tmp_path):
    """`example__calc` under a folder of clones: a buggy base, then a fix commit with its test, then commits
    that cannot make an instance."""
    repo = calc_repo(tmp_path)
    fix = commit_files(repo, "Fix double(): it added one\n\ndouble(4) gave 9.", {
        "calc/ops.py": OPS.format("2 * x"), "CHANGES.md": "- double() is twice x\n",
        "tests/test_ops.py": TESTS + "\n\ndef test_double():\n    assert double(4) == 8\n"})
    tests_only = commit_files(repo, "more tests", {"tests/test_more.py": "def test_more():\n    assert True\n"})
    source_only = commit_files(repo, "tidy", {"calc/ops.py": OPS.format("x * 2")})
    git(repo, "checkout", "-qb", "side", fix)
    commit_files(repo, "side", {"calc/side.py": "", "tests/test_side.py": "def test_side():\n    pass\n"})
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-edit", "side")
    commits = {"fix": fix, "tests_only": tests_only, "source_only": source_only, "merge": git(repo, "rev-parse", "HEAD")}
    return repo, commits


def test_a_fix_commit_becomes_an_instance_with_measured_tests_that_imports_and_validates(history, tmp_path, cache_dir,
                                                                                        monkeypatch, capsys):
    repo, commits = history
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    out = tmp_path / "instances.jsonl"
    assert main(["instances", str(repo), commits["fix"][:8], "--repository", "example/calc", "--out", str(out),
                 "--sandbox", "none"]) == 0
    (instance,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert instance["FAIL_TO_PASS"] == ["tests/test_ops.py::test_double"]
    assert instance["PASS_TO_PASS"] == ["tests/test_ops.py::test_negate"]  # the test failing with the fix is in neither
    assert instance["instance_id"] == f"example__calc-{commits['fix'][:10]}"
    assert instance["base_commit"] == instance["environment_setup_commit"] == git(repo, "rev-parse", "HEAD~4")
    assert instance["version"] == "1.4" and instance["problem_statement"] == "Fix double(): it added one\n\ndouble(4) gave 9."
    assert "a/calc/ops.py" in instance["patch"] and "CHANGES.md" in instance["patch"] and "tests/" not in instance["patch"]
    assert "tests/test_ops.py" in instance["test_patch"] and "calc/" not in instance["test_patch"]
    assert capsys.readouterr().out.splitlines()[0].startswith(
        f"example__calc-{commits['fix'][:10]}: 1 FAIL_TO_PASS, 1 PASS_TO_PASS (")

    assert main(["import", "swebench", str(out), "--repos", str(repo.parent), "--out", str(tmp_path / "tasks")]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "tasks" / instance["instance_id"]), "--sandbox", "none", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["ok"], row["fail_to_pass"], row["pass_to_pass"], row["base_failing"]) == (True, 1, 1, 1)


def test_commits_that_cannot_make_an_instance_are_rejected_saying_why(history, tmp_path, capsys):
    repo, commits = history
    out = tmp_path / "instances.jsonl"
    assert main(["instances", str(repo), "nosuchref", commits["tests_only"], commits["source_only"], commits["merge"],
                 "--repository", "example/calc", "--out", str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"rejected nosuchref: 'nosuchref' is not a commit of {repo}"
    assert lines[1].startswith(f"rejected {commits['tests_only']}: {commits['tests_only'][:12]} changes no Python "
                               "source outside the tests (only test files)")
    assert lines[2].startswith(f"rejected {commits['source_only']}: {commits['source_only'][:12]} changes no test "
                               "file (of calc/ops.py)")
    assert lines[3].startswith(f"rejected {commits['merge']}: {commits['merge'][:12]} is a merge commit")
    assert lines[4] == f"0 instance(s) written to {out}" and out.read_text() == ""

    assert main(["instances", str(tmp_path), "HEAD", "--repository", "example/calc", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"minidebug: {tmp_path} is not a git repository"
    with pytest.raises(HistoryError, match="expected owner/name"):
        instance_from_commit(repo, "HEAD", "calc")


def test_test_files_are_those_under_test_folders_or_named_as_tests():
    tests = ["tests/test_a.py", "test/fixtures/case.sql", "pkg/sub/tests/helpers.py", "conftest.py", "pkg/conftest.py",
             "test_top.py", "pkg/engine_test.py", "testing/data.json"]
    sources = ["pkg/testsuite.py", "pkg/attest.py", "src/pytest_thing/plugin.py", "docs/testing.rst", "setup.py"]
    assert [path for path in tests + sources if is_test_file(path)] == tests


def test_measured_ids_that_name_a_path_of_this_machine_are_left_out(tmp_path, cache_dir, monkeypatch, capsys):
    """A test parametrized by a path of a machine (`/home/user/data.csv`): kept, its id would be one the
    importer refuses (and a FAIL_TO_PASS no run elsewhere gives). A parameter that is a root or one-part
    path (`[/]`, `[/projects]`, as pytest's own test_findpaths has) is the test's own literal: kept."""
    repo = calc_repo(tmp_path)
    tests = TESTS + ("\n\nimport pytest\n\n\n"
                     "@pytest.mark.parametrize('where', ['/home/user/data.csv'])\n"
                     "def test_double_somewhere(where):\n    assert double(4) == 8\n\n\n"
                     "@pytest.mark.parametrize('root', ['/', '/projects'])\n"
                     "def test_double_at(root):\n    assert double(4) == 8\n")
    fix = commit_files(repo, "Fix double()", {"calc/ops.py": OPS.format("2 * x"), "tests/test_ops.py": tests})
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    out = tmp_path / "instances.jsonl"
    assert main(["instances", str(repo), fix, "--repository", "example/calc", "--out", str(out),
                 "--sandbox", "none"]) == 0
    (instance,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert instance["FAIL_TO_PASS"] == ["tests/test_ops.py::test_double_at[/]",
                                        "tests/test_ops.py::test_double_at[/projects]"]
    assert instance["PASS_TO_PASS"] == ["tests/test_ops.py::test_negate"]
    assert "; 1 left out naming a path of this machine)" in capsys.readouterr().out.splitlines()[0]

    assert main(["import", "swebench", str(out), "--repos", str(repo.parent), "--out", str(tmp_path / "tasks")]) == 0
    assert (tmp_path / "tasks" / instance["instance_id"]).is_dir()
