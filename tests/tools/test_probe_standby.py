"""trace and inspect runs started ahead (warm episodes whose runs cannot fork in an eval room: here, because the
agent installed a package of its own): the next call uses them, and they behave as a fresh one."""

from minidebug.runner.probe_run import StandbyProbe
from minidebug.tools.pdb import pdb_arguments
from minidebug.tools.probe import run_probe
from tests.conftest import descendants, wait_reading_stdin, with_a_package_of_the_agents


def call(env, name, **arguments):
    return env.step({"name": name, "arguments": arguments})[0]


def test_once_trace_was_used_the_next_call_runs_ahead_and_shows_what_a_fresh_run_shows(make_env, calc_task):
    fresh = make_env(calc_task, eval_mode="fresh")
    fresh.reset()
    warm = with_a_package_of_the_agents(make_env(calc_task))
    assert warm.tools["trace"].standby is None  # an env that never traced pays for no process ahead
    first = call(warm, "trace", target="add")
    standby = warm.tools["trace"].standby
    assert standby is not None and standby.pid in descendants()
    wait_reading_stdin(standby.pid)
    second = call(warm, "trace", target="add")
    assert warm.tools["trace"].standby is not standby and standby.pid not in descendants()  # used, ended, replaced
    assert first == second == call(fresh, "trace", target="add")
    assert "add(a=2, b=3)" in second and "returned: -1" in second


def test_an_edit_made_after_the_probe_started_ahead_is_what_runs(make_env, calc_task):
    env = with_a_package_of_the_agents(make_env(calc_task))
    call(env, "inspect", at="calc.py:2", expr=["a + b"])
    wait_reading_stdin(env.tools["inspect"].standby.pid)
    call(env, "edit", path="calc.py", old="return a - b", new="return a + b  # fixed")
    observation = call(env, "inspect", at="calc.py:2", expr=["add(a, b)"])
    assert "add(a, b) = 5" in observation, observation


def test_a_module_the_project_now_shadows_is_imported_from_the_project(make_env, imports_colorsys_task):
    # The probe imports `colorsys` ahead (as it would a venv module the tests load); a project file of that
    # name, written after it did, must be what the program imports.
    env = make_env(imports_colorsys_task)
    env.reset()
    standby = StandbyProbe(env.workspace, env.confinement, pdb_arguments(env.task.entrypoint), ["colorsys"])
    try:
        wait_reading_stdin(standby.pid)
        (env.workspace.root / "colorsys.py").write_text("MARK = 'project'\n")  # as a program of the agent would
        data, output = run_probe(env, {"mode": "inspect", "at": "test_calc.py:6", "expr": ["colorsys.MARK"],
                                       "depth": 2}, standby)
        assert data is not None and data["values"] == {"colorsys.MARK": "'project'"}, output
    finally:
        standby.close()


def test_no_probe_is_started_ahead_in_fresh_mode_or_in_rooms_and_none_is_left_after_reset_or_close(make_env, calc_task):
    fresh = make_env(calc_task, eval_mode="fresh")
    fresh.reset()
    call(fresh, "trace", target="add")
    fresh.reset()
    assert fresh.tools["trace"].standby is None
    forked = make_env(calc_task)
    forked.reset()
    call(forked, "trace", target="add")
    assert forked.tools["trace"].standby is None  # its runs fork in an eval room: nothing waits per env
    warm = with_a_package_of_the_agents(make_env(calc_task))
    call(warm, "trace", target="add")
    pid = warm.tools["trace"].standby.pid
    warm.reset()  # which also empties the pip layer: the next run forks in a room
    assert pid not in descendants() and warm.tools["trace"].standby is None
    with_a_package_of_the_agents(warm)
    call(warm, "trace", target="add")
    pid = warm.tools["trace"].standby.pid
    warm.close()
    warm.close()
    assert warm.tools["trace"].standby is None and pid not in descendants()
