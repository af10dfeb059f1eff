"""`inspect eval` from the command line, offline: the ready Task's strategies, tools per turn, prompts and task
selectors, read back from inspect's own logs."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra is part of the test extra; install it")

from inspect_ai.log import read_eval_log

import minidebug
from minidebug.agents.llm import strategy_prompt
from minidebug.tools.strategies import parse_strategy

from ..conftest import processes_left

SCRIPT = [
    ("view", {"path": "tree.py"}),
    ("edit", {"path": "tree.py", "old": "children=[]", "new": "children=None"}),
    ("pdb", {"command": "b tree.py:6"}),
    ("submit", {}),
]
WITHOUT_DEBUGGER = ["view", "listdir", "grep", "edit", "eval", "submit"]
EVERY_TOOL = ["pdb", "trace", "inspect", *WITHOUT_DEBUGGER]
UNLOCKED = ["view", "listdir", "grep", "edit", "eval", "pdb", "trace", "inspect", "submit"]
OFFERED = {  # the tools the model is offered at each of its four turns
    "debug": [EVERY_TOOL] * 4,
    "rewrite": [WITHOUT_DEBUGGER] * 4,
    "debug-after-1": [WITHOUT_DEBUGGER] * 2 + [UNLOCKED] * 2,  # the first edit (turn 2) unlocks the debugger
}
# A scripted mock model around the ready Task; no usage is set, so inspect counts tokens itself (offline).
TASK_FILE = textwrap.dedent(f"""\
    from inspect_ai import task
    from inspect_ai.model import ModelOutput, get_model

    from minidebug.integrations.inspect_ai import minidebug_tasks


    @task
    def scripted(strategy: str = "debug"):
        outputs = [ModelOutput.for_tool_call("mockllm/model", tool, arguments) for tool, arguments in {SCRIPT!r}]
        return minidebug_tasks(tasks="sum_tree", strategy=strategy, model=get_model("mockllm/model",
                                                                                  custom_outputs=outputs))
    """)


def inspect_eval(args, tmp_path, cache_dir, logs):
    """`inspect eval ARGS` in a process of its own, with this checkout's minidebug; its only log."""
    # This checkout's package alone on the path: the checkout's root may hold a `minidebug.egg-info` (left by an
    # editable install), which inspect would take for an installed, non-editable distribution of it.
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    if not (site / "minidebug").exists():
        (site / "minidebug").symlink_to(Path(minidebug.__file__).parent)
    env = {"MINIDEBUG_CACHE": str(cache_dir), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "PYTHONPATH": str(site)}
    command = [sys.executable, "-m", "inspect_ai", "eval", *args, "--log-dir", str(logs), "--display", "plain"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=tmp_path)


def finished(process, logs):
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    assert "o200k_base" not in output  # no tokenizer download was tried
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return log


@pytest.mark.slow  # 30 s and more: run with `pytest -m slow`
def test_each_strategy_offers_its_tools_turn_by_turn_with_its_own_prompt(tmp_path, cache_dir):
    task_file = tmp_path / "scripted.py"
    task_file.write_text(TASK_FILE)
    runs = {strategy: inspect_eval([f"{task_file}@scripted", "-T", f"strategy={strategy}"], tmp_path, cache_dir,
                                   tmp_path / strategy)
            for strategy in OFFERED}
    for strategy, process in runs.items():
        sample = finished(process, tmp_path / strategy).samples[0]
        offered = [[tool.name for tool in event.tools] for event in sample.events if event.event == "model"]
        assert offered == OFFERED[strategy], strategy
        system, first = sample.messages[0], sample.messages[1]
        assert system.role == "system" and system.text == strategy_prompt(parse_strategy(strategy))
        assert first.role == "user" and first.text.startswith("`Node` trees give wrong totals")
        assert ("- pdb:" in first.text) == (strategy == "debug")  # the episode's first observation
        results = [m for m in sample.messages if m.role == "tool"]
        breakpoint_set = results[2].error is None and "Breakpoint 1 at tree.py:6" in results[2].text
        assert breakpoint_set == (strategy != "rewrite"), strategy
        assert ("[new tools available from now on]" in results[1].text) == (strategy == "debug-after-1")
        assert "submitted" in results[3].text
    assert not processes_left()


@pytest.mark.slow  # a whole inspect run in a process of its own (README's command runs in test_readme)
@pytest.mark.parametrize("selector", ["list", "comma string"])
def test_the_readme_command_runs_offline_with_the_mock_model(selector, tmp_path, cache_dir):
    """The mock model answers without tool calls: each sample ends after three answers, as `minidebug run`'s
    llm agent gives up. `-T tasks=a,b` reaches the task as a list, a task config's "a,b" as one string."""
    if selector == "list":
        tasks = ["-T", "tasks=sum_*,late_handlers"]
    else:
        (tmp_path / "config.yaml").write_text(json.dumps({"tasks": "sum_*,late_handlers"}))
        tasks = ["--task-config", str(tmp_path / "config.yaml")]
    process = inspect_eval(["minidebug/minidebug_tasks", *tasks, "-T", "strategy=debug", "--model", "mockllm/model"],
                           tmp_path, cache_dir, tmp_path / "logs")
    log = finished(process, tmp_path / "logs")
    assert sorted(sample.id for sample in log.samples) == ["late_handlers", "sum_tree"]
    for sample in log.samples:
        assert [m.role for m in sample.messages].count("assistant") == 3
        assert sample.scores["minidebug_score"].value < 1.0
    assert not processes_left()
