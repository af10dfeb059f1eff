"""Strategies: which tools an episode starts with, unlocking mid-episode, and the llm agent's prompts."""

import json

import pytest

import minidebug
from minidebug.core.trajectory import read_trajectory
from minidebug.run.episode import run_episode
from minidebug.run.export import conversation, export_sft
from minidebug.run.replay_check import replay
from minidebug.tasks.task import load_task
from minidebug.tools.strategies import parse_strategy

from ..chat_server import completion


def names(env, provider="openai"):
    schemas = env.tool_schemas(provider)
    return [s["function"]["name"] if provider == "openai" else s["name"] for s in schemas]


def edit(path, old, new):
    return {"name": "edit", "arguments": {"path": path, "old": old, "new": new}}


def test_strategy_names():
    assert parse_strategy("debug-after:3") == parse_strategy("debug-after-3")
    assert parse_strategy("debug-after:3").name == "debug-after-3"
    for bad in ("debug-after-0", "debugger", "", "debug-after:x"):
        with pytest.raises(ValueError):
            parse_strategy(bad)
    with pytest.raises(ValueError, match="unknown strategy"):
        minidebug.make("sum_tree", strategy="pdb-only")


def test_rewrite_has_no_debugger(make_env, calc_task):
    env = make_env(calc_task, strategy="rewrite", sandbox=None)
    observation, info = env.reset()
    assert "- pdb:" not in observation and "- trace:" not in observation
    assert not {"pdb", "trace", "inspect"} & set(names(env)) and "edit" in names(env)
    observation, *_, info = env.step({"name": "pdb", "arguments": {"command": "l"}})
    assert observation.startswith("error: unknown tool 'pdb'") and "error" in info


def test_debug_after_unlocks_on_the_nth_successful_edit_and_reset_takes_it_back(make_env, calc_task):
    env = make_env(calc_task, strategy="debug-after:2", sandbox=None)
    env.reset()
    observation, *_, info = env.step(edit("test_calc.py", "5", "6"))  # refused: does not count
    assert "error" in info and "tools_enabled" not in info
    observation, *_, info = env.step(edit("calc.py", "a * b", "b * a"))
    assert "tools_enabled" not in info and "pdb" not in names(env, "anthropic")
    observation, *_, info = env.step(edit("calc.py", "a - b", "a + b"))
    assert info["tools_enabled"] == ["pdb", "trace", "inspect"]
    assert "[new tools available from now on]" in observation and "- pdb(command):" in observation
    assert {"pdb", "trace", "inspect"} <= set(names(env, "anthropic"))
    observation, *_ = env.step({"name": "pdb", "arguments": {"command": "b calc.py:2"}})
    assert "Breakpoint 1" in observation
    observation, *_, info = env.step(edit("calc.py", "b * a", "a * b"))  # a third edit unlocks nothing more
    assert "tools_enabled" not in info and "new tools" not in observation
    pdb = env.tools["pdb"]
    env.reset()
    assert "pdb" not in env.tools and pdb.session is None  # the unlocked session was closed
    env.step(edit("calc.py", "a * b", "b * a"))
    *_, info = env.step(edit("calc.py", "a - b", "a + b"))
    assert info["tools_enabled"] == ["pdb", "trace", "inspect"]  # unlocked again in the new episode


def test_enable_tools_by_hand(make_env, calc_task):
    env = make_env(calc_task, tools=["view", "eval"], sandbox=None)
    env.reset()
    with pytest.raises(ValueError, match="Did you mean 'grep'"):
        env.enable_tools(["grepp"])
    assert env.enable_tools(["grep", "view"]) == ["grep"]
    observation, *_, info = env.step({"name": "view", "arguments": {"path": "calc.py"}})
    assert info["tools_enabled"] == ["grep"] and "- grep(pattern, path, regex):" in observation
    observation, *_, info = env.step({"name": "grep", "arguments": {"pattern": "def add"}})
    assert "calc.py:1" in observation and "tools_enabled" not in info


def system_prompt(request):
    body = request["body"]
    return body.get("system") or body["messages"][0]["content"]


def test_each_strategy_has_its_prompt_and_a_user_template_wins(server, calc_task, cache_dir, tmp_path):
    prompts = {}
    for strategy in ("rewrite", "debug", "debug-after-2"):
        chat = server(completion(("submit", {})))
        run_episode(load_task(calc_task), "llm", None, {"model": "m", "base_url": chat.url},
                    cache_dir=cache_dir, strategy=strategy, sandbox=None)
        prompts[strategy] = system_prompt(chat.requests[0])
        offered = {t["function"]["name"] for t in chat.requests[0]["body"]["tools"]}
        assert ("pdb" in offered) == (strategy == "debug")
    assert "pdb" not in prompts["rewrite"] and "live debugger" in prompts["debug"]
    assert "first 2 successful edit(s)" in prompts["debug-after-2"]
    template = tmp_path / "mine.txt"
    template.write_text("Fix it. Strategy $strategy, unlock after $unlock_after.")
    chat = server(completion(("submit", {})))
    run_episode(load_task(calc_task), "llm", None, {"model": "m", "base_url": chat.url, "prompt": str(template)},
                cache_dir=cache_dir, strategy="debug-after:3", sandbox=None)
    assert system_prompt(chat.requests[0]) == "Fix it. Strategy debug-after-3, unlock after 3."


def test_unlock_reaches_the_model_and_the_trajectory_reads_back_without_it(server, calc_task, cache_dir, tmp_path):
    chat = server(
        completion(("edit", {"path": "calc.py", "start": None, "end": None, "new_code": None,
                             "old": "a - b", "new": "a + b"})),
        completion(("pdb", {"command": "b calc.py:2"}), ("eval", {})),
    )
    result = run_episode(load_task(calc_task), "llm", tmp_path, {"model": "m", "base_url": chat.url},
                         cache_dir=cache_dir, strategy="debug-after-1", sandbox=None)
    assert result.solved and result.strategy == "debug-after-1" and result.model == "m"
    assert result.id == "calc.llm.debug-after-1.s0"
    first, second = (r["body"] for r in chat.requests)
    assert "pdb" not in {t["function"]["name"] for t in first["tools"]}
    assert "pdb" in {t["function"]["name"] for t in second["tools"]}
    assert "[new tools available from now on]" in second["messages"][-1]["content"]

    records = read_trajectory(tmp_path / f"{result.id}.jsonl")
    header, steps = records[0], [r for r in records if r.type == "step"]
    assert header.strategy == "debug-after-1" and header.model == "m"
    assert header.task_set == calc_task.parent.name
    assert [s.exchange is not None for s in steps] == [True, True, False]  # two calls came in one answer
    assert steps[0].exchange.usage == [{"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}]
    chat_log = conversation(records)  # exactly the messages of the last request, plus the last answer
    assert chat_log[:-1] == second["messages"]
    assert [c["function"]["name"] for c in chat_log[-1]["tool_calls"]] == ["pdb", "eval"]

    mismatches, _ = replay(tmp_path / f"{result.id}.jsonl", cache_dir=cache_dir)
    assert mismatches == []  # the replay gets the same strategy, so the same unlock on the same step

    out = tmp_path / "sft.jsonl"
    assert export_sft([tmp_path], out) == 1
    example = json.loads(out.read_text())
    assert example["messages"] == chat_log and example["metadata"]["solved"] is True
    assert {t["function"]["name"] for t in example["tools"]} >= {"edit", "pdb", "trace", "inspect"}
