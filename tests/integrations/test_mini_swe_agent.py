"""mini-swe-agent's own agent loop on a minidebug task, with the episode's tools reached from the shell."""

import json
import socket
from pathlib import Path

import pytest

minisweagent = pytest.importorskip("minisweagent", reason="the [mini-swe-agent] extra is part of the test extra; install it")

import yaml  # noqa: E402
from minisweagent.agents.default import DefaultAgent
from minisweagent.models.test_models import DeterministicModel, make_output

from minidebug.errors import UsageError
from minidebug.integrations.mini_swe_agent import MinidebugEnvironment

from ..conftest import processes_left

CONFIG = yaml.safe_load((Path(minisweagent.__file__).parent / "config" / "mini_textbased.yaml").read_text())
FIX = ("sed -i 's/children=\\[\\]/children=None/; s/self.children = children/"
       "self.children = [] if children is None else children/' tree.py")


def run_agent(env, commands):
    outputs = [make_output(f"step {i}", [{"command": c}], cost=0.0) for i, c in enumerate(commands)]
    agent = DefaultAgent(DeterministicModel(outputs=outputs), env, **CONFIG["agent"])
    return agent, agent.run(env.problem_statement)


def test_the_agent_loop_solves_a_task_with_pdb_from_the_shell(cache_dir):
    with MinidebugEnvironment(task="sum_tree", cache_dir=cache_dir) as env:
        episode_dir = env.env.workspace.dir
        agent, result = run_agent(env, [
            "md help && ls",
            "md pdb 'b tree.py:6' && md pdb c && md pdb 'p children'",
            "md pdb c && md pdb 'p children'",  # the session and its breakpoint live on between commands
            FIX + " && md eval",
            "md nosuch; md view tree.py 5 6",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ])
        observations = [m["content"] for m in agent.messages if m["role"] == "user"][1:]
        assert "md pdb command" in observations[0] and "tree.py" in observations[0]
        assert "Breakpoint 1 at tree.py:6" in observations[1] and "-> self.value = value" in observations[1]
        assert observations[2].count("[at tree.py:6]") >= 1
        assert "eval: 4 passed (score 4/4)" in observations[3]
        assert "md: unknown tool 'nosuch'" in observations[4] and "children=None" in observations[4]
        assert result["exit_status"] == "Submitted" and result["reward"] == 1.0
        assert "+    def __init__(self, value, children=None):" in result["submission"]
        assert env.serialize()["info"]["minidebug"] == {"reward": 1.0, "score": 4, "max_score": 4,
                                                          "solved": True}
    assert not episode_dir.exists() and not processes_left()
    env.close()  # idempotent


def test_a_wrong_fix_is_not_solved_and_md_submit_ends_the_loop(cache_dir):
    with MinidebugEnvironment(task="sum_tree", cache_dir=cache_dir) as env:
        agent, result = run_agent(env, ["sed -i 's/children=\\[\\]/children=()/' tree.py", "md submit"])
        assert result["exit_status"] == "Submitted" and result["solved"] is False
        assert result["reward"] == result["score"] / result["max_score"] < 1.0  # the env's reward: a fraction
        assert [m["role"] for m in agent.messages][2:] == ["assistant", "user", "assistant", "exit"]


def test_only_the_agents_commands_reach_the_tools(cache_dir):
    with MinidebugEnvironment(task="sum_tree", cache_dir=cache_dir) as env:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(env.bridge.socket_path))  # no command of the agent is running
        client.sendall(json.dumps(["submit"]).encode() + b"\n")
        reply = json.loads(client.recv(65536))
        client.close()
        assert reply["ok"] is False and "only commands of the agent" in reply["output"]
        assert env.bridge.submitted is None
        output = env.execute({"command": "md pdb"})  # missing argument: a clear error, exit code 1
        assert output["returncode"] == 1 and "bad arguments" in output["output"]
        output = env.execute({"command": "md view '{bad json'"})
        assert output["returncode"] == 1
        assert env.execute({"command": "  "})["returncode"] == 2
        direct = env.execute({"command": "md view tree.py 1 3"})  # a bare md call needs no shell
        through_bash = env.execute({"command": "true && md view tree.py 1 3"})
        assert direct == through_bash and direct["output"].startswith("tree.py (lines 1-3 of 24)")
        with pytest.raises(Exception) as info:
            env.execute({"command": "cat ../../bridge/tools.sock; md submit"})
        assert type(info.value).__name__ == "Submitted"


def test_md_arguments_follow_the_tools_types(cache_dir):
    """Words become the tool's arguments by declared type: integers, and a list that takes every word left."""
    with MinidebugEnvironment(task="sum_tree", cache_dir=cache_dir) as env:
        output = env.execute({"command": "md inspect tree.py:6 children"})
        assert output["returncode"] == 0, output["output"]
        assert "children" in output["output"] and "bad arguments" not in output["output"]
        several = env.execute({"command": "true && md inspect tree.py:6 children value"})
        assert several["returncode"] == 0 and "value" in several["output"], several["output"]
        assert env.execute({"command": "md view tree.py 1 3"})["output"].startswith("tree.py (lines 1-3 of 24)")
        breakpoint_set = env.execute({"command": "md pdb b tree.py:6"})  # the last argument takes the rest
        assert breakpoint_set["returncode"] == 0 and "Breakpoint 1" in breakpoint_set["output"], breakpoint_set


def test_a_strategy_is_checked_when_built_and_md_gets_the_unlocked_tools(cache_dir):
    with pytest.raises(UsageError, match="unknown strategy 'debugger'; it runs debug, rewrite, "
                                         "debug-after-N with N >= 1$") as refused:
        MinidebugEnvironment(task="off_by_one", strategy="debugger", cache_dir=cache_dir)
    assert "\n" not in str(refused.value)
    with MinidebugEnvironment(task="off_by_one", strategy="debug-after-1", cache_dir=cache_dir) as env:
        assert "unknown tool 'pdb'" in env.execute({"command": "md pdb 'b items.py:2'"})["output"]
        edited = env.execute({"command": """md edit '{"path": "items.py", "old": "-n - 1", "new": "-n"}'"""})
        assert "[new tools available from now on]" in edited["output"]
        assert "Breakpoint 1 at items.py:2" in env.execute({"command": "md pdb 'b items.py:2'"})["output"]
