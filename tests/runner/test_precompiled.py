"""The task's own files compiled ahead by the warm interpreter: a forked run gets that code only for a file
whose bytes are the task's own, compiles what the agent changed, and shows the warnings compiling gives. What
the watch reads of a test module (it parses the file: a compile event too) is read ahead likewise."""

from __future__ import annotations

import re

import pytest

from minidebug.sandbox.choose import bwrap_works, landlock_works

SANDBOXES = [None, pytest.param("landlock", marks=pytest.mark.skipif(not landlock_works(), reason="no Landlock")),
             pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap"))]

# The failing test names (in the eval's output) the project files the run compiled as it imported them.
FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "helper.py": "VALUE = 1\n",
    "test_calc.py": """\
        import os
        import sys

        COMPILED = []
        sys.addaudithook(lambda event, args: COMPILED.append(os.path.basename(args[1]))
                         if event == "compile" and isinstance(args[1], str) and args[1].endswith(".py") else None)

        import calc  # noqa: E402
        import helper  # noqa: E402


        def test_add():
            assert calc.add(2, 3) == 5


        def test_compiled():
            assert False, f"COMPILED {sorted(set(COMPILED))}"
        """,
}


def compiled(result) -> str:
    found = re.findall(r"COMPILED \[[^\]]*\]", result.output)
    assert found, result.output[-3000:]
    return found[0]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_forked_run_compiles_only_what_the_agent_changed(make_env, task_dir, sandbox):
    task = task_dir(FILES)
    fresh = make_env(task, sandbox=sandbox, eval_mode="fresh")
    fresh.reset()
    first = fresh.evaluate()  # the task's first eval learns which of the tree's files the tests import
    assert not first.forked and compiled(first) == "COMPILED ['calc.py', 'helper.py', 'test_calc.py']"
    env = make_env(task, sandbox=sandbox, terminate_on_success=False)
    env.reset()
    again = env.evaluate()
    assert again.forked and compiled(again) == "COMPILED []"
    assert again.tests == first.tests == {"test_calc.py::test_add": "failed", "test_calc.py::test_compiled": "failed"}
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b\n"}})
    fixed = env.evaluate()
    assert fixed.forked and compiled(fixed) == "COMPILED ['calc.py']"  # the agent's bytes, compiled in the run
    assert fixed.tests["test_calc.py::test_add"] == "passed"
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a - b\n"}})
    back = env.evaluate()  # the task's own bytes again: its code compiled ahead
    assert back.forked and compiled(back) == "COMPILED []" and back.tests == first.tests


def test_fresh_runs_compile_every_file(make_env, task_dir):
    env = make_env(task_dir(FILES), eval_mode="fresh", terminate_on_success=False)
    env.reset()
    for _ in range(2):
        result = env.evaluate()
        assert not result.forked and compiled(result) == "COMPILED ['calc.py', 'helper.py', 'test_calc.py']"


def test_a_file_whose_compiling_warns_is_compiled_in_each_run_with_its_warning(make_env, task_dir):
    files = dict(FILES, **{"helper.py": 'VALUE = "\\d"\n'})  # an invalid escape: compiling it warns
    files["test_calc.py"] = files["test_calc.py"].replace(
        "def test_add", "def test_tuple():\n            assert (1, 'always true')\n\n\n        def test_add")
    env = make_env(task_dir(files), terminate_on_success=False)
    env.reset()
    fresh = env.evaluate()
    forked = env.evaluate()
    assert compiled(fresh) == "COMPILED ['calc.py', 'helper.py', 'test_calc.py']"
    # calc.py's code was compiled ahead; the test module's compiling warned, so it is compiled (and read) in the run
    assert forked.forked and compiled(forked) == "COMPILED ['helper.py', 'test_calc.py']"
    for result in (fresh, forked):  # pytest's warning from rewriting the test module's asserts shows each time
        assert "assertion is always true" in result.output, result.output[-3000:]
        assert "invalid escape sequence" in result.output, result.output[-3000:]
