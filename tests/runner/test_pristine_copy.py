"""The next eval's pristine tree, laid in an eval room while the agent thinks: a forked eval uses it, with the
agent's changes laid over it as usual; a tree any program touched in between is not used; a task with hidden
files never has its tree laid ahead."""

from __future__ import annotations

import os
import re
import time

import pytest

from minidebug.scoring.evaltree import EVAL_TREE

# The test prints what the run sees of its own file (inode and change time: a copy made by the eval has a
# later one) and of calc.py (mode, link count).
INODES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": """\
        import os

        from calc import add


        def test_add():
            own, calc = os.stat(__file__), os.stat("calc.py")
            print("seen:", own.st_ino, own.st_ctime_ns, oct(calc.st_mode), calc.st_nlink)
            assert add(2, 3) == 5
        """,
}
FIX = {"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}}


def laid_room(env):
    """The room the env's next eval takes, once its pristine tree is laid there."""
    rooms = [room for room in env.rooms.pool.idle_rooms if room.pristine is not None]
    assert len(rooms) == 1
    rooms[0].pristine.wait()
    return rooms[0]


def seen(result) -> tuple[tuple[int, int], str, int]:
    """(inode, change time) of the test file, mode and link count of calc.py, as the run saw them."""
    found = re.search(r"seen: (\d+) (\d+) (0o\d+) (\d+)", result.output)
    assert found, result.output[-600:]
    return (int(found.group(1)), int(found.group(2))), found.group(3), int(found.group(4))


@pytest.fixture
def env(make_env, task_dir):
    made = make_env(task_dir(INODES), sandbox=None, terminate_on_success=False)
    made.reset()
    made.evaluate()  # the task's tests are measured: from here on evals are forked
    return made


def test_a_forked_eval_runs_in_the_tree_laid_ahead_with_the_agents_changes_over_it(env):
    tree = laid_room(env).dir / EVAL_TREE
    laid = os.stat(tree / "test_calc.py")
    time.sleep(0.05)  # a copy made by the eval would have a later change time
    result = env.evaluate()
    assert result.forked and result.tests == {"test_calc.py::test_add": "failed"}
    assert seen(result)[0] == (laid.st_ino, laid.st_ctime_ns)  # the file laid ahead
    env.step(FIX)
    fixed = env.evaluate()
    assert fixed.forked and fixed.score == 1  # the agent's change is laid over the pristine tree


@pytest.mark.parametrize("touch", ["write", "replace", "chmod", "add", "link"])
def test_a_tree_touched_after_it_was_laid_is_not_used(env, touch):
    # Without a sandbox any program of the user can write in a room's folder: what it changed never counts.
    tree = laid_room(env).dir / EVAL_TREE
    calc, mode = tree / "calc.py", oct(os.stat(tree / "calc.py").st_mode)
    laid = os.stat(tree / "test_calc.py")
    fixed = "def add(a, b):\n    return a + b\n"
    if touch == "write":
        with open(calc, "r+") as handle:  # same size, same inode: only the change time tells
            handle.write(fixed)
        os.utime(calc, ns=(os.stat(tree / "test_calc.py").st_atime_ns, os.stat(tree / "test_calc.py").st_mtime_ns))
    elif touch == "replace":
        (tree / "new.py").write_text(fixed)
        os.replace(tree / "new.py", calc)
    elif touch == "chmod":
        calc.chmod(0o755)
    elif touch == "add":
        (tree / "conftest.py").write_text(
            "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
    elif touch == "link":
        os.link(calc, tree.parent / "kept")
    result = env.evaluate()
    assert result.forked and result.score == 0 and result.tests == {"test_calc.py::test_add": "failed"}
    own, calc_mode, links = seen(result)
    assert own != (laid.st_ino, laid.st_ctime_ns) and calc_mode == mode and links == 1  # a tree of its own
    assert not (tree / "conftest.py").exists()


def test_a_task_with_hidden_files_has_no_tree_laid_ahead(make_env, task_dir):
    toml = 'description = "d"\neval = "python -m pytest -q"\nhidden = ["test_calc.py"]\n'
    env = make_env(task_dir(INODES, toml), sandbox=None, terminate_on_success=False)
    env.reset()
    for _ in range(2):
        env.evaluate()
    rooms = env.rooms.pool.idle_rooms
    assert rooms and all(room.pristine is None for room in rooms)
    assert all(os.listdir(room.dir / EVAL_TREE) == [] for room in rooms)  # emptied before the observation
