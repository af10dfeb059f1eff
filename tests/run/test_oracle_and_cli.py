import json
import subprocess
import sys

import pytest

from minidebug.agents.oracle import edits_for
from minidebug.run.episode import run_episode
from minidebug.tasks.patch import parse_patch
from minidebug.tasks.select import select_tasks
from minidebug.tasks.task import bundled_task_names, load_task, smoke_task_paths

TWO_HUNKS = """\
--- a/m.py
+++ b/m.py
@@ -1,3 +1,4 @@
 a = 1
+a2 = 12
 b = 2
 c = 3
@@ -8,3 +9,2 @@
 h = 8
-i = 9
 j = 10
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+x = 1
+y = 2
"""
BEFORE = "".join(f"{name} = {value}\n" for value, name in enumerate("abcdefghij", 1))


def test_oracle_shifts_later_hunks_by_earlier_ones():
    calls = [c.arguments for p in parse_patch(TWO_HUNKS) for c in edits_for(p, BEFORE if p.old_path else None)]
    assert calls == [
        {"path": "m.py", "start": 1, "end": 3, "new_code": "a = 1\na2 = 12\nb = 2\nc = 3\n"},
        {"path": "m.py", "start": 9, "end": 11, "new_code": "h = 8\nj = 10\n"},
        {"path": "new.py", "start": 1, "end": 0, "new_code": "x = 1\ny = 2\n"},
    ]


def test_parse_patch_rejects_garbage():
    with pytest.raises(ValueError, match="no '--- a/"):
        parse_patch("just text\n")
    with pytest.raises(ValueError, match="does not match its line counts"):
        parse_patch("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n")


@pytest.mark.parametrize("name", [name if index % 8 == 2 else pytest.param(name, marks=pytest.mark.slow)
                                  for index, name in enumerate(bundled_task_names())]
                         + [p.name for p in smoke_task_paths()])
def test_oracle_solves_every_bundled_task(name, cache_dir, tmp_path):
    """The oracle agent's episode on each bundled and smoke task: solved, recorded, reward 1 (every eighth
    bundled task here, each of them with -m slow; tests/taskcheck/test_check.py's oracle check runs them all)."""
    result = run_episode(load_task(name), "oracle", tmp_path, cache_dir=cache_dir)
    assert result.solved and result.error is None, result
    records = [json.loads(line) for line in (tmp_path / f"{name}.oracle.s0.jsonl").read_text().splitlines()]
    assert records[0]["type"] == "header" and records[-1]["type"] == "result"
    assert records[-1]["solved"] is True and records[-1]["diff"].startswith("diff --git")
    assert records[-2]["reward"] == 1.0


def test_select_tasks_by_glob_name_and_path(calc_task):
    assert [t.name for t in select_tasks(["sum_*", str(calc_task)])] == ["sum_tree", "calc"]
    assert [t.name for t in select_tasks(["sum_tree", "sum_*", str(calc_task), str(calc_task)])] == ["sum_tree", "calc"]
    with pytest.raises(Exception, match="no bundled task matches"):
        select_tasks(["zzz*"])


def _cli(*args, cache_dir, cwd=None):
    env = {**__import__("os").environ, "MINIDEBUG_CACHE": str(cache_dir)}
    return subprocess.run([sys.executable, "-m", "minidebug.run.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def test_cli_run_prints_a_table_and_writes_results(cache_dir, tmp_path):
    done = _cli("run", "--tasks", "sum_tree", "late_*", "--out", str(tmp_path / "out"), cache_dir=cache_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["task", "episodes", "solved", "rate", "steps", "tokens", "seconds"]
    assert lines[2].split()[:4] == ["late_handlers", "1", "1", "100%"]
    assert lines[3].split()[:4] == ["sum_tree", "1", "1", "100%"]
    assert lines[-1].split()[:4] == ["total", "2", "2", "100%"]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted(r["task"] for r in results) == ["late_handlers", "sum_tree"]


def test_cli_errors_are_clear(cache_dir):
    done = _cli("run", "--tasks", "sum_tre", cache_dir=cache_dir)
    assert done.returncode == 2 and "did you mean sum_tree" in done.stderr
    done = _cli("run", "--agent", "oracel", cache_dir=cache_dir)
    assert done.returncode == 2 and "Did you mean 'oracle'" in done.stderr


def test_import_is_cheap_and_side_effect_free(tmp_path):
    code = "import sys, minidebug; print(sorted(m for m in ('pydantic', 'git', 'tiktoken', 'pexpect') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.stdout.strip() == "[]"
    assert list(tmp_path.iterdir()) == []


def test_a_file_the_command_line_names_that_is_not_there_is_a_usage_error(tmp_path):
    missing = tmp_path / "missing.jsonl"
    done = subprocess.run([sys.executable, "-m", "minidebug", "replay", str(missing)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("minidebug: ") and str(missing) in done.stderr
    assert "Traceback" not in done.stderr
