"""The SkyRL-gym text env: raw model text in, observations and the eval's reward out."""

import threading

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the [skyrl] extra is part of the test extra; install it")

import minidebug.integrations.skyrl as skyrl
from minidebug.errors import UsageError
from minidebug.integrations.skyrl import MinidebugTextEnv, dataset_rows

from ..conftest import processes_left

FIX = ('<tool_call>{"name": "edit", "arguments": {"path": "tree.py", "old": "children=[]", "new": "children=None"}}'
       '</tool_call>\n<function=edit><parameter=path>tree.py</parameter><parameter=old>self.children = children'
       '</parameter><parameter=new>self.children = [] if children is None else children</parameter></function>')
WRONG = '<tool_call>{"name": "edit", "arguments": {"path": "tree.py", "old": "children=[]", "new": "children=()"}}</tool_call>'


def rollout(extras, answers):
    env = skyrl_gym.make("minidebug", env_config={"make": {"sandbox": None}}, extras=extras)
    try:
        prompt, metadata = env.init([{"role": "system", "content": skyrl.SYSTEM_PROMPT}])
        assert prompt[0]["role"] == "system" and "wrong totals" in prompt[-1]["content"]
        outputs = [env.step(answer) for answer in answers]
        return outputs, env.get_metrics()
    finally:
        env.close()


def test_scripted_rollout_reaches_reward_one_and_a_wrong_fix_gets_zero(cache_dir):
    extras = {"task": "sum_tree", "make": {"cache_dir": str(cache_dir)}}
    outputs, metrics = rollout(extras, ["Let me look.\n<tool_call>{\"name\": \"view\", \"arguments\": "
                                        "{\"path\": \"tree.py\"}}</tool_call>", "I am not sure.", FIX + "\n<tool_call>"
                                        "{\"name\": \"submit\"}</tool_call>"])
    view, confused, final = outputs
    assert "class Node" in view["observations"][0]["content"] and (view["reward"], view["done"]) == (0.0, False)
    assert confused["observations"][0]["content"].startswith("error: no tool call found")
    assert not confused["done"] and "error" in confused["metadata"]
    assert final["done"] and final["reward"] == 1.0 and "[submit]" in final["observations"][0]["content"]
    assert metrics == {"turns": 3, "reward": 1.0}

    outputs, _ = rollout(extras, [WRONG, '<tool_call>{"name": "submit"}</tool_call>'])
    assert outputs[-1]["done"] and outputs[-1]["reward"] == 0.0
    assert outputs[-1]["metadata"]["score"] < outputs[-1]["metadata"]["max_score"]
    outputs, _ = rollout({**extras, "reward": "fraction"}, [WRONG, '<tool_call>{"name": "submit"}</tool_call>'])
    metadata = outputs[-1]["metadata"]
    assert outputs[-1]["reward"] == metadata["score"] / metadata["max_score"] < 1.0


def test_running_out_of_turns_scores_the_final_state(cache_dir):
    extras = {"task": "sum_tree", "make": {"cache_dir": str(cache_dir), "max_steps": 3}}
    outputs, _ = rollout(extras, [FIX, "thinking...", "still thinking..."])  # turns without a call count too
    assert [o["done"] for o in outputs] == [False, False, True]
    assert outputs[-1]["reward"] == 1.0 and outputs[-1]["metadata"]["final_eval"] is True


def test_rollouts_at_once_share_nothing(cache_dir):
    extras = {"task": "sum_tree", "make": {"cache_dir": str(cache_dir)}}
    answers = {i: ([FIX] if i % 2 == 0 else [WRONG]) + ['<tool_call>{"name": "submit"}</tool_call>'] for i in range(4)}
    rewards = {}

    def run(i):
        outputs, _ = rollout(extras, answers[i])
        rewards[i] = outputs[-1]["reward"]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert rewards == {0: 1.0, 1: 0.0, 2: 1.0, 3: 0.0}
    assert not processes_left()  # every episode's processes are gone


def test_rows_and_bad_input():
    with pytest.raises(UsageError, match="'bogus'"):  # refused when the rows are made, not at a rollout
        dataset_rows(["sum_tree"], make={"strategy": "bogus"})
    rows = dataset_rows(["sum_tree", "late_handlers"], make={"strategy": "rewrite"})
    assert [r["task"] for r in rows] == ["sum_tree", "late_handlers"] and rows[0]["env_class"] == "minidebug"
    with pytest.raises(ValueError, match='extras\\["task"\\]'):
        MinidebugTextEnv(extras={})
    with pytest.raises(UsageError, match="init"):
        MinidebugTextEnv(extras={"task": "sum_tree"}).step("<tool_call>{}</tool_call>")


def test_an_unknown_strategy_is_refused_when_the_env_is_built():
    with pytest.raises(UsageError, match="unknown strategy 'debug-after-0'; it runs debug, rewrite, "
                                         "debug-after-N with N >= 1$") as refused:
        MinidebugTextEnv(env_config={"make": {"strategy": "debug"}}, extras={"task": "sum_tree",
                                                                          "make": {"strategy": "debug-after-0"}})
    assert "\n" not in str(refused.value)
    with pytest.raises(UsageError, match="'bogus'"):
        MinidebugTextEnv(env_config={"make": {"strategy": "bogus"}}, extras={"task": "sum_tree"})
    env = MinidebugTextEnv(extras={"task": "sum_tree", "make": {"strategy": "debug-after-2"}})
    assert env.make_options == {"strategy": "debug-after-2"}
