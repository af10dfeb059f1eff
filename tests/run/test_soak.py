"""A short soak: many resets and many make/close cycles leak nothing (the long one is benchmarks/soak.py)."""

import pytest

import minidebug
from minidebug.run.soak import snapshot


def snapshot_settled(env, bare):
    """A snapshot once the tree the env lays ahead for its next eval is laid (a copy runs meanwhile), and
    the interpreters started in the background are started (an eval while a pdb session holds the room
    starts one)."""
    for room in env.rooms.pool.idle_rooms:
        if room.pristine is not None:
            room.pristine.wait()
        if room.warm is not None:
            room.warm.wait_started()
    return snapshot(bare)


@pytest.mark.parametrize("cycles", [5, pytest.param(30, marks=pytest.mark.slow)])
def test_reset_edit_eval_cycles_and_make_close_cycles_leak_nothing(calc_task, cache_dir, cycles):
    """(`-m slow` runs more cycles.)"""
    with minidebug.make(calc_task, cache_dir=cache_dir, max_steps=10**6) as env:
        env.reset()
        bare = env.workspace.prepared.bare_repo

        def cycle(i):
            env.reset()
            env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 0, "new_code": f"# {i}"}})
            env.step({"name": "pdb", "arguments": {"command": "b calc.py:3"}})
            env.step({"name": "eval"})

        cycle(0)
        before = snapshot_settled(env, bare)
        for i in range(cycles):
            cycle(i)
        during = snapshot_settled(env, bare)
    for _ in range(3):
        with minidebug.make(calc_task, cache_dir=cache_dir) as env:
            env.reset()
    settled = snapshot(bare)
    for _ in range(cycles // 2):
        with minidebug.make(calc_task, cache_dir=cache_dir) as env:
            env.reset()
            env.step({"name": "view", "arguments": {"path": "calc.py"}})
    after = snapshot(bare)
    for key in ("fds", "threads", "children", "temp_dirs", "worktrees"):
        assert during[key] <= before[key], (key, before, during)
        assert after[key] <= settled[key], (key, settled, after)
    assert during["rss_mb"] - before["rss_mb"] <= 20 and after["rss_mb"] - settled["rss_mb"] <= 20
