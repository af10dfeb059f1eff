"""inspect_ai: the `minidebug` sandbox provider, the debugging tools and the ready Task, with inspect's mock model."""

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra is part of the test extra; install it")

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.tool import bash

import minidebug
from minidebug.integrations.inspect_ai import MinidebugSandbox, MinidebugSandboxConfig, minidebug_tasks

from ..conftest import processes_left

MODEL = "mockllm/model"


def call(tool, **arguments):
    output = ModelOutput.for_tool_call(MODEL, tool, arguments)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tokenizer download
    return output


SOLVING = [
    ("view", {"path": "tree.py"}),
    ("pdb", {"command": "b tree.py:6"}),
    ("pdb", {"command": "c"}),
    ("edit", {"path": "tree.py", "old": "children=[]", "new": "children=None"}),
    ("edit", {"path": "tree.py", "old": "self.children = children",
              "new": "self.children = [] if children is None else children"}),
    ("eval", {}),
    ("pdb", {"command": "p 1 + 1"}),  # the episode goes on after a passing eval, until the agent submits
    ("submit", {}),
]


FIX = """from pathlib import Path
tree = Path("tree.py")
tree.write_text(tree.read_text().replace("children=[]", "children=None").replace(
    "self.children = children", "self.children = [] if children is None else children"))
"""


def run(task, outputs, tmp_path):
    model = get_model(MODEL, custom_outputs=[call(tool, **args) for tool, args in outputs])
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    return log


def tool_results(log):
    return [m.text for m in log.samples[0].messages if m.role == "tool"]


def test_the_ready_task_solves_with_pdb_and_scores_with_minidebugs_eval(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    log = run(minidebug_tasks(tasks="sum_tree"), SOLVING, tmp_path)
    assert log.results.scores[0].metrics["mean"].value == 1.0
    results = tool_results(log)
    assert "class Node" in results[0] and "Breakpoint 1 at tree.py:6" in results[1]
    assert "-> self.value = value" in results[2] and "eval: 4 passed (score 4/4)" in results[5]
    assert "\n2\n" in results[6] and "submitted" in results[7] and not processes_left()
    assert log.samples[0].scores["minidebug_score"].answer == "4/4"


def test_the_agent_stops_when_the_episode_ends_or_the_model_calls_no_tool(tmp_path, cache_dir, monkeypatch):
    """As `minidebug run`: a spent step budget ends the episode; three answers without a tool call end the
    sample, the model asked again in between with the llm agent's words."""
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    log = run(minidebug_tasks(tasks="sum_tree", max_steps=2), [("view", {"path": "tree.py"})] * 3, tmp_path)
    assert [m.role for m in log.samples[0].messages].count("tool") == 2  # the third call is never made
    quiet = [ModelOutput.from_content(MODEL, "thinking") for _ in range(4)]
    model = get_model(MODEL, custom_outputs=quiet)
    [log] = inspect_eval(minidebug_tasks(tasks="sum_tree"), model=model, log_dir=str(tmp_path / "quiet"),
                         display="none")
    messages = log.samples[0].messages
    assert log.status == "success" and [m.role for m in messages].count("assistant") == 3
    assert [m.text for m in messages if m.role == "user"][1:] == ["Please respond by calling one of the tools."] * 2


def test_a_wrong_fix_scores_what_passes_and_rewrite_has_no_debugger(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = minidebug_tasks(tasks="sum_tree", strategy="rewrite")
    log = run(task, [("pdb", {"command": "l"}), ("edit", {"path": "tree.py", "old": "children=[]",
                                                         "new": "children=()"}), ("submit", {})], tmp_path)
    refused = [m for m in log.samples[0].messages if m.role == "tool"][0]
    assert refused.error is not None and refused.error.message == "Tool pdb not found"  # not offered at all
    score = log.samples[0].scores["minidebug_score"]
    assert score.value < 1.0 and score.metadata["score"] < score.metadata["max_score"]


@pytest.mark.parametrize("tasks", ["sum_*,late_handlers", ["sum_*", "late_handlers"], ["sum_tree,late_handlers"]])
def test_tasks_are_a_list_or_a_comma_string_as_inspect_passes_them(tasks):
    """`inspect eval -T tasks=a,b` hands the task a list; a string with commas works as well."""
    assert [sample.id for sample in minidebug_tasks(tasks=tasks).dataset] == ["sum_tree", "late_handlers"]


def test_an_unknown_strategy_is_refused_when_the_task_or_sandbox_config_is_built():
    from minidebug.errors import UsageError
    from minidebug.integrations.inspect_ai import minidebug_agent

    every = "; it runs debug, rewrite, debug-after-N with N >= 1$"
    with pytest.raises(UsageError, match="the inspect_ai adapter: unknown strategy 'bogus'" + every) as refused:
        minidebug_tasks(tasks="sum_tree", strategy="bogus")
    assert "\n" not in str(refused.value)
    with pytest.raises(UsageError, match="'debug-after-0'" + every):
        MinidebugSandbox.config_deserialize({"task": "sum_tree", "strategy": "debug-after-0"})
    with pytest.raises(UsageError, match="'rewrite-after-1'" + every):
        minidebug_agent("rewrite-after-1")
    assert MinidebugSandboxConfig(strategy="debug-after-2").make_options()["strategy"] == "debug-after-2"


def test_sandbox_minidebug_in_any_task_with_inspects_own_bash_tool(tmp_path, cache_dir, monkeypatch):
    from inspect_ai.agent import react

    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    task = Task(dataset=[Sample(input="Fix the tree.", target="4 passed")],
                solver=react(tools=[bash()]), scorer=includes(),
                sandbox=("minidebug", MinidebugSandboxConfig(task="sum_tree")))
    log = run(task, [("bash", {"command": "cat test_tree.py | head -3; echo $VIRTUAL_ENV | grep -c venv"}),
                     ("bash", {"command": "python -m pytest -q 2>&1 | tail -1"}),
                     ("submit", {"answer": "4 passed"})], tmp_path)
    first, second = tool_results(log)
    assert "import" in first and first.strip().endswith("1")
    assert "failed" in second


def test_files_stay_inside_the_project_and_the_harness_stays_the_tasks(cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))

    async def scenario():
        config = MinidebugSandboxConfig(task="sum_tree")
        environments = await MinidebugSandbox.sample_init("t", config, {})
        box = environments["default"].as_type(MinidebugSandbox)
        try:
            await box.write_file("notes/new.txt", "hello")
            assert await box.read_file("notes/new.txt") == "hello"
            assert await box.read_file(str(box.env.workspace.root / "tree.py"), text=False)
            for path in ("../escape.txt", "/etc/passwd"):
                with pytest.raises(PermissionError):
                    await box.write_file(path, "x")
            with pytest.raises(PermissionError, match="read-only"):
                await box.write_file("test_tree.py", "def test_ok(): pass\n")
            with pytest.raises(PermissionError, match="configures how the tests run"):
                await box.write_file("conftest.py", "")
            with pytest.raises(FileNotFoundError):
                await box.read_file("/etc/hostname")
            result = await box.exec(["cat"], input="piped text")
            assert result.success and result.stdout == "piped text"
            result = await box.exec(["pwd"], cwd="notes")
            assert result.stdout.strip().endswith("/notes")
            with pytest.raises(TimeoutError):
                await box.exec(["sleep", "5"], timeout=1)
            failed = await box.exec(["bash", "-c", "exit 3"])
            assert (failed.success, failed.returncode) == (False, 3)
            # git works in the sandbox, on a repository holding the task's base commit
            assert (await box.exec(["python", "-"], input=FIX)).success
            edited = await box.exec(["git", "diff"])
            assert edited.success and "+    def __init__(self, value, children=None):" in edited.stdout
            assert (await box.exec(["git", "log", "--format=%s"])).stdout.strip() == "sum_tree: base"
            # a program may write what the task owns; the result says that it is never scored
            forged = await box.exec(["bash", "-c", "echo 'def test_ok(): pass' > test_tree.py"])
            assert forged.success and "the task owns test_tree.py" in forged.stderr and "never scored" in forged.stderr
            assert (await box.exec(["true"])).stderr == ""  # said once per change
            assert box.env.evaluate().score == 4  # eval ran the task's own tests on the fixed tree
            return box.env.workspace.dir
        finally:
            await MinidebugSandbox.sample_cleanup("t", config, environments, False)

    episode = asyncio.run(scenario())
    assert not episode.exists() and not processes_left()


@pytest.mark.slow  # 30 s and more: run with `pytest -m slow`
def test_inspect_eval_from_the_command_line(tmp_path, cache_dir):
    # `plain` never uses minidebug's code: `sandbox="minidebug"` is found through the inspect_ai entry point.
    task_file = tmp_path / "tasks.py"
    task_file.write_text(textwrap.dedent(f"""\
        from inspect_ai import Task, task
        from inspect_ai.agent import react
        from inspect_ai.dataset import Sample
        from inspect_ai.model import ModelOutput, ModelUsage, get_model
        from inspect_ai.scorer import includes
        from inspect_ai.tool import bash

        def scripted_model(calls):
            outputs = [ModelOutput.for_tool_call("{MODEL}", tool, arguments) for tool, arguments in calls]
            for output in outputs:
                output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            return get_model("{MODEL}", custom_outputs=outputs)

        @task
        def scripted():
            from minidebug.integrations.inspect_ai import minidebug_tasks

            return minidebug_tasks(tasks="sum_tree", model=scripted_model({json.dumps(SOLVING)}))

        @task
        def plain():
            model = scripted_model([("bash", {{"command": "python -m pytest -q 2>&1 | tail -1"}}),
                                    ("submit", {{"answer": "failed"}})])
            return Task(dataset=[Sample(input="Run the tests.", target="failed")], solver=react(tools=[bash()]),
                        scorer=includes(), sandbox=("minidebug", {{"task": "sum_tree"}}), model=model)
        """))
    env = {"MINIDEBUG_CACHE": str(cache_dir), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "PYTHONPATH": str(Path(minidebug.__file__).parents[1])}  # this checkout, wherever it is installed
    for name, metric in (("scripted", "mean"), ("plain", "accuracy")):
        logs = tmp_path / f"logs-{name}"
        completed = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", f"{task_file}@{name}", "--log-dir",
                                    str(logs), "--log-format", "json", "--display", "plain"],
                                   capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        [log_file] = logs.glob("*.json")
        log = json.loads(log_file.read_text())
        assert log["status"] == "success", log.get("error")
        assert log["results"]["scores"][0]["metrics"][metric]["value"] == 1.0
    tool_output = [m for m in log["samples"][0]["messages"] if m["role"] == "tool"][0]["content"]
    assert "3 failed, 1 passed" in str(tool_output)  # the task's own tests ran in its venv, in the episode
