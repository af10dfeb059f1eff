"""The verifiers adapter, with verifiers' own rollout loop: its `null` chat harness, its MCP tool servers,
its interception server, and a scripted model behind a real HTTP server on 127.0.0.1 that streams
chat-completion chunks."""

import asyncio
import json
import os
import sysconfig
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("verifiers", reason="the [verifiers] extra is part of the test extra; install it")

import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.clients import ModelContext

import minidebug
from minidebug.errors import UsageError
from minidebug.integrations.verifiers import load_environment, signature_of, task_paths

OLD_SIGNATURE = "def __init__(self, value, children=[]):"
FIX = [("edit", {"path": "tree.py", "old": OLD_SIGNATURE, "new": "def __init__(self, value, children=None):"}),
       ("edit", {"path": "tree.py", "old": "        self.children = children",
                 "new": "        self.children = [] if children is None else children"}),
       ("submit", {})]
WRONG = [("edit", {"path": "tree.py", "old": OLD_SIGNATURE, "new": "def __init__(self, value, children=()):"}),
         ("submit", {})]
FIX_THEN_STOP = FIX[:2]  # no submit: the model just stops calling tools
FORGE = [("pdb", {"command": '!open("conftest.py", "w").write("def pytest_collection_modifyitems(items):\\n'
                             '    items.clear()\\n")'}), ("submit", {})]


class StreamingModel:
    """An OpenAI-compatible endpoint that plays one script per rollout (told apart by verifiers'
    X-Session-ID header), a tool call per turn, streamed as server-sent events."""

    def __init__(self, scripts):
        self.scripts = list(scripts)
        self.sessions: dict[str, list] = {}
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                session = self.headers.get("X-Session-ID", "")
                with model.lock:
                    if session not in model.sessions:
                        model.sessions[session] = model.scripts[len(model.sessions)]
                    script = model.sessions[session]
                done = sum(1 for message in body["messages"] if message.get("role") == "tool")
                data = model.stream(script[done] if done < len(script) else None, done)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @staticmethod
    def stream(step, index: int) -> bytes:
        base = {"id": f"c{index}", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
        if step is None:
            delta, finish = {"role": "assistant", "content": "Done."}, "stop"
        else:
            name, arguments = step
            delta = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": f"call_{index}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}]}
            finish = "tool_calls"
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {**base, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}]
        return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def run(scripts, monkeypatch, cache_dir):
    """Run one rollout per script at once on sum_tree; returns {script index: trace}."""
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))  # the tool servers' episodes share the test cache
    monkeypatch.setenv("SCRIPTED_MODEL_KEY", "unused")
    # verifiers runs its chat program with uv: the one the test extra installs, wherever pip put it
    monkeypatch.setenv("PATH", sysconfig.get_path("scripts") + os.pathsep + os.environ["PATH"])
    model = StreamingModel(scripts)
    try:
        env = load_environment(tasks=["sum_tree"], agent=vf.AgentConfig(harness={"id": "null"},
                                                                        runtime=vf.SubprocessConfig()))
        task = next(iter(env.taskset))
        ctx = ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=model.url,
                                                                         api_key_var="SCRIPTED_MODEL_KEY"))

        async def rollouts():
            async with env.serving():
                return await asyncio.gather(*(env.run_episode(task, ctx) for _ in scripts))
        episodes = asyncio.run(rollouts())
    finally:
        model.close()
    traces = [trace for episode in episodes for trace in episode.traces]
    assert len(traces) == len(scripts)
    order = list(model.sessions)
    return {order.index(trace.id): trace for trace in traces}


def episode_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("minidebug-ep-*")}


def tool_servers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"minidebug.integrations.verifiers" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_scripted_rollout_fixes_the_bug_and_scores_one(monkeypatch, cache_dir):
    before = episode_dirs()
    (trace,) = run([FIX], monkeypatch, cache_dir).values()
    assert trace.ok and trace.reward == 1.0, trace.errors
    assert trace.rewards["solved"].score == 1.0 and trace.metrics["tool_calls"] == 3.0
    assert trace.stop_condition == "submitted"
    assert episode_dirs() == before and tool_servers() == []


@pytest.mark.slow  # 30 s and more: run with `pytest -m slow`
def test_concurrent_rollouts_share_nothing_and_only_a_real_fix_scores(monkeypatch, cache_dir):
    before = episode_dirs()
    traces = run([FIX, WRONG, FIX_THEN_STOP, FORGE], monkeypatch, cache_dir)
    rewards = [traces[i].reward for i in range(4)]
    # a wrong fix scores 0; stopping without submit is scored on the final files; a conftest.py that
    # drops every test, written through pdb, is among the final files and changes nothing the score reads
    assert rewards == [1.0, 0.0, 1.0, 0.0], [t.errors for t in traces.values()]
    assert [traces[i].metrics["tool_calls"] for i in range(4)] == [3.0, 2.0, 2.0, 2.0]
    assert set(traces[3].state.files) == {"conftest.py"} and set(traces[1].state.files) == {"tree.py"}
    assert episode_dirs() == before and tool_servers() == []


def test_tool_schemas_become_typed_signatures():
    with minidebug.make("sum_tree") as env:
        env.reset()
        schemas = {s["name"]: s["input_schema"] for s in env.tool_schemas("anthropic")}
    view = signature_of(schemas["view"]).parameters
    assert list(view)[0] == "path" and view["path"].default is view["path"].empty
    assert view["start"].default is None
    assert "list[str]" in str(signature_of(schemas["inspect"]).parameters["expr"].annotation)


def test_task_selection_names_what_matches_nothing(tmp_path):
    (tmp_path / "task-a").mkdir()
    assert "sum_tree" in task_paths(["bundled"])
    assert task_paths(["sum_tree", str(tmp_path / "task-*"), "sum_tree"]) == ["sum_tree", str(tmp_path / "task-a")]
    with pytest.raises(ValueError, match="no task folder matches"):
        task_paths([str(tmp_path / "none-*")])


@pytest.mark.parametrize("strategy", ["debug-after-2", "bogus"])
def test_a_strategy_it_cannot_run_is_refused_when_the_env_is_built(strategy):
    with pytest.raises(UsageError, match=f"'{strategy}'.*; it runs debug, rewrite$") as refused:
        load_environment(tasks=["sum_tree"], make={"strategy": strategy})
    assert "\n" not in str(refused.value)
    env = load_environment(tasks=["sum_tree"], make={"strategy": "rewrite"})
    assert [task.data.make for task in env.taskset] == [{"strategy": "rewrite"}]
