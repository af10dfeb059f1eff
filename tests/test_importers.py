"""`minidebug import exercism` on exercise folders built here in the track's layout."""

import json
import subprocess
import sys

from minidebug.check import check_task, format_reports
from minidebug.task import load_task


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


def test_import_makes_tasks_that_pass_check(tmp_path, cache_dir):
    track = make_track(tmp_path / "python")
    done = subprocess.run([sys.executable, "-m", "minidebug.cli", "import", "exercism", str(track),
                           "--out", str(tmp_path / "tasks")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "1 task(s) written" in done.stdout
    task = load_task(tmp_path / "tasks" / "leap")
    assert task.description == "Report whether a year is a leap year.\n\nUse the Gregorian rules."
    assert task.spec.readonly == ["leap_test.py"] and task.spec.eval == "python -m pytest -q leap_test.py"
    report = check_task(task, cache_dir=cache_dir)
    assert report.ok, format_reports([report])


def test_a_folder_that_is_no_track_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minidebug.cli", "import", "exercism", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no exercises/practice folder" in done.stderr
