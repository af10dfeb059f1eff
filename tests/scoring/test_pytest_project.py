"""pytest's own repository: its tests run with the project's pytest (from the tree), not the venv's."""

import re
import shutil
from pathlib import Path

import _pytest
import pytest

from tests.conftest import processes_left

SOURCE = Path(_pytest.__file__).parent  # a real pytest's sources, made into the project under test
TOLERANCE = re.compile(r"^ *DEFAULT_RELATIVE_TOLERANCE: .* = 1e-6$", re.M)  # approx's class (any pytest since 7)
GOOD, BAD = "= 1e-6", "= 0.0"
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


def _approx_source() -> Path:
    """The file of this pytest's sources that sets approx's default relative tolerance (python_api.py up to
    pytest 9.1, approx.py since)."""
    found = [path for path in sorted(SOURCE.glob("*.py")) if TOLERANCE.search(path.read_text())]
    if len(found) != 1:
        pytest.fail(f"{len(found)} files of {SOURCE} set DEFAULT_RELATIVE_TOLERANCE to 1e-6: choose another line")
    return found[0]


@pytest.fixture(params=["package", "module"])
def pytest_task(task_dir, request):
    """pytest's sources with approx's bug; `pytest` a package (pytest 5.4 and later) or a module, src/pytest.py,
    as pytest 5.3 and earlier have it."""
    api_name = _approx_source().name
    root = task_dir(TESTS, 'description = "approx ignores its relative tolerance"\n'
                           'eval = "python -m pytest -q -p no:randomly testing/test_approx.py"\n'
                           'readonly = ["testing/*"]\n')
    src = root / "repo" / "src"
    shutil.copytree(SOURCE.parent / "_pytest", src / "_pytest", ignore=shutil.ignore_patterns("__pycache__"))
    if request.param == "package":
        shutil.copytree(SOURCE.parent / "pytest", src / "pytest", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        main = (SOURCE.parent / "pytest" / "__main__.py").read_text()
        (src / "pytest.py").write_text((SOURCE.parent / "pytest" / "__init__.py").read_text() + "\n\n"
                                       + main[main.index("if __name__"):])
    api = root / "repo" / "src" / "_pytest" / api_name
    good = TOLERANCE.search(api.read_text()).group(0)
    api.write_text(api.read_text().replace(good, good.replace(GOOD, BAD)))
    (root / "solution.patch").write_text(
        f"--- a/src/_pytest/{api_name}\n+++ b/src/_pytest/{api_name}\n"
        + _hunk(api.read_text().splitlines(), good.replace(GOOD, BAD), good))
    return root


def _hunk(lines: list[str], old: str, new: str) -> str:
    """A one-line-change hunk with a line of context each side."""
    at = lines.index(old)
    return f"@@ -{at},3 +{at},3 @@\n {lines[at - 1]}\n-{old}\n+{new}\n {lines[at + 1]}\n"


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_the_projects_own_pytest_runs_its_tests(make_env, pytest_task, mode):
    env = make_env(pytest_task, eval_mode=mode)
    env.reset()
    _, reward, _, _, info = env.step({"name": "eval"})
    # The venv's pytest would pass both approx tests: the project's, with its bug, fails them.
    assert (info["score"], info["max_score"]) == (1, 3), info
    assert not info.get("forked"), info
    api = f"src/_pytest/{_approx_source().name}"
    good = TOLERANCE.search(_approx_source().read_text()).group(0)
    env.step({"name": "edit", "arguments": {"path": api, "old": good.replace(GOOD, BAD), "new": good}})
    _, reward, _, _, info = env.step({"name": "eval"})
    assert reward == 1.0 and "suspicious" not in info, info
    env.close()
    assert not processes_left()


BYTECODE_TESTS = {
    "testing/conftest.py": 'pytest_plugins = "pytester"\n',
    "testing/test_bytecode.py": (
        "import glob\nimport os\nimport py_compile\n\n\n"
        "def test_orphaned_pyc_file(pytester):\n"
        "    pytester.makepyfile(orphan='value = 17\\n')\n"
        "    py_compile.compile('orphan.py')\n"
        "    os.remove('orphan.py')\n"
        "    os.rename(glob.glob('__pycache__/orphan.*.pyc')[0], 'orphan.pyc')\n"
        "    pytester.syspathinsert()\n"
        "    import orphan\n\n"
        "    assert orphan.value == 17\n"),
}


def pytest_sources(root: Path) -> None:
    """A real pytest's sources, in the task's repository's src/ (pytest a package, as from 5.4 on)."""
    for package in ("_pytest", "pytest"):
        shutil.copytree(SOURCE.parent / package, root / "repo" / "src" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))


def test_its_tests_write_and_read_bytecode_of_their_own(make_env, task_dir):
    # As pytest's test_orphaned_pyc_file: bytecode compiled in the test's own folder, imported without its source.
    root = task_dir(BYTECODE_TESTS, 'description = "d"\neval = "python -m pytest -q testing/test_bytecode.py"\n'
                                    'readonly = ["testing/*"]\n')
    pytest_sources(root)
    env = make_env(root)
    env.reset()
    observation, reward, _, _, info = env.step({"name": "eval"})
    assert (reward, info["max_score"]) == (1.0, 1), observation
    env.close()
