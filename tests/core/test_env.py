import json

import pytest

import minidebug
from tests.conftest import CALC, CALC_TOML


def test_episode_loop_rewards_and_terminates(make_env, calc_task):
    env = make_env(calc_task)
    observation, info = env.reset(seed=0)
    assert observation.startswith("add() gives wrong sums") and "- edit:" in observation
    assert info["step"] == 0 and info["tokens_used"] > 0 and info["tokens_left"] < 100_000
    observation, reward, terminated, truncated, info = env.step({"name": "eval"})
    assert (reward, terminated, truncated) == (0.5, False, False)
    assert info["score"] == 1 and info["max_score"] == 2
    assert observation.startswith("eval: 1 passed, 1 failed (score 1/2)")
    assert "assert -1 == 5" in observation
    env.step(minidebug.ToolCall("edit", {"path": "calc.py", "old": "a - b", "new": "a + b"}))
    observation, reward, terminated, truncated, info = env.step('{"name": "eval", "arguments": {}}')
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert observation == "eval: 2 passed (score 2/2)"
    observation, *_, info = env.step({"name": "view", "arguments": {"path": "calc.py"}})
    assert "episode is over" in observation and info["error"]


def test_submit_ends_a_failing_episode(make_env, calc_task):
    env = make_env(calc_task, terminate_on_success=False)
    env.reset()
    _, reward, terminated, truncated, info = env.step({"name": "submit"})
    assert (reward, terminated, truncated) == (0.5, True, False)


def test_step_before_reset_raises(calc_task, cache_dir):
    with minidebug.make(calc_task, cache_dir=cache_dir) as env:
        with pytest.raises(minidebug.MinidebugError, match="reset"):
            env.step({"name": "eval"})


@pytest.mark.parametrize("action, message", [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "a tool call must be an object"),
    (42, "a tool call must be an object"),
    ({"arguments": {}}, 'needs a "name"'),
    ({"name": "view", "arguments": [1]}, '"arguments" must be an object'),
    ({"name": "view", "arguments": "{bad"}, "malformed JSON in arguments"),
    ({"name": "view", "args": {}}, "unknown keys"),
    ({"name": "debug"}, "unknown tool 'debug'"),
    ({"name": "x" * 100_000}, "unknown tool"),
])
def test_bad_actions_are_observations(make_env, calc_task, action, message):
    env = make_env(calc_task)
    env.reset()
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("error:") and message in observation
    assert info["error"] and not terminated and not truncated
    assert len(observation) < 2000


def test_arguments_as_a_json_string_like_openai_sends(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    observation, *_ = env.step({"name": "view", "arguments": json.dumps({"path": "calc.py", "end": 1})})
    assert observation.endswith("1  def add(a, b):")


def test_max_steps_truncates(make_env, calc_task):
    env = make_env(calc_task, max_steps=2)
    env.reset()
    assert env.step({"name": "listdir"})[3] is False
    _, _, terminated, truncated, info = env.step({"name": "listdir"})
    assert truncated and not terminated and info["truncated_by"] == "max_steps"
    env.reset()
    assert env.step({"name": "listdir"})[3] is False


def test_token_budget_truncates_and_long_observations_are_cut(make_env, task_dir):
    files = dict(CALC, **{"big.txt": "".join(f"line {i}\n" for i in range(5000))})
    env = make_env(task_dir(files, CALC_TOML), observation_tokens=200, max_tokens=1000)
    env.reset()
    observation, _, _, truncated, info = env.step({"name": "view", "arguments": {"path": "big.txt"}})
    assert "tokens left out of this observation" in observation
    assert observation.splitlines()[0] == "big.txt (lines 1-200 of 5000)"
    assert env.budget.count(observation) <= 200
    while not truncated:
        _, _, _, truncated, info = env.step({"name": "view", "arguments": {"path": "big.txt"}})
    assert info["truncated_by"] == "max_tokens" and info["tokens_left"] == 0


def test_report_usage_charges_model_tokens(make_env, calc_task):
    env = make_env(calc_task, max_tokens=5000)
    _, info = env.reset()
    env.report_usage(4000)
    _, _, _, truncated, info = env.step({"name": "listdir"})
    assert info["tokens_used"] > 4000
    env.report_usage(2000)
    assert env.step({"name": "listdir"})[3] is True


def test_observations_hold_no_temp_paths(make_env, calc_task):
    env = make_env(calc_task, bash=True)
    env.reset()
    root = str(env.workspace.root)
    for action in ({"name": "bash", "arguments": {"command": "pwd; echo $HOME $TMPDIR; python -c 'import calc; print(calc.__file__)'"}},
                   {"name": "eval"}):
        observation = env.step(action)[0]
        assert root not in observation and "/tmp/" not in observation
    assert "calc.py" in observation


def test_tool_schemas(make_env, calc_task):
    env = make_env(calc_task)
    openai = {s["function"]["name"]: s["function"] for s in env.tool_schemas("openai")}
    assert set(openai) == {"pdb", "trace", "inspect", "view", "listdir", "grep", "edit", "eval", "submit"}
    view = openai["view"]["parameters"]
    assert view["additionalProperties"] is False and view["required"] == ["path", "start", "end"]
    assert view["properties"]["start"]["type"] == ["integer", "null"]
    anthropic = {s["name"]: s for s in env.tool_schemas("anthropic")}
    assert anthropic["view"]["input_schema"]["required"] == ["path"]
    assert anthropic["view"]["input_schema"]["properties"]["start"]["type"] == "integer"
    with pytest.raises(ValueError, match="unknown provider"):
        env.tool_schemas("cohere")


def test_delta_rewards_sum_to_the_last_evals_fraction(make_env, calc_task):
    env = make_env(calc_task, reward="delta", terminate_on_success=False)
    env.reset()
    rewards = [env.step({"name": "eval"})[1]]
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    rewards += [env.step({"name": "eval"})[1], env.step({"name": "eval"})[1]]
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a + b", "new": "a - b"}})
    rewards.append(env.step({"name": "submit"})[1])
    assert rewards == [0.5, 0.5, 0.0, -0.5] and sum(rewards) == 0.5  # the last eval: 1 of 2
    env.reset()  # a new episode starts from 0 again
    assert env.step({"name": "eval"})[1] == 0.5


def test_reset_takes_no_options_and_any_seed(make_env, calc_task):
    env = make_env(calc_task)
    first, _ = env.reset(seed=1, options={})
    assert env.reset(seed=2)[0] == first
    with pytest.raises(minidebug.UsageError, match="no options"):
        env.reset(options={"difficulty": 3})
    with pytest.raises(ValueError, match="reward"):
        make_env(calc_task, reward="sum")
