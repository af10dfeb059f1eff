"""Eval rooms and the warm pool: reset keeps the warm interpreter of the next eval; a closed env's ready warm
interpreter passes to the next env of the same venv and settings; the pool's caps hold; nothing outlives the
pool."""

from __future__ import annotations

import os
import tempfile

import minidebug
from minidebug import WarmPool

from ..conftest import cmdlines, descendants, processes_left
from .test_warm import WHO, settled, warm_interpreters


def warm_pids() -> set[int]:
    return {pid for pid in descendants() if any("minidebug_eval.py --warm" in line and not line.startswith(
        ("bwrap", "/usr/bin/bwrap")) for line in cmdlines([pid]))}


def episode_dirs() -> list[str]:
    return sorted(name for name in os.listdir(tempfile.gettempdir()) if name.startswith(("minidebug-ep-", "minidebug-room-")))


def test_reset_keeps_the_warm_interpreter_of_the_next_eval(make_env, task_dir):
    env = make_env(task_dir(WHO))
    env.reset()
    env.evaluate()
    assert settled(lambda: len(warm_pids()), 1) == 1
    waiting = warm_pids()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}})
    env.reset()  # ends every process of the episode, but not the interpreter that ran no code of it
    assert warm_pids() == waiting
    after = env.evaluate()
    assert after.forked and after.tests["test_calc.py::test_add"] == "failed"  # the reset undid the fix
    assert "parent: " in after.output and "--warm" in after.output


def test_a_closed_envs_warm_interpreter_serves_the_next_envs_first_eval(cache_dir, task_dir):
    task = task_dir(WHO)
    before = episode_dirs()
    with minidebug.make(task, cache_dir=cache_dir, eval_mode="fresh") as fresh:
        fresh.reset()
        expected = fresh.evaluate().tests
    with WarmPool() as pool:
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=pool) as first:
            first.reset()
            assert first.evaluate().tests == expected
            assert settled(lambda: len(warm_pids()), 1) == 1
            waiting = warm_pids()
        assert warm_pids() == waiting  # closed: its room and warm interpreter are the pool's now
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=pool) as second:
            second.reset()
            assert warm_pids() == waiting  # taken, not started anew
            result = second.evaluate()
            assert result.forked and result.tests == expected
        assert len(pool.idle_rooms) == 1 and warm_pids() == waiting  # the same interpreter, which served that eval
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=pool, processes=33) as other:
            other.reset()  # other limits: the room waiting in the pool is not for it, so it starts its own
            assert other.evaluate().forked and 33 in {room.key.limits[3] for room in pool.idle_rooms}
        assert len(pool.idle_rooms) == 2
    assert settled(lambda: warm_interpreters(), []) == [] and processes_left() == set()
    assert episode_dirs() == before  # every room's folder is gone with the pool


def test_a_room_whose_venv_was_rebuilt_is_not_handed_on(cache_dir, task_dir):
    task = task_dir(WHO)
    with WarmPool() as pool:
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=pool) as env:
            env.reset()
            env.evaluate()
            assert settled(lambda: len(warm_pids()), 1) == 1
            venv = env.workspace.venv
        assert len(pool.idle_rooms) == 1
        pool.discard(venv)
        assert pool.idle_rooms == () and settled(lambda: warm_interpreters(), []) == []


def test_open_envs_share_one_waiting_interpreter_which_outlives_them_in_the_shared_pool(make_env, task_dir):
    task = task_dir(WHO)
    first, second = make_env(task), make_env(task)
    first.reset()
    first.evaluate()  # the task's tests are measured here; from now on its evals fork
    assert settled(lambda: len(warm_pids()), 1) == 1
    waiting = warm_pids()
    second.reset()
    assert second.evaluate().forked and settled(lambda: warm_pids(), waiting) == waiting  # borrowed, not its own
    first.close()
    second.close()
    assert warm_pids() == waiting and len(minidebug.shared_pool().idle_rooms) == 1  # the pool's, not the envs'
    third = make_env(task)
    third.reset()  # a new episode's first eval forks from the same interpreter: no cold start
    assert third.evaluate().forked and warm_pids() == waiting
    third.close()
    minidebug.shared_pool().close()  # ends its rooms now; the next env that needs one gets a new pool
    assert settled(lambda: warm_interpreters(), []) == [] and descendants() == set()
    assert minidebug.shared_pool().idle_rooms == ()


def test_a_pool_holds_no_more_idle_rooms_than_fit_in_its_memory_cap(cache_dir, task_dir):
    task = task_dir(WHO)
    with WarmPool(max_idle_mb=10**6) as roomy, WarmPool(max_idle_mb=1) as tight:
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=roomy) as env:
            env.reset()
            env.evaluate()  # measures the task's tests: the later evals fork
            assert [env.evaluate().forked for _ in range(2)] == [True, True]
        assert len(roomy.idle_rooms) == 1 and roomy.idle_rooms[0].memory_kb() > 1024
        with minidebug.make(task, cache_dir=cache_dir, warm_pool=tight) as env:
            env.reset()
            # a warm interpreter takes more than 1 MB: closed once measured (when given back, or when the pool
            # trims its idle rooms, perhaps before the first eval takes it), and none is started again
            env.evaluate()
            assert not env.evaluate().forked
        assert tight.idle_rooms == ()
    assert settled(lambda: warm_interpreters(), []) == []


def test_an_eval_that_finds_every_room_busy_runs_fresh_and_the_pool_grows_a_room(make_env, task_dir):
    task = task_dir(WHO)
    first, second = make_env(task), make_env(task)
    for env in (first, second):
        env.reset()
    first.evaluate()
    assert settled(lambda: len(warm_pids()), 1) == 1
    warm = first.rooms.take(False, first.confinement).warm  # as while the first env's eval runs
    assert warm is not None
    assert not second.evaluate().forked
    assert settled(lambda: len(warm_pids()), 2) == 2  # one more room for the next time both evaluate at once
    first.rooms.give_back(warm)
    assert first.evaluate().forked and second.evaluate().forked and len(warm_pids()) == 2
