"""Importers read a repository at the instance's base commit (after the test patch where that matters), never
its working tree or its newest commit: a clone whose HEAD moved on, with uncommitted changes on top, gives the
tasks and instances of its base commit."""

import json

import pytest

from minidebug.run.cli import main
from minidebug.tasks.history import instance_from_commit
from minidebug.tasks.task import load_task
from tests.tasks.test_history_instances import commit_files, git

pytestmark = pytest.mark.unit  # no episode is built


FILLER = "".join(f"def test_filler_{n}():\n    pass\n\n\n" for n in range(12))
BASE_CORE = FILLER + "def test_issue_9157():\n    assert True\n\n\ndef test_last():\n    pass\n"
# The test patch's hunk says line 30; its context is at line 53 of the base file, as real patches' offsets are
# (placed at its stated line, it would match nothing).
TEST_PATCH = """\
--- a/pkg/tests/test_core.py
+++ b/pkg/tests/test_core.py
@@ -30,2 +30,6 @@ def test_issue_9157():
 def test_last():
     pass
+
+
+def test_new():
+    assert False
--- a/pkg/tests/test_other.py
+++ b/pkg/tests/test_other.py
@@ -1,2 +1,6 @@
 def test_other():
     pass
+
+
+def test_other_new():
+    pass
"""
SETUP_PY = "from setuptools import setup\n\nsetup(\n    name='pkg',\n    version='{}',\n)\n"
GOLD = "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n-X = 1\n+X = 2\n"


@pytest.fixture
def moved_on(tmp_path):
    """A clone of `example/bare` whose base commit defines test_issue_9157 in pkg/tests/test_core.py only;
    later commits take it out of that file and put one into pkg/tests/test_other.py, a version bump follows,
    and the working tree holds uncommitted changes on top. Returns (folder of clones, clone, base commit, fix commit)."""
    repo = tmp_path / "repos" / "example__bare"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    base = commit_files(repo, "base", {
        "setup.py": SETUP_PY.format("1.3.0"),
        "pkg/__init__.py": "", "pkg/core.py": "X = 1\n", "pkg/tests/__init__.py": "",
        "pkg/tests/test_core.py": BASE_CORE, "pkg/tests/test_other.py": "def test_other():\n    pass\n"})
    commit_files(repo, "move a test", {
        "pkg/tests/test_core.py": "def test_last():\n    pass\n",
        "pkg/tests/test_other.py": "def test_other():\n    pass\n\n\ndef test_issue_9157():\n    pass\n"})
    fix = commit_files(repo, "fix X\n\nX must be 2.", {"pkg/core.py": "X = 2\n", "pkg/tests/test_other.py":
                       "def test_other():\n    assert __import__('pkg.core').core.X == 2\n"})
    commit_files(repo, "2.0", {"setup.py": SETUP_PY.format("2.0.0")})
    (repo / "setup.py").write_text(SETUP_PY.format("3.1.0"))
    (repo / "pkg" / "tests" / "test_core.py").write_text("def test_issue_9157():\n    pass\n")
    return tmp_path / "repos", repo, base, fix


def test_bare_test_names_are_found_in_the_base_commits_files_with_the_test_patch(moved_on, tmp_path, capsys):
    repos, _, base, _ = moved_on
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([{
        "instance_id": "example__bare-1", "repo": "example/bare", "base_commit": base, "patch": GOLD,
        "test_patch": TEST_PATCH, "problem_statement": "X is 1.", "FAIL_TO_PASS": ["test_new"],
        "PASS_TO_PASS": ["test_issue_9157", "test_other_new", "test_filler_3"]}]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    assert "skipped" not in capsys.readouterr().out
    spec = load_task(tmp_path / "t" / "example__bare-1").spec
    assert spec.fail_to_pass == ["pkg/tests/test_core.py::test_new"]
    assert spec.pass_to_pass == ["pkg/tests/test_core.py::test_issue_9157", "pkg/tests/test_other.py::test_other_new",
                                 "pkg/tests/test_core.py::test_filler_3"]


def test_an_instance_from_history_is_read_at_its_commits(moved_on):
    _, repo, _, fix = moved_on
    made = instance_from_commit(repo, fix, "example/bare")
    assert made["base_commit"] == git(repo, "rev-parse", f"{fix}~1")
    assert made["version"] == "1.3"  # the base commit's setup.py, not HEAD's 2.0 nor the working tree's 3.1
    assert made["patch"] == git(repo, "diff", "--full-index", f"{fix}~1", fix, "--", "pkg/core.py") + "\n"
    assert "+def test_issue_9157" not in made["test_patch"] and "X == 2" in made["test_patch"]


SHARED_PATCH = """\
--- /dev/null
+++ b/pkg/tests/test_more.py
@@ -0,0 +1,6 @@
+def test_other():
+    pass
+
+
+def test_more_new():
+    assert False
--- a/pkg/tests/test_other.py
+++ b/pkg/tests/test_other.py
@@ -1,2 +1,2 @@
 def test_other():
-    pass
+    assert True
"""


def test_a_pass_to_pass_name_several_touched_files_define_stands_for_each(moved_on, tmp_path, capsys):
    """SWE-bench runs every file the test patch touches and keeps one status per bare name: a PASS_TO_PASS
    name two of them define (sympy__sympy-12236's test_noncommutative) is each file's test; a FAIL_TO_PASS
    one is ambiguous, and its instance is skipped."""
    repos, _, base, _ = moved_on
    instances = tmp_path / "instances.json"
    common = {"repo": "example/bare", "base_commit": base, "patch": GOLD, "test_patch": SHARED_PATCH,
              "problem_statement": "X is 1."}
    instances.write_text(json.dumps([
        {"instance_id": "example__bare-2", **common, "FAIL_TO_PASS": ["test_more_new"], "PASS_TO_PASS": ["test_other"]},
        {"instance_id": "example__bare-3", **common, "FAIL_TO_PASS": ["test_other"], "PASS_TO_PASS": []}]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert "example__bare-3: the bare test name 'test_other' is defined in 2 of them" in out
    spec = load_task(tmp_path / "t" / "example__bare-2").spec
    assert spec.fail_to_pass == ["pkg/tests/test_more.py::test_more_new"]
    assert spec.pass_to_pass == ["pkg/tests/test_more.py::test_other", "pkg/tests/test_other.py::test_other"]


def test_pass_to_pass_ids_that_are_pieces_of_the_log_are_left_out(moved_on, tmp_path, capsys):
    """pytest-dev__pytest-5227's PASS_TO_PASS holds `[100%]`, `[` and `[100%]------`: its log's progress
    markers, which SWE-bench's parser took for test ids. Where every FAIL_TO_PASS id is a node id they are
    left out, saying so, and the instance is imported."""
    repos, _, base, _ = moved_on
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([{
        "instance_id": "example__bare-4", "repo": "example/bare", "base_commit": base, "patch": GOLD,
        "test_patch": TEST_PATCH, "problem_statement": "X is 1.",
        "FAIL_TO_PASS": ["pkg/tests/test_core.py::test_new"],
        "PASS_TO_PASS": ["[100%]", "[", "[100%]------------------------------", "pkg/tests/test_core.py::test_last"]}]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert "example__bare-4: 3 PASS_TO_PASS id(s) left out: not test ids but pieces of the log" in out
    assert load_task(tmp_path / "t" / "example__bare-4").spec.pass_to_pass == ["pkg/tests/test_core.py::test_last"]
