"""The Gymnasium adapter passes gymnasium's own env checker."""

import warnings

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the [gym] extra is part of the test extra; install it")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from minidebug.errors import UsageError  # noqa: E402
from minidebug.integrations.gym import MinidebugGymEnv, UnicodeText  # noqa: E402


def test_check_env_passes_without_warnings(calc_task, cache_dir):
    env = MinidebugGymEnv(str(calc_task), cache_dir=cache_dir)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a checker warning is a failure here
            check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_registered_ids_and_an_episode(cache_dir):
    env = gymnasium.make("minidebug.integrations.gym:minidebug/sum_tree", cache_dir=cache_dir)
    try:
        obs, info = env.reset(seed=0)
        assert "wrong totals" in obs and env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step('{"name": "view", "arguments": {"path": "tree.py"}}')
        assert "class Node" in obs and reward == 0.0
        again, _ = env.reset(seed=0)
        assert again == env.reset(seed=1)[0]  # deterministic: no timings or temp paths
    finally:
        env.close()
    assert "minidebug/off_by_one" in gymnasium.registry


def test_non_ascii_reaches_the_agent_unchanged(cache_dir):
    env = gymnasium.make("minidebug.integrations.gym:minidebug/names_encoding", cache_dir=cache_dir)
    try:
        obs, _ = env.reset(seed=0)
        assert '"Zoë"' in obs and env.observation_space.contains(obs)  # the problem statement
        obs, *_ = env.step('{"name": "view", "arguments": {"path": "tests/test_store.py"}}')
        assert '["Zoë", "José", "Ann"]' in obs and env.observation_space.contains(obs)
        call = '{"name": "grep", "arguments": {"pattern": "José"}}'
        assert env.action_space.contains(call)
        obs, *_ = env.step(call)
        assert "test_store.py" in obs
    finally:
        env.close()


def test_an_unknown_strategy_is_refused_when_the_env_is_built(cache_dir):
    with pytest.raises(UsageError, match="unknown strategy 'debug-after'; it runs debug, rewrite, "
                                         "debug-after-N with N >= 1$") as refused:
        gymnasium.make("minidebug.integrations.gym:minidebug/sum_tree", strategy="debug-after", cache_dir=cache_dir)
    assert "\n" not in str(refused.value)
    env = MinidebugGymEnv("off_by_one", strategy="debug-after-1", cache_dir=cache_dir)
    try:
        env.reset(seed=0)
        obs, *_ = env.step('{"name": "edit", "arguments": {"path": "items.py", "old": "-n - 1", "new": "-n"}}')
        assert "[new tools available from now on]" in obs
        obs, *_ = env.step('{"name": "pdb", "arguments": {"command": "b items.py:2"}}')
        assert "Breakpoint 1 at items.py:2" in obs
    finally:
        env.close()


def test_unicode_text_space():
    space = UnicodeText(5, min_length=1, seed=0)
    assert space.contains("Zoë→") and not space.contains("") and not space.contains("toolong") and not space.contains(3)
    assert all(space.contains(space.sample()) for _ in range(20))
