"""What the framework adapters add to an episode: the same scripted actions through each adapter and through
the plain API, measured in the same run.

    cd benchmarks && python bench_adapters.py [--runs 10] [--task sum_tree]

The actions: view, a pdb breakpoint and continue, two edits that fix the bug, eval, submit. Each figure is one
whole episode (make, reset, the actions, close). For inspect_ai the adapter layer is timed on its own (sample
init, the tools as inspect calls them, the scorer, cleanup), and a whole `inspect eval` with the mock model is
shown beside it for scale: most of that is inspect itself. Likewise for verifiers: its adapter layer (the tool
server's episode, the tools through an MCP server, the reward), and a whole rollout with its chat harness,
interception server and tool server process, against a scripted model on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import warnings
from pathlib import Path

from bench_core import print_table, row, timed

import minidebug

ACTIONS = [
    ("view", {"path": "tree.py"}),
    ("pdb", {"command": "b tree.py:6"}),
    ("pdb", {"command": "c"}),
    ("edit", {"path": "tree.py", "old": "children=[]", "new": "children=None"}),
    ("edit", {"path": "tree.py", "old": "self.children = children",
              "new": "self.children = [] if children is None else children"}),
    ("eval", {}),
    ("submit", {}),
]


def plain(task: str, options: dict) -> None:
    with minidebug.make(task, **options) as env:
        env.reset()
        for name, arguments in ACTIONS:
            env.step({"name": name, "arguments": arguments})
        assert env.diff()


def skyrl(task: str, options: dict) -> None:
    from minidebug.integrations.skyrl import MinidebugTextEnv

    env = MinidebugTextEnv(env_config={"make": options}, extras={"task": task})
    try:
        env.init([])
        for name, arguments in ACTIONS:
            output = env.step(f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>")
        assert output["reward"] == 1.0
    finally:
        env.close()


def mini_swe_agent(task: str, options: dict, prefix: str = "") -> None:
    import shlex

    from minisweagent.exceptions import Submitted

    from minidebug.integrations.mini_swe_agent import MinidebugEnvironment

    with MinidebugEnvironment(task=task, **options) as env:
        try:
            for name, arguments in ACTIONS:
                words = list(arguments.values()) if name in ("view", "pdb") else ([json.dumps(arguments)]
                                                                                   if arguments else [])
                env.execute({"command": prefix + shlex.join(["md", name, *words])})
        except Submitted:
            pass
        assert env.reward == 1.0


def inspect_layer(task: str, options: dict) -> None:
    from inspect_ai.util._sandbox.context import init_sandbox_environments_sample  # noqa: F401  (loads inspect)

    from minidebug.integrations import inspect_ai as adapter

    async def episode() -> None:
        config = adapter.MinidebugSandboxConfig(task=task, sandbox=options.get("sandbox", "auto"))
        environments = await adapter.MinidebugSandbox.sample_init("bench", config, {})
        box = environments["default"].as_type(adapter.MinidebugSandbox)
        tools = {t.__registry_info__.name.split("/")[-1]: t for t in adapter.debugging_tools()}  # type: ignore
        try:
            from inspect_ai.util._sandbox.context import sandbox_default_context_var, sandbox_environments_context_var

            sandbox_environments_context_var.set(environments)  # what inspect does for each sample
            sandbox_default_context_var.set("default")
            for name, arguments in ACTIONS[:-1]:
                await tools[name](**arguments)
            result = await asyncio.to_thread(box.env.evaluate)
            assert result.success
        finally:
            await adapter.MinidebugSandbox.sample_cleanup("bench", config, environments, False)

    asyncio.run(episode())


def inspect_eval(task: str, options: dict, log_dir: Path) -> None:
    from inspect_ai import eval as run_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from minidebug.integrations.inspect_ai import minidebug_tasks

    outputs = []
    for name, arguments in ACTIONS:
        output = ModelOutput.for_tool_call("mockllm/model", name, arguments if name != "submit" else {"answer": "x"})
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        outputs.append(output)
    [log] = run_eval(minidebug_tasks(tasks=task), model=get_model("mockllm/model", custom_outputs=outputs),
                     log_dir=str(log_dir), display="none")
    assert log.results.scores[0].metrics["mean"].value == 1.0


def verifiers_layer(task: str, options: dict) -> None:
    from types import SimpleNamespace

    from mcp.server.mcpserver import MCPServer

    from minidebug.integrations import verifiers as adapter

    async def episode() -> None:
        data = adapter.MinidebugData(task=task, make=options)
        toolset = adapter.MinidebugToolset(adapter.MinidebugToolsetConfig())
        async with toolset._exit_stack:  # what the tool server process does around its rollout
            await toolset.setup_task(data)
            server = MCPServer("bench")  # the tools as the MCP server calls them (no verifiers state channel)
            for schema in toolset.env.tool_schemas("anthropic"):
                server.add_tool(toolset._tool(schema), name=schema["name"], description=schema["description"])
            for name, arguments in ACTIONS:
                await server.call_tool(name, arguments)
            assert await adapter.MinidebugTask(data).solved(SimpleNamespace(state=toolset.state)) == 1.0

    asyncio.run(episode())


class ScriptedModel:
    """ACTIONS as streamed chat-completion chunks from 127.0.0.1, one tool call per turn."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                done = sum(1 for message in body["messages"] if message.get("role") == "tool")
                if done < len(ACTIONS):
                    name, arguments = ACTIONS[done]
                    delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": f"c{done}", "type": "function",
                             "function": {"name": name, "arguments": json.dumps(arguments)}}]}
                else:
                    delta = {"role": "assistant", "content": "Done."}
                chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
                events = [{**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
                data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def verifiers_rollout(task: str, options: dict, model: ScriptedModel) -> None:
    import verifiers.v1 as vf
    from verifiers.v1.clients import ModelContext

    from minidebug.integrations.verifiers import load_environment

    env = load_environment(tasks=[task], make=options,
                           agent=vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig()))
    ctx = ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=model.url, api_key_var="BENCH_KEY"))

    async def rollout():
        async with env.serving():
            return await env.run_episode(next(iter(env.taskset)), ctx)
    assert asyncio.run(rollout()).traces[0].reward == 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--task", default="sum_tree")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    logs = Path(tempfile.mkdtemp(prefix="minidebug-bench-logs-"))
    options = {"cache_dir": str(cache), "terminate_on_success": False}
    try:
        import os

        os.environ["MINIDEBUG_CACHE"] = str(cache)
        plain(args.task, options)  # warm the cache and the counted tests
        rows = []
        baseline = timed(lambda: plain(args.task, options), args.runs)
        rows.append(row("plain API (make, reset, 7 steps, close)", baseline))
        through_bash = lambda task, options: mini_swe_agent(task, options, "true && ")  # noqa: E731
        for label, run in [("SkyRL-gym text env", skyrl),
                           ("mini-swe-agent Environment, bare md commands", mini_swe_agent),
                           ("mini-swe-agent Environment, md inside shell commands", through_bash),
                           ("inspect_ai adapter layer", inspect_layer), ("verifiers adapter layer", verifiers_layer)]:
            run(args.task, options)  # imports and first use outside the timing
            rows.append(row(label, timed(lambda: run(args.task, options), args.runs), "plain API", baseline))
        inspect_eval(args.task, options, logs)
        rows.append(row("whole `inspect eval`, mock model (inspect itself included)",
                        timed(lambda: inspect_eval(args.task, options, logs), max(3, args.runs // 3)),
                        "plain API", baseline))
        os.environ["BENCH_KEY"] = "unused"
        model = ScriptedModel()
        verifiers_rollout(args.task, options, model)
        rows.append(row("whole verifiers rollout, scripted model (verifiers' processes included)",
                        timed(lambda: verifiers_rollout(args.task, options, model), max(3, args.runs // 3)),
                        "plain API", baseline))
        print_table(rows)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    main()
