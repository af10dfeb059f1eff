"""`minidebug import exercism` on exercise folders built here in the track's layout."""

import json
import subprocess
import sys

from minidebug.taskcheck.check import check_task, format_reports
from minidebug.tasks.task import load_task


def make_track(root):
    exercise = root / "exercises" / "practice" / "leap"
    (exercise / ".meta").mkdir(parents=True)
    (exercise / ".docs").mkdir()
    (exercise / ".meta" / "config.json").write_text(json.dumps({"files": {
        "solution": ["leap.py"], "test": ["leap_test.py"], "example": [".meta/example.py"]}}))
    (exercise / ".docs" / "instructions.md").write_text("Report whether a year is a leap year.\n")
    (exercise / ".docs" / "instructions.append.md").write_text("Use the Gregorian rules.\n")
    (exercise / "leap.py").write_text("def leap_year(year):\n    pass\n")
    (exercise / ".meta" / "example.py").write_text(
        "def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n")
    (exercise / "leap_test.py").write_text(
        "from leap import leap_year\n\n\ndef test_2000():\n    assert leap_year(2000)\n\n\n"
        "def test_1900():\n    assert not leap_year(1900)\n")
    (root / "exercises" / "practice" / "notes").mkdir()  # no .meta/config.json: not an exercise
    return root


def add_exercise(root, slug, instructions, stub, example, test):
    exercise = root / "exercises" / "practice" / slug
    (exercise / ".meta").mkdir(parents=True)
    (exercise / ".docs").mkdir()
    (exercise / ".meta" / "config.json").write_text(json.dumps({"files": {
        "solution": [f"{slug}.py"], "test": [f"{slug}_test.py"], "example": [".meta/example.py"]}}))
    (exercise / ".docs" / "instructions.md").write_text(instructions, encoding="utf-8")
    (exercise / f"{slug}.py").write_text(stub)
    (exercise / ".meta" / "example.py").write_text(example)
    (exercise / f"{slug}_test.py").write_text(f"from {slug} import f\n\n\ndef test_f():\n    {test}\n")


def test_import_makes_tasks_that_pass_check(tmp_path, cache_dir):
    track = make_track(tmp_path / "python")
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "import", "exercism", str(track),
                           "--out", str(tmp_path / "tasks")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "1 task(s) written" in done.stdout
    task = load_task(tmp_path / "tasks" / "leap")
    assert task.description == "Report whether a year is a leap year.\n\nUse the Gregorian rules."
    assert task.spec.readonly == ["leap_test.py"] and task.spec.eval == "python -m pytest -q leap_test.py"
    report = check_task(task, cache_dir=cache_dir)
    assert report.ok, format_reports([report])


def test_import_says_what_it_skipped_and_escapes_what_it_writes(tmp_path):
    track = make_track(tmp_path / "python")
    tricky = 'Say "hi" 👋 with a back\\slash \\n and a tab\there.\n'
    add_exercise(track, "greet", tricky, "def f():\n    return None\n", "def f():\n    return 'hi'\n",
                 "assert f() == 'hi'")
    add_exercise(track, "ledger", "Refactor the ledger.\n", "def f():\n    return 1\n", "def f():\n    return 1\n",
                 "assert f() == 1")  # the stub already passes: no bug to find
    add_exercise(track, "broken", "Broken example.\n", "def f():\n    return 0\n", "def f():\n    return 2\n",
                 "assert f() == 1")  # the example fails its own tests
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "import", "exercism", str(track),
                           "--out", str(tmp_path / "tasks")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"2 task(s) written to {tmp_path / 'tasks'}", "2 skipped:",
        f"  broken: its example solution fails its tests on Python {sys.version_info.major}.{sys.version_info.minor}",
        "  ledger: refactoring exercise: its stub already passes every test"]
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == ["greet", "leap"]
    assert load_task(tmp_path / "tasks" / "greet").description == tricky.strip()

    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "import", "exercism", str(track),
                           "--out", str(tmp_path / "all"), "--no-verify"], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"4 task(s) written to {tmp_path / 'all'}"


def test_a_folder_that_is_no_track_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "import", "exercism", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no exercises/practice folder" in done.stderr
