"""DebugEnv.exec, the one way to run a confined command, and the tool hooks declared on Tool."""

from __future__ import annotations

import pytest

from minidebug import MinidebugError, ToolError
from minidebug.tools import TOOLS
from minidebug.tools.base import Arguments, Tool

from ..conftest import cmdlines, descendants


def test_exec_runs_in_the_worktree_inside_the_venv(make_env, calc_task):
    env = make_env(calc_task, sandbox=None)
    env.reset()
    result = env.exec("pwd; python -c 'import sys; print(sys.prefix)'; echo $MINIDEBUG_TEST_VAR")
    lines = result.output.splitlines()
    assert result.returncode == 0 and not result.timed_out
    assert lines[0] == str(env.workspace.root)
    assert lines[1] == str(env.workspace.venv)
    assert lines[2] == ""  # nothing of the host's environment reaches the command


def test_exec_takes_an_argv_a_folder_stdin_and_more_path(make_env, task_dir):
    task = task_dir({"pkg/__init__.py": "", "pkg/tool.sh": "", "test_x.py": "def test_x():\n    pass\n"})
    env = make_env(task, sandbox=None)
    env.reset()
    assert env.exec(["pwd"], cwd="pkg").output.strip() == str(env.workspace.root / "pkg")
    assert env.exec(["cat"], stdin=b"fed\n").output == "fed\n"
    extra = env.workspace.dir / "extra-bin"
    (extra / "bin").mkdir(parents=True)
    (extra / "bin" / "hello").write_text("#!/bin/sh\necho hi from the extra folder\n")
    (extra / "bin" / "hello").chmod(0o755)
    result = env.exec("hello", env={"PATH": str(extra / "bin")})
    assert result.output.strip() == "hi from the extra folder"


def test_exec_refuses_folders_outside_the_episode(make_env, calc_task, tmp_path):
    env = make_env(calc_task, sandbox=None)
    env.reset()
    with pytest.raises(ToolError, match="not allowed|escapes|outside"):
        env.exec("true", cwd="../..")
    with pytest.raises(ToolError):
        env.exec("true", cwd="/etc")
    with pytest.raises(ValueError, match="not inside the episode"):
        env.exec("true", writable=[tmp_path])


def test_exec_kills_at_its_deadline_and_leaves_no_process(make_env, calc_task):
    env = make_env(calc_task, sandbox=None)
    env.reset()
    result = env.exec("sleep 30 & sleep 30", timeout=0.5)
    assert result.timed_out and result.returncode is None
    assert "timed out after 0.5 s" in result.output
    assert [line for line in cmdlines(descendants()) if "sleep 30" in line] == []  # (the env's warm ones stay)


def test_exec_before_reset_and_after_close_is_a_caller_error(make_env, calc_task):
    env = make_env(calc_task, sandbox=None)
    with pytest.raises(MinidebugError, match="reset"):
        env.exec("true")
    env.reset()
    env.close()
    with pytest.raises(MinidebugError, match="closed"):
        env.exec("true")


class Counter(Tool):
    """A tool that keeps no state: it relies on the hooks' defaults."""

    name = "counter"
    description = "Count the calls."

    class Args(Arguments):
        pass

    def run(self, episode, args) -> str:
        return "counted"


def test_a_tool_without_hooks_goes_through_reset_edit_view_and_close(make_env, calc_task, monkeypatch):
    monkeypatch.setitem(TOOLS, "counter", f"{__name__}:Counter")
    env = make_env(calc_task, sandbox=None, tools=["counter", "edit", "view"])
    env.reset()
    assert env.step({"name": "counter", "arguments": {}})[0] == "counted"
    observation, *_ = env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 1,
                                                               "new_code": "def add(a, b):"}})
    assert not observation.startswith("error")
    assert not env.step({"name": "view", "arguments": {"path": "calc.py"}})[0].startswith("error")
    env.reset()
    env.close()
    assert Counter().breakpoint_lines(env, "calc.py") == set()
