"""The pdb tool against real pdb sessions over pexpect."""

import pytest

from minidebug.errors import ToolError
from minidebug.tools.pdb import map_line, pdb_arguments
from tests.conftest import descendants, processes_left

LOOP = {
    "prog.py": """\
        def count(n):
            total = 0
            for i in range(n):
                total += i
            return total


        if __name__ == "__main__":
            print("(Pdb) fake prompt from the program")
            print("result", count(300))
        """,
    "test_prog.py": """\
        from prog import count


        def test_count():
            assert count(4) == 6
        """,
}
SCRIPT_TOML = """\
    description = "x"
    eval = "python -m pytest -q"
    entrypoint = "python prog.py"
    readonly = ["test_*.py"]
    """


@pytest.fixture
def loop_env(make_env, task_dir):
    def factory(files=None, toml=SCRIPT_TOML, **options):
        env = make_env(task_dir(files or LOOP, toml), pdb_timeout=options.pop("pdb_timeout", 2), max_steps=1000, **options)
        env.reset()
        return env
    return factory


def pdb(env, command):
    observation, reward, terminated, truncated, info = env.step({"name": "pdb", "arguments": {"command": command}})
    return observation


def test_pytest_entrypoint_breakpoint_and_location(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    observation = pdb(env, "b calc.py:2")
    assert "[pdb started: python -m pdb -m pytest -s -q]" in observation
    assert "Breakpoint 1 at calc.py:2" in observation
    observation = pdb(env, "c")
    assert observation.endswith("[at calc.py:2] return a - b")
    assert pdb(env, "p a, b").splitlines()[0] == "(2, 3)"


def test_program_output_that_looks_like_a_prompt(loop_env):
    env = loop_env()
    observation = pdb(env, "c")
    assert "(Pdb) fake prompt from the program" in observation
    assert "result 44850" in observation


def test_two_hundred_commands_in_a_row(loop_env):
    env = loop_env(pdb_timeout=10)
    pdb(env, "b prog.py:4")
    pdb(env, "c")
    for expected in range(100):
        assert pdb(env, "p i").splitlines()[0] == str(expected)
        observation = pdb(env, "c")
        assert observation.endswith("[at prog.py:4] total += i")


def test_breakpoints_follow_edits_above_them(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:4")
    pdb(env, "b prog.py:2")
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 0,
                                              "new_code": "import os\nimport sys\n"}})
    view = env.step({"name": "view", "arguments": {"path": "prog.py", "start": 3, "end": 6}})[0]
    assert "4B     total = 0" in view and "6B         total += i" in view
    observation = pdb(env, "c")
    assert "breakpoint 1 moved with its code from prog.py:4 to prog.py:6" in observation
    assert "[pdb restarted after the edit of prog.py" in observation
    assert observation.endswith("[at prog.py:4] total = 0")
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 2, "new_code": ""}})
    env.step({"name": "edit", "arguments": {"path": "prog.py", "old": "    total = 0\n", "new": ""}})
    observation = pdb(env, "c")
    assert "breakpoint 2 at prog.py:2 was dropped: its line was deleted" in observation
    assert observation.endswith("[at prog.py:3] total += i")
    assert pdb(env, "p total") .splitlines()[0].startswith("*** NameError")


def test_tbreak_condition_and_clear(loop_env):
    env = loop_env()
    assert "Breakpoint 1 at prog.py:4" in pdb(env, "b prog.py:4, i == 7")
    assert pdb(env, "c").endswith("[at prog.py:4] total += i")
    assert pdb(env, "p i").splitlines()[0] == "7"
    assert "Deleted breakpoint 1" in pdb(env, "cl")
    assert "Breakpoint 2 at prog.py:5" in pdb(env, "tbreak prog.py:5")
    observation = pdb(env, "c")
    assert "Deleted breakpoint 2" in observation and observation.endswith("[at prog.py:5] return total")
    assert pdb(env, "cl") == "No breakpoints to clear."


def test_condition_survives_a_restart(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:4, i == 42")
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 0, "new_code": "# top\n"}})
    pdb(env, "c")
    assert pdb(env, "p i").splitlines()[0] == "42"


def test_infinite_loop_is_interrupted_and_breakpoints_kept(loop_env):
    files = dict(LOOP, **{"prog.py": "def spin():\n    n = 0\n    while True:\n        n += 1\n\n\nspin()\n"})
    env = loop_env(files, pdb_timeout=1)
    pdb(env, "b prog.py:7")
    pdb(env, "c")
    observation = pdb(env, "c")
    assert "interrupted (SIGINT)" in observation and "[at prog.py:" in observation
    assert int(pdb(env, "p n").splitlines()[0]) > 0
    assert 1 in env.tools["pdb"].breakpoints


def test_program_waiting_on_input(loop_env):
    files = dict(LOOP, **{"prog.py": "name = input('name? ')\nprint('hello', name)\n"})
    env = loop_env(files, pdb_timeout=1)
    observation = pdb(env, "c")
    assert "the program was waiting for input, which pdb cannot give it, so it got end-of-file" in observation
    assert observation.endswith("[at prog.py:1] name = input('name? ')")
    assert pdb(env, "p 1 + 1").splitlines()[0] == "2"
    assert "EOFError" in pdb(env, "c")


def test_breakpoints_in_files_whose_code_already_ran_are_reached(make_env, calc_task):
    # `c` runs untraced until code of a breakpoint's file arrives; a file whose code already ran (the project's,
    # once stopped in it; pytest's own, imported before the program started) keeps pdb's tracing.
    env = make_env(calc_task)
    env.reset()
    pdb(env, "b calc.py:2")
    assert pdb(env, "c").endswith("[at calc.py:2] return a - b")
    assert "Breakpoint 2 at calc.py:6" in pdb(env, "b calc.py:6")
    assert pdb(env, "c").endswith("[at calc.py:6] return a * b")
    runner = next(env.workspace.venv.glob("lib/python*/site-packages/_pytest/runner.py"))
    pdb(env, "q")
    assert "Breakpoint 3" in pdb(env, f"b {runner}:pytest_runtest_call")
    observation = pdb(env, "c")
    assert "in pytest_runtest_call" in observation or "runner.py:" in observation.splitlines()[-1], observation


def test_program_finishing_and_running_again(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:5")
    assert pdb(env, "c").endswith("[at prog.py:5] return total")
    observation = pdb(env, "c")
    assert "result 44850" in observation
    observation = pdb(env, "c")  # a fresh process, breakpoints re-set
    assert "[pdb restarted in a fresh process after the program finished" in observation
    assert observation.endswith("[at prog.py:5] return total")


def test_post_mortem_after_an_exception(loop_env):
    files = dict(LOOP, **{"prog.py": "def f(x):\n    return 10 / x\n\n\nf(0)\n"})
    env = loop_env(files)
    observation = pdb(env, "c")
    assert "ZeroDivisionError" in observation and "post mortem" in observation
    assert observation.endswith("[at prog.py:2] return 10 / x")
    assert pdb(env, "p x").splitlines()[0] == "0"


def test_quit_restart_and_refused_commands(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:4")
    assert "session ended" in pdb(env, "q")
    assert pdb(env, "c").endswith("[at prog.py:4] total += i")
    observation = pdb(env, "restart")
    assert "[pdb restarted as asked" in observation
    for command in ("interact", "commands 1", "debug count(3)"):
        assert pdb(env, command).startswith("error: pdb: '")
    assert "one command per call" in pdb(env, "p 1\np 2")


def test_control_characters_and_commands_longer_than_a_terminal_line_are_refused(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:4")
    pdb(env, "c")
    for command in ("p 1\x04", "p 1\x03", "p 'a\x1ab'", "p 1\x1c2", "p 1\x7f", "p 1\x00"):
        assert "control characters are not allowed" in pdb(env, command), repr(command)
    assert "limited to 4095 bytes" in pdb(env, "p " + "1" * 4094)
    assert "limited to 4095 bytes" in pdb(env, "p '" + "é" * 2047 + "'")  # bytes, not characters
    assert pdb(env, "p len('" + "1" * 4000 + "')").splitlines()[0] == "4000"
    assert pdb(env, "p i,\ttotal").splitlines()[0] == "(0, 0)"  # a tab is no control of the terminal's
    env.close()
    assert not processes_left()


FORGER = {
    "prog.py": """\
        import gc
        import pdb
        import sys
        import time

        prompt = next(o for o in gc.get_objects() if isinstance(o, pdb.Pdb)).prompt
        while True:  # a prompt that looks like pdb's, again and again, and the terminal never read
            sys.stdout.write(prompt)
            sys.stdout.flush()
            time.sleep(0.01)
        """,
}


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_a_program_that_never_reads_its_terminal_cannot_block_the_host(loop_env, mode):
    env = loop_env(FORGER, pdb_timeout=1, eval_mode=mode, max_tokens=10_000_000)
    pdb(env, "c")  # from here the program forges a prompt for every command, and never reads one
    for sent in range(1, 200):  # 4 kB a command: the terminal's queue holds a few  # noqa: B007 (read below)
        observation = pdb(env, "p len('" + "x" * 4000 + "')")
        if "did not take the command" in observation:
            break
    assert "within the 1 s pdb timeout" in observation and "it was killed" in observation, observation[-300:]
    assert sent > 1 and env.tools["pdb"].session is None
    observation = pdb(env, "p 1")
    assert "[pdb restarted after a command it did not read" in observation and observation.endswith("[at prog.py:1] import gc")
    env.close()
    assert not processes_left()


def test_reset_drops_the_session_and_breakpoints(loop_env):
    env = loop_env()
    pdb(env, "b prog.py:4")
    pdb(env, "c")
    pid = env.tools["pdb"].session.child.pid
    env.reset()
    assert pid not in descendants()
    assert env.tools["pdb"].breakpoints == {}


def test_breakpoints_can_survive_reset(loop_env):
    env = loop_env(keep_breakpoints=True)
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 0, "new_code": "# a\n# b\n"}})
    pdb(env, "b prog.py:6")  # `total += i` after the two inserted lines
    env.reset()
    assert env.tools["pdb"].breakpoints[1].line == 4
    assert pdb(env, "c").endswith("[at prog.py:4] total += i")


def test_close_kills_the_session(make_env, task_dir):
    env = make_env(task_dir(LOOP, SCRIPT_TOML))
    env.reset()
    pdb(env, "b prog.py:4")
    pdb(env, "c")
    assert descendants()
    env.close()
    assert not processes_left()


def test_module_entrypoint(loop_env):
    files = dict(LOOP, **{"pkg/__init__.py": "", "pkg/__main__.py": "x = 41\nprint(x + 1)\n"})
    env = loop_env(files, SCRIPT_TOML.replace("python prog.py", "python -m pkg"))
    assert pdb(env, "n").endswith("[at pkg/__main__.py:2] print(x + 1)")
    assert "42" in pdb(env, "c")


def test_pdb_arguments():
    assert pdb_arguments(["python", "-m", "pytest", "-q"]) == ["-m", "pytest", "-s", "-q"]
    assert pdb_arguments(["pytest", "-x"]) == ["-m", "pytest", "-s", "-x"]
    assert pdb_arguments(["python3.11", "run.py", "a"]) == ["run.py", "a"]
    with pytest.raises(ToolError):
        pdb_arguments(["node", "x.js"])
    with pytest.raises(ToolError):
        pdb_arguments(["python", "-c", "print(1)"])


def test_map_line():
    before = ["a", "b", "c", "d"]
    assert map_line(before, ["x", "a", "b", "c", "d"], 3) == 4
    assert map_line(before, ["a", "c", "d"], 2) is None
    assert map_line(before, ["a", "B", "c", "d"], 2) == 2


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_other_python_versions(make_env, task_dir, version):
    toml = SCRIPT_TOML + f'python = "{version}"\n'
    env = make_env(task_dir(LOOP, toml), pdb_timeout=5)
    env.reset()
    pdb(env, "b prog.py:4, i == 3")
    assert pdb(env, "c").endswith("[at prog.py:4] total += i")
    assert pdb(env, "p i").splitlines()[0] == "3"
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 0, "new_code": "# moved\n"}})
    assert pdb(env, "c").endswith("[at prog.py:5] total += i")
    assert pdb(env, "p sys.version_info[:2] if 'sys' in dir() else __import__('sys').version_info[:2]") \
        .splitlines()[0] == str(tuple(int(p) for p in version.split(".")))
    _, reward, *_ = env.step({"name": "eval"})
    assert reward == 1.0


def test_break_on_a_function_name(loop_env):
    env = loop_env()
    assert "Breakpoint 1 at prog.py:1" in pdb(env, "b count")  # pdb finds the def by scanning the file
    assert env.tools["pdb"].breakpoints[1].line == 1


def test_endless_printing_is_capped_and_interrupted(loop_env):
    files = dict(LOOP, **{"prog.py": "i = 0\nwhile True:\n    i += 1\n    print('spam', i)\n"})
    env = loop_env(files, pdb_timeout=1, observation_tokens=500)
    observation = pdb(env, "c")
    assert "interrupted (SIGINT)" in observation
    assert "tokens left out of this observation" in observation
    assert env.budget.count(observation) <= 500
    assert int(pdb(env, "p i").splitlines()[0]) > 1000


def test_function_breakpoints_keep_their_meaning_across_edits_and_restarts(loop_env):
    env = loop_env()
    assert "Breakpoint 1 at prog.py:1" in pdb(env, "b prog.py:count, n > 100")  # before prog is imported
    assert "Breakpoint 2 at prog.py:1" in pdb(env, "tbreak prog.py:count")
    assert "Disabled breakpoint 2" in pdb(env, "disable 2")
    env.step({"name": "edit", "arguments": {"path": "prog.py", "start": 1, "end": 0, "new_code": "import os\n"}})
    observation = pdb(env, "c")  # a fresh process: the function breakpoint stops in the body, when called
    assert "restarted after the edit of prog.py" in observation
    assert observation.endswith("[at prog.py:3] total = 0"), observation
    assert pdb(env, "p n").startswith("300")  # the condition came along
    listing = pdb(env, "b")
    assert "stop only if n > 100" in listing and "del  no    at prog.py:2" in listing


def test_b_file_function_reports_an_unknown_function(loop_env):
    env = loop_env()
    assert "no function 'nope' in prog.py" in pdb(env, "b prog.py:nope")


@pytest.mark.parametrize("sandbox", ["auto", None])
def test_a_session_ended_by_a_resource_limit_names_the_limit(loop_env, sandbox):
    files = dict(LOOP, **{"prog.py": "while True:\n    pass\n"})
    env = loop_env(files, cpu_seconds=1, pdb_timeout=20, sandbox=sandbox)
    observation = pdb(env, "c")
    assert "[stopped: CPU time limit of 1 s reached]" in observation, observation
    assert "the program and its pdb session ended" in observation


def test_pdb_of_a_task_with_fail_to_pass_runs_only_those_tests(make_env, task_dir):
    """An imported instance names its failing tests: pdb runs those, so `c` stops in the failing test, not in
    a passing one the file runs first; the task's own `entrypoint` still wins when it sets one."""
    files = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_a_passes():\n    assert add(1, 0) == 1\n\n\n"
                        "def test_b_fails():\n    assert add(2, 3) == 5\n",
    }
    toml = ('description = "add"\neval = "python -m pytest -q test_calc.py"\n'
            'fail_to_pass = ["test_calc.py::test_b_fails"]\npass_to_pass = ["test_calc.py::test_a_passes"]\n')
    env = make_env(task_dir(files, toml, name="narrowed"))
    env.reset()
    assert env.task.entrypoint[-2:] == ["-q", "test_calc.py::test_b_fails"]
    pdb = lambda command: env.step({"name": "pdb", "arguments": {"command": command}})[0]  # noqa: E731
    pdb("b calc.py:2")
    assert "a = 2" in pdb("c") + pdb("p f'a = {a}'")
    own = make_env(task_dir(files, toml + 'entrypoint = "python -m pytest -q test_calc.py"\n', name="own"))
    assert own.task.entrypoint == ["python", "-m", "pytest", "-q", "test_calc.py"]
