"""The LLM agent against a real HTTP server on 127.0.0.1 that speaks the chat-completions protocol."""

import json

import pytest

from minidebug.agents.llm import LLMAgent
from minidebug.core.budget import Budget
from minidebug.errors import MinidebugError
from minidebug.run.cli import main
from minidebug.run.episode import run_episode
from minidebug.tasks.task import load_task

from ..chat_server import completion


def test_llm_agent_solves_a_task_through_the_protocol(server, calc_task, cache_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    chat = server(
        completion(("view", {"path": "calc.py", "start": None, "end": None})),
        (429, {"error": {"message": "slow down", "type": "rate_limit"}}),
        (503, {"error": {"message": "overloaded"}}),
        completion(content="Let me think."),  # no tool call: the agent nudges the model
        completion(("edit", {"path": "calc.py", "start": None, "end": None, "new_code": None,
                             "old": "a - b", "new": "a + b"})),
        completion(("eval", {})),
    )
    options = {"model": "scripted", "base_url": chat.url, "api_key_env": "SCRIPTED_KEY"}
    result = run_episode(load_task(calc_task), "llm", tmp_path, options, cache_dir=cache_dir)
    assert result.solved and result.steps == 3, result
    assert len(chat.requests) == 6
    first, last = chat.requests[0]["body"], chat.requests[-1]["body"]
    assert chat.requests[0]["auth"] == "Bearer sk-test" and first["model"] == "scripted"
    assert {t["function"]["name"] for t in first["tools"]} >= {"pdb", "view", "edit", "eval"}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    roles = [m["role"] for m in last["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert last["messages"][3]["tool_call_id"] == "call_0" and "1  def add(a, b):" in last["messages"][3]["content"]
    assert result.tokens > 21  # the completion tokens were charged to the budget


def test_several_tool_calls_in_one_answer_run_in_order_each_answered(server, calc_task, cache_dir):
    chat = server(completion(("listdir", {"path": None, "depth": None}), ("view", {"path": "calc.py", "start": None,
                                                                                  "end": None})),
                  completion(("submit", {})))
    result = run_episode(load_task(calc_task), "llm", None,
                         {"model": "m", "base_url": chat.url}, cache_dir=cache_dir)
    assert result.steps == 3 and len(chat.requests) == 2
    messages = chat.requests[1]["body"]["messages"]
    answers = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["call_0", "call_1"]
    assert "calc.py" in answers[0]["content"] and "def add(a, b):" in answers[1]["content"]


def test_auth_error_is_clear(server, calc_task, cache_dir):
    chat = server((401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}))
    result = run_episode(load_task(calc_task), "llm", None, {"model": "m", "base_url": chat.url}, cache_dir=cache_dir)
    assert not result.solved and "refused the API key (HTTP 401)" in result.error


def test_missing_key_or_model_fails_before_any_episode(calc_task, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", "--tasks", str(calc_task), "--agent", "llm", "--model", "gpt"]) == 2
    assert "set OPENAI_API_KEY" in capsys.readouterr().err
    with pytest.raises(MinidebugError, match="needs a model name"):
        LLMAgent(model="", base_url="http://127.0.0.1:1/v1")


def test_context_budget_shortens_old_observations_then_drops_turns():
    agent = LLMAgent(model="m", base_url="http://127.0.0.1:1/v1", context_tokens=1400)
    agent.messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]
    for i in range(8):
        agent.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "view", "arguments": "{}"}}]})
        agent.messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"obs {i} " + "word " * 200})
    fitted = agent.fitted_messages()
    assert fitted[:2] == agent.messages[:2]
    assert fitted[-8:] == agent.messages[-8:]  # the last four turns are kept whole
    counter = Budget(10**12, 10**12)  # counts tokens as the agent does
    assert sum(counter.count(json.dumps(m)) + 4 for m in fitted) <= 1400
    ids = [m["tool_call_id"] for m in fitted if m["role"] == "tool"]
    assert ids[0] != "c0" and ids == sorted(ids) and ids[-1] == "c7"  # the oldest turns were dropped
    assert any(m["content"].endswith("[observation shortened]") for m in fitted if m["role"] == "tool")
    for message in fitted:  # every tool answer still follows its call
        if message["role"] == "tool":
            index = fitted.index(message)
            assert fitted[index - 1]["tool_calls"][0]["id"] == message["tool_call_id"]


def anthropic_message(*calls, text=None):
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}
                for i, (name, arguments) in enumerate(calls)]
    return 200, {"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted", "content": content,
                 "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                 "usage": {"input_tokens": 120, "output_tokens": 9}}


def test_anthropic_messages_api_solves_a_task(server, calc_task, cache_dir, monkeypatch, tmp_path):
    pytest.importorskip("anthropic", reason="the [anthropic] extra is part of the test extra; install it")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    chat = server(
        anthropic_message(("view", {"path": "calc.py"}), ("edit", {"path": "calc.py", "old": "a - b", "new": "a + b"}),
                          text="Looking, then fixing."),
        anthropic_message(("eval", {})),
    )
    options = {"model": "claude-scripted", "base_url": chat.url.removesuffix("/v1"), "provider": "anthropic"}
    result = run_episode(load_task(calc_task), "llm", tmp_path, options, cache_dir=cache_dir, sandbox=None)
    assert result.solved and result.steps == 3, result
    first, second = chat.requests[0], chat.requests[1]
    assert first["path"] == "/v1/messages" and first["body"]["model"] == "claude-scripted"
    assert "debugging a Python project" in first["body"]["system"]
    assert {t["name"] for t in first["body"]["tools"]} >= {"pdb", "edit"} and "input_schema" in first["body"]["tools"][0]
    roles = [m["role"] for m in second["body"]["messages"]]
    assert roles == ["user", "assistant", "user"]  # both tool results in one user turn
    results = second["body"]["messages"][2]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in results] == [("tool_result", "toolu_0"), ("tool_result", "toolu_1")]
    assert "def add(a, b):" in results[0]["content"] and "a + b" in results[1]["content"]
    assert [b["type"] for b in second["body"]["messages"][1]["content"]] == ["text", "tool_use", "tool_use"]
    assert result.tokens > 18  # output tokens charged


def test_text_tool_calls_for_models_without_function_calling(server, calc_task, cache_dir, tmp_path):
    chat = server(
        completion(content="I will read the file first.\n<tool_call>\n<function=view>\n<parameter=path>\ncalc.py\n"
                           "</parameter>\n<parameter=start>\n1\n</parameter>\n</function>\n</tool_call>"),
        completion(content="Hmm, what now?"),  # no call: the agent answers with the accepted shapes
        completion(content='```json\n{"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", '
                           '"new": "a + b"}}\n```\n<tool_call>{"name": "eval", "arguments": {}}</tool_call>'),
    )
    result = run_episode(load_task(calc_task), "llm", tmp_path, {"model": "m", "base_url": chat.url,
                                                                 "tool_format": "text"},
                         cache_dir=cache_dir, sandbox=None)
    assert result.solved and result.steps == 3, result
    first, last = chat.requests[0]["body"], chat.requests[-1]["body"]
    assert "tools" not in first and "<tool_call>" in first["messages"][0]["content"]
    assert "- view(path, start?, end?)" in first["messages"][0]["content"]
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last["messages"][3]["content"].startswith("Observation:\n") and "1  def add" in last["messages"][3]["content"]
    assert last["messages"][5]["content"].startswith("error: no tool call found in the answer")
