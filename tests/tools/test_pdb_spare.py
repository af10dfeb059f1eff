"""pdb sessions started ahead (warm episodes): the next command uses them, and they behave as a fresh one."""

from minidebug.runner.pdb_room import RoomPdbSession
from minidebug.runner.pdb_session import PdbSession
from minidebug.tools.pdb import Pdb, pdb_arguments
from tests.conftest import processes_left, wait_reading_stdin, with_a_package_of_the_agents


def pdb(env, command):
    return env.step({"name": "pdb", "arguments": {"command": command}})[0]


def tool(env) -> Pdb:
    return env.tools["pdb"]


def test_where_a_session_cannot_fork_the_next_is_started_ahead_once_pdb_was_used(make_env, calc_task):
    env = with_a_package_of_the_agents(make_env(calc_task))
    assert tool(env).spare is None  # an env that never used pdb pays for no session ahead
    pdb(env, "w")
    assert type(tool(env).session) is PdbSession
    pdb(env, "q")
    spare = tool(env).spare
    assert spare is not None and spare.alive and spare.preloaded
    observation = pdb(env, "b calc.py:2")
    assert tool(env).session is spare
    assert "Breakpoint 1 at calc.py:2" in observation
    assert pdb(env, "c").endswith("[at calc.py:2] return a - b")
    assert pdb(env, "p __import__('extra').VALUE").splitlines()[0] == "1"
    # A session that ends leaves the next one started ahead.
    pdb(env, "q")
    assert tool(env).session is None and tool(env).spare is not None and tool(env).spare.alive


def test_an_edit_made_after_the_session_started_ahead_is_what_runs(make_env, calc_task):
    env = with_a_package_of_the_agents(make_env(calc_task))
    pdb(env, "q")
    assert tool(env).spare is not None
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b  # fixed"}})
    pdb(env, "b calc.py:2")
    assert pdb(env, "c").endswith("[at calc.py:2] return a + b  # fixed")
    assert pdb(env, "p add(2, 3)").splitlines()[0] == "5"


def test_a_module_the_project_now_shadows_is_imported_from_the_project(make_env, imports_colorsys_task):
    # A session imports `colorsys` ahead (as it would a venv module the tests load); a project file of that
    # name, written after the session started, must be what the program imports.
    env = make_env(imports_colorsys_task)
    env.reset()
    workspace = env.workspace
    session = PdbSession(pdb_arguments(env.task.entrypoint), workspace.venv / "bin" / "python", workspace.root,
                         workspace.environ(workspace.drivers), env.confinement, ["colorsys"])
    try:
        wait_reading_stdin(session.child.pid)  # colorsys is imported: the file below comes after it
        (workspace.root / "colorsys.py").write_text("MARK = 'project'\n")  # as a program of the agent would
        session.begin([])
        assert session.read_reply(30).status == "prompt"
        session.send("b test_calc.py:6", 30)
        assert session.send("c", 30).location[1] == 6
        assert session.send("p colorsys.MARK", 30).output.splitlines()[0] == "'project'"
    finally:
        session.close()


def test_breakpoints_longer_than_a_terminal_line_reach_the_session(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    condition = " or ".join(["a == 2"] * 400)  # about 4,000 characters
    assert "Breakpoint 1 at calc.py:2" in pdb(env, f"b calc.py:2, {condition}")
    pdb(env, "q")  # the next session gets the breakpoint from the host
    observation = pdb(env, "c")
    assert observation.endswith("[at calc.py:2] return a - b"), observation[-500:]


def test_no_session_is_started_ahead_in_fresh_mode_nor_where_sessions_fork(make_env, calc_task):
    env = make_env(calc_task, eval_mode="fresh")
    env.reset()
    pdb(env, "q")
    env.reset()
    assert tool(env).spare is None
    warm = make_env(calc_task)
    warm.reset()
    pdb(warm, "b calc.py:2")
    assert isinstance(tool(warm).session, RoomPdbSession)
    pdb(warm, "q")
    warm.reset()
    assert tool(warm).spare is None and tool(warm).session is None
    warm.close()
    warm.close()
    assert tool(warm).spare is None
    assert not processes_left()  # nothing but the shared pool's room, which the sessions forked in
