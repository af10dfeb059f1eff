"""The `Agent` protocol is the runner's contract: it lists every method the runner calls on an agent, and every
registered agent implements each of them with the protocol's signature."""

import ast
import inspect
import json
from pathlib import Path
from typing import get_type_hints

import pytest

import minidebug.run.batch
import minidebug.run.episode
from minidebug.agents import AGENTS, Agent, load_agent

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

PROTOCOL = sorted(name for name, member in inspect.getmembers(Agent, inspect.isfunction) if not name.startswith("_"))


def methods_called_on_agents(module) -> set[str]:
    """Every `agent.<name>(...)` call in a module's source."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    return {node.func.attr for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "agent"}


def test_the_protocol_lists_every_method_the_runner_calls():
    called = methods_called_on_agents(minidebug.run.episode) | methods_called_on_agents(minidebug.run.batch)
    assert called and called <= set(PROTOCOL)


def options_for(name: str, tmp_path: Path) -> dict:
    """Constructor arguments that make a working instance of each registered agent."""
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"type": "step", "step": 1, "action": {"name": "eval", "arguments": {}}}) + "\n")
    return {"oracle": {}, "llm": {"model": "m", "base_url": "http://127.0.0.1:1/v1"},
            "replay": {"trajectory": script}}[name]


@pytest.mark.parametrize("name", list(AGENTS))
def test_each_registered_agent_implements_the_protocol(name, tmp_path):
    cls = load_agent(name)
    agent = cls(**options_for(name, tmp_path))
    for method in PROTOCOL:
        implemented = getattr(agent, method, None)
        assert callable(implemented), f"{name} agent has no {method}()"
        expected = inspect.signature(getattr(Agent, method))
        assert list(inspect.signature(implemented).parameters) == list(expected.parameters)[1:], method
        assert get_type_hints(getattr(cls, method)) == get_type_hints(getattr(Agent, method)), method
    assert agent.take_exchange() is None  # nothing to report before the first action
