"""pytest's own repository: its tests run with the project's pytest (from the tree), not the venv's."""

import shutil
from pathlib import Path

import _pytest
import pytest

from tests.conftest import descendants

SOURCE = Path(_pytest.__file__).parent  # a real pytest's sources, made into the project under test
GOOD, BAD = "DEFAULT_RELATIVE_TOLERANCE: float | Decimal = 1e-6", "DEFAULT_RELATIVE_TOLERANCE: float | Decimal = 0.0"
TESTS = {
    "testing/conftest.py": 'pytest_plugins = "pytester"\n',
    "testing/test_approx.py": (
        "import pytest\n\n\n"
        "def test_relative_tolerance():\n"
        "    assert 1.0 == pytest.approx(1.0000001)\n\n\n"
        "def test_in_a_run_of_its_own(pytester):\n"
        "    pytester.makepyfile('import pytest\\n\\ndef test_it():\\n    assert 1.0 == pytest.approx(1.0000001)\\n')\n"
        "    pytester.runpytest_inprocess().assert_outcomes(passed=1)\n\n\n"
        "def test_exact():\n"
        "    assert 2.0 == pytest.approx(2.0)\n"),
}


@pytest.fixture
def pytest_task(task_dir):
    if GOOD not in (SOURCE / "python_api.py").read_text():
        pytest.fail(f"{SOURCE}/python_api.py no longer says {GOOD!r}: choose another line to break")
    root = task_dir(TESTS, 'description = "approx ignores its relative tolerance"\n'
                           'eval = "python -m pytest -q -p no:randomly testing/test_approx.py"\n'
                           'readonly = ["testing/*"]\n')
    for package in ("_pytest", "pytest"):
        shutil.copytree(SOURCE.parent / package, root / "repo" / "src" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    api = root / "repo" / "src" / "_pytest" / "python_api.py"
    api.write_text(api.read_text().replace(GOOD, BAD))
    (root / "solution.patch").write_text(
        "--- a/src/_pytest/python_api.py\n+++ b/src/_pytest/python_api.py\n"
        + _hunk(api.read_text().splitlines(), BAD, GOOD))
    return root


def _hunk(lines: list[str], old: str, new: str) -> str:
    """A one-line-change hunk with a line of context each side."""
    at = next(i for i, line in enumerate(lines) if old in line)
    before, changed, after = lines[at - 1], lines[at], lines[at + 1]
    return (f"@@ -{at},3 +{at},3 @@\n {before}\n-{changed}\n+{changed.replace(old, new)}\n {after}\n")


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_the_projects_own_pytest_runs_its_tests(make_env, pytest_task, mode):
    env = make_env(pytest_task, eval_mode=mode)
    env.reset()
    _, reward, _, _, info = env.step({"name": "eval"})
    # The venv's pytest would pass both approx tests: the project's, with its bug, fails them.
    assert (info["score"], info["max_score"]) == (1, 3), info
    assert not info.get("forked"), info
    api = "src/_pytest/python_api.py"
    old = next(line for line in (env.workspace.root / api).read_text().splitlines() if BAD in line)
    env.step({"name": "edit", "arguments": {"path": api, "old": old, "new": old.replace(BAD, GOOD)}})
    _, reward, _, _, info = env.step({"name": "eval"})
    assert reward == 1.0 and "suspicious" not in info, info
    env.close()
    assert not descendants()
