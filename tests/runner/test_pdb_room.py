"""pdb sessions forked in an eval room (warm episodes): the agent sees what a session started in the worktree
shows, what the program writes stays in the room, and nothing is left behind."""

import os
import time

import pytest

from minidebug.runner.pdb_room import RoomPdbSession
from minidebug.runner.pdb_session import PdbSession
from minidebug.tools.pdb import Pdb
from tests.conftest import CALC, CALC_TOML, cmdlines, descendants, processes_left
from tests.runner.test_warm import SANDBOXES

COMMANDS = [
    "b calc.py:2", "c", "p a, b", "w", "p __file__", "p __import__('os').getcwd()",
    "p sorted(__import__('os').listdir('.'))", "p __import__('os').environ['HOME']",
    "p [p for p in __import__('sys').path if 'site-packages' not in p and 'python3' not in p]",
    "p open('calc.py').read()", "p len(__import__('traceback').extract_stack())", "n", "b mul", "c", "l", "cl 1",
    "c",
]
RECURSES = {
    "walk.py": "def depth(n):\n    return depth(n + 1)\n",
    "test_walk.py": "from walk import depth\n\n\ndef test_depth():\n    assert depth(0) == 1\n",
}


def pdb(env, command):
    return env.step({"name": "pdb", "arguments": {"command": command}})[0]


def tool(env) -> Pdb:
    return env.tools["pdb"]


def test_a_forked_session_shows_what_a_session_in_the_worktree_shows(make_env, task_dir):
    files = dict(CALC, **{"test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
                                          "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"})
    task = task_dir(files, CALC_TOML, name="calc")
    seen = {}
    for mode in ("fresh", "fork"):
        env = make_env(task, eval_mode=mode)
        env.reset()
        seen[mode] = [pdb(env, COMMANDS[0])]
        assert isinstance(tool(env).session, RoomPdbSession) == (mode == "fork")
        seen[mode] += [pdb(env, command) for command in COMMANDS[1:]]
    for command, fresh, forked in zip(COMMANDS, seen["fresh"], seen["fork"]):
        assert forked == fresh, command
    assert "[at calc.py:2] return a - b" in seen["fork"][1]


def test_trace_and_inspect_forked_show_what_they_show_fresh_down_to_the_recursion_limit(make_env, task_dir):
    task = task_dir(RECURSES, CALC_TOML, name="walk")
    calls = [{"name": "trace", "arguments": {"target": "depth"}},
             {"name": "inspect", "arguments": {"at": "walk.py:2", "expr": ["n", "__file__", "__import__('os').getcwd()"]}},
             {"name": "inspect", "arguments": {"at": "exception"}}]
    seen = {}
    for mode in ("fresh", "fork"):
        env = make_env(task, eval_mode=mode)
        env.reset()
        seen[mode] = [env.step(call)[0] for call in calls]
        assert tool(env).spare is None and env.tools["trace"].standby is None
    assert seen["fork"] == seen["fresh"]
    assert " calls\n#1 depth(n=0)" in seen["fork"][0] and "n = 0" in seen["fork"][1]


def test_what_the_program_writes_stays_in_the_room_and_is_gone_after(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    pdb(env, "b calc.py:2")
    session = tool(env).session
    assert isinstance(session, RoomPdbSession)
    pdb(env, "p open('written.txt', 'w').write('from the program')")
    assert pdb(env, "p open('written.txt').read()").splitlines()[0] == "'from the program'"
    assert not (env.workspace.root / "written.txt").exists()
    pdb(env, "q")
    # the room's tree is emptied for the next eval or session (whose base may already be laid there again)
    assert "written.txt" not in os.listdir(session.tree)
    assert env.step({"name": "eval"})[0].startswith("eval: 1 passed, 1 failed")


def test_breakpoints_are_the_worktrees_and_an_edit_reaches_the_next_session(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    root = env.workspace.root
    assert "Breakpoint 1 at calc.py:6" in pdb(env, f"b {root / 'calc.py'}:6")  # an absolute path of the worktree
    assert tool(env).breakpoints[1].file == str(root / "calc.py")
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "    return a * b", "new": "    return b * a"}})
    observation = pdb(env, "c")
    assert "[pdb restarted after the edit of calc.py" in observation
    assert observation.endswith("[at calc.py:6] return b * a")


def test_an_eval_while_a_session_is_live_and_the_room_serves_evals_after(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    env.step({"name": "eval"})  # learns the task; the pool's room waits
    pdb(env, "b calc.py:2")
    pdb(env, "c")
    observation, _, _, _, info = env.step({"name": "eval"})
    assert info["score"] == 1 and info["max_score"] == 2
    assert pdb(env, "p a, b").splitlines()[0] == "(2, 3)"  # the session goes on
    pdb(env, "q")
    evals = env.rooms
    assert evals.ready  # the room is back, or another waits
    assert env.evaluate().forked


def test_a_hung_program_is_interrupted_then_killed_and_nothing_is_left(make_env, task_dir):
    files = dict(CALC, **{"calc.py": "import signal\n\n\ndef add(a, b):\n"
                                     "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                     "    while True:\n        pass\n\n\ndef mul(a, b):\n    return a * b\n"})
    env = make_env(task_dir(files, CALC_TOML, name="calc"), pdb_timeout=1)
    env.reset()
    pdb(env, "b calc.py:5")
    pdb(env, "c")
    session = tool(env).session
    assert isinstance(session, RoomPdbSession)
    observation = pdb(env, "c")
    assert "did not stop on SIGINT; the program was killed" in observation
    assert tool(env).session is None and not session.alive
    assert "[at calc.py:5]" in pdb(env, "c")  # a new session, the breakpoint kept
    env.close()
    assert not processes_left()


def test_where_no_room_can_serve_the_session_starts_in_the_worktree(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    env.rooms.fork = False  # as when the venv's imports start a thread
    pdb(env, "b calc.py:2")
    assert type(tool(env).session) is PdbSession
    assert pdb(env, "c").endswith("[at calc.py:2] return a - b")


FORCE_PASS = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
              "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_nothing_a_session_leaves_in_its_room_reaches_the_next_eval_there(make_env, calc_task, sandbox):
    env = make_env(calc_task, sandbox=sandbox, terminate_on_success=False)
    env.reset()
    env.evaluate()  # learns the task; the next evals fork in the pool's room
    base = env.evaluate()
    pdb(env, "b calc.py:2")
    pdb(env, "c")
    for command in [f"p open('conftest.py', 'w').write({FORCE_PASS!r})",  # in the room's copy of the worktree
                    "p open(__import__('os').environ['HOME'] + '/left', 'w').write('for the next run')",
                    "p __import__('subprocess').Popen(['sleep', '1002']).pid"]:
        assert pdb(env, command).splitlines()[0].isdigit()
    parent = pdb(env, "p open(f'/proc/{__import__(\"os\").getppid()}/mem', 'r+b')")
    if sandbox is not None or os.geteuid() != 0:  # run by root unconfined, it may: that interpreter then ends
        # the warm interpreter is not dumpable, and under bwrap /proc is read-only besides
        assert "PermissionError" in parent or "Read-only file system" in parent
    assert not (env.workspace.root / "conftest.py").exists()
    pdb(env, "q")
    time.sleep(0.3)
    assert [line for line in cmdlines(descendants()) if "sleep 1002" in line] == []
    after = env.evaluate()
    assert after.forked and after.tests == base.tests and after.score == base.score < after.max_score



@pytest.mark.parametrize("sandbox", [s for s in SANDBOXES if s is not None])
def test_a_session_cannot_signal_the_warm_interpreter_it_forked_from(make_env, calc_task, sandbox):
    env = make_env(calc_task, sandbox=sandbox, terminate_on_success=False)
    env.reset()
    env.evaluate()
    base = env.evaluate()
    pdb(env, "b calc.py:2")
    pdb(env, "c")
    for target in ("__import__('os').getppid()", "1"):  # the interpreter; under bwrap its namespace's pid 1
        observation = pdb(env, f"p [__import__('os').kill({target}, s) for s in range(1, 32)]")  # SIGKILL too
        assert observation.startswith("[None, None") or "PermissionError" in observation, observation
    time.sleep(0.3)
    assert pdb(env, "p a, b").splitlines()[0] == "(2, 3)"  # the session lives: it would die with the interpreter
    pdb(env, "q")
    after = env.evaluate()
    assert after.forked and after.tests == base.tests
