"""minidebug tasks as a verifiers taskset (extra `[verifiers]`, verifiers 0.4: `verifiers.v1`).

    from minidebug.integrations.verifiers import load_environment
    env = load_environment(tasks=["sum_tree", "tasks/*"], make={"strategy": "debug"})

Each task of the taskset is one minidebug task. Its tools are the episode's own (pdb, view, edit, eval,
submit...), served by a verifiers `Toolset`: one MCP server process per rollout, holding that rollout's
episode (worktree, pdb session), so rollouts share nothing. After every call the toolset records the
worktree's changed files in the rollout's state. The reward (`solved`) is of those final files, scored by
minidebug's eval: 1.0 when every counted test passes, else 0.0. When the agent's last change was followed by
`submit`, that is the submit's own eval; otherwise (the agent stopped without submitting, or changed files
after it) the files are written into a fresh episode of the task and evaluated there, since the rollout's
tool server is gone by the time verifiers scores. A rollout stops when the agent calls `submit`.
The strategies `debug` and `rewrite` apply; `debug-after-N` does not (its tools arrive during the rollout,
and a verifiers tool server lists the same tools for the whole rollout), so building the env refuses it.

verifiers finds a taskset by an importable module name: `load_environment` registers this module as
`minidebug_tasks` in the running process. The default harness is verifiers' `null` chat loop, whose model has
only these tools (a harness that also gives the model a shell, such as `bash`, runs it on the host, outside
minidebug's sandbox).
"""

from __future__ import annotations

import asyncio
import base64
import glob
import hashlib
import inspect
import json
import os
import sys
from pathlib import Path
from types import GenericAlias
from typing import Annotated, Any, Optional

import verifiers.v1 as vf
from pydantic import Field

from ..errors import UsageError
from .strategy_check import FIXED_TOOLS, adapter_strategy

TASKSET_ID = "minidebug_tasks"
PROMPT = ("{description}\n\nFind and fix the bug with the tools you have: run the code under pdb, view and edit "
          "files, run eval to score your changes. Call submit when every test passes.")


class MinidebugTasksetConfig(vf.TasksetConfig):
    tasks: list[str] = Field(default_factory=lambda: ["bundled"])
    """Task folders, globs of them, bundled task names, or "bundled" for every bundled task."""
    make: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of `minidebug.make` for every task (strategy, limits, sandbox...)."""


class MinidebugData(vf.TaskData):
    task: str
    """A task folder path or bundled task name."""
    make: dict[str, Any] = Field(default_factory=dict)


class MinidebugState(vf.State):
    files: dict[str, str | None] = Field(default_factory=dict)
    """The worktree's changed files after the last call: path -> content (base64), None when deleted."""
    links: dict[str, str] = Field(default_factory=dict)
    """Changed paths that are symbolic links: path -> target."""
    calls: int = 0
    submitted: bool = False
    submit_reward: float | None = None
    """The reward of the submit's eval, in the rollout's own episode; used while the files stay as then."""
    submit_files: str = ""


class MinidebugToolsetConfig(vf.ToolsetConfig):
    pass


class MinidebugToolset(vf.Toolset[MinidebugToolsetConfig, MinidebugState]):
    """The episode's tools over MCP; one server process, and one episode, per rollout."""

    TOOL_PREFIX = None  # tools keep their names: view, edit, pdb, ...

    async def setup_task(self, data: MinidebugData) -> None:
        from ..core.make import make

        self.env = make(data.task, **data.make)
        self._exit_stack.callback(self.env.close)
        await asyncio.to_thread(self.env.reset)
        self._lock = asyncio.Lock()

    def register(self, mcp) -> None:
        for schema in self.env.tool_schemas("anthropic"):
            mcp.add_tool(self._with_state(self._tool(schema)), name=schema["name"],
                         description=schema["description"])

    def _tool(self, schema: dict[str, Any]):
        name = schema["name"]

        async def call(**arguments: Any) -> str:
            async with self._lock:
                action = {"name": name, "arguments": {k: v for k, v in arguments.items() if v is not None}}
                observation, _, terminated, truncated, info = await asyncio.to_thread(self.env.step, action)
                self.state.files, self.state.links = await asyncio.to_thread(changed_files, self.env.workspace)
                self.state.calls += 1
                self.state.submitted = self.state.submitted or name == "submit" or terminated or truncated
                if name == "submit" and "error" not in info:
                    self.state.submit_reward = float(0 < info["max_score"] == info["score"])
                    self.state.submit_files = digest(self.state.files, self.state.links)
            return observation

        call.__name__ = name
        # What inspect.signature() reports (PEP 362: it reads a function's `__signature__`), for the MCP server
        # to build the tool's parameters from; a function keeps such an attribute in its `__dict__`.
        vars(call)["__signature__"] = signature_of(schema["input_schema"])
        return call


class MinidebugTask(vf.Task[MinidebugData, MinidebugState, vf.TaskConfig]):
    @classmethod
    def toolsets(cls, config: vf.TaskConfig) -> list[vf.Toolset]:
        return [MinidebugToolset(MinidebugToolsetConfig())]

    @vf.stop
    def submitted(self, trace: vf.Trace) -> bool:
        return trace.state.submitted

    @vf.reward
    async def solved(self, trace: vf.Trace) -> float:
        """1.0 when every counted test passes on the rollout's final files: the submit's eval while the files
        are as they were then, else an eval in a fresh episode of the task."""
        state = trace.state
        if state.submit_reward is not None and state.submit_files == digest(state.files, state.links):
            return state.submit_reward
        return await asyncio.to_thread(score_files, self.data.task, self.data.make, state.files, state.links)

    @vf.metric
    async def tool_calls(self, trace: vf.Trace) -> float:
        return float(trace.state.calls)


class MinidebugTaskset(vf.Taskset[MinidebugTask, MinidebugTasksetConfig]):
    def __init__(self, config: MinidebugTasksetConfig) -> None:
        """Raises UsageError for a strategy a rollout's tool server cannot run (verifiers builds the taskset
        when it builds the env)."""
        adapter_strategy(config.make.get("strategy", "debug"), "the verifiers adapter", FIXED_TOOLS,
                         "a verifiers tool server offers the same tools for the whole rollout")
        super().__init__(config)

    def load(self):
        from minidebug.tasks.task import load_task

        for path in task_paths(self.config.tasks):
            task = load_task(path)
            yield MinidebugTask(MinidebugData(id=task.name, name=task.name, task=str(path), make=self.config.make,
                                              prompt=PROMPT.format(description=task.description)),
                                self.config.task)


def load_environment(tasks: list[str] | None = None, make: dict[str, Any] | None = None, harness: str = "null",
                     **env_config: Any) -> vf.Env:
    """A verifiers env over minidebug tasks; `env_config` holds further `vf.EnvConfig` fields.

    Raises:
        UsageError: a strategy other than debug and rewrite in `make`.
    """
    from verifiers.v1.utils.loaders import load_environment as load

    sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])
    taskset = MinidebugTasksetConfig(id=TASKSET_ID, tasks=tasks or ["bundled"], make=make or {})
    agent = env_config.pop("agent", None) or vf.AgentConfig(harness={"id": harness})
    return load(vf.SingleAgentEnvConfig(taskset=taskset, agent=agent, **env_config))


def task_paths(specs: list[str]) -> list[str]:
    """Task folders or bundled names from folder paths, globs, names and "bundled".

    Raises:
        ValueError: a spec names nothing.
    """
    from minidebug.tasks.task import bundled_task_names

    found: list[str] = []
    for spec in specs:
        if spec == "bundled":
            found += bundled_task_names()
        elif any(ch in spec for ch in "*?["):
            matches = sorted(p for p in glob.glob(spec) if Path(p).is_dir())
            if not matches:
                raise UsageError(f"no task folder matches {spec!r}")
            found += matches
        else:
            found.append(spec)
    return list(dict.fromkeys(found))


def changed_files(workspace: Any) -> tuple[dict[str, str | None], dict[str, str]]:
    """The worktree's changed files against the base: (contents in base64 or None if deleted, link targets)."""
    files: dict[str, str | None] = {}
    links: dict[str, str] = {}
    for status, rel in workspace.changes():
        path = workspace.root / rel
        if status == "D" or not os.path.lexists(path):
            files[rel] = None
        elif path.is_symlink():
            links[rel] = os.readlink(path)
        elif path.is_file():
            files[rel] = base64.b64encode(path.read_bytes()).decode()
    return files, links


def digest(files: dict[str, str | None], links: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps([files, links], sort_keys=True).encode()).hexdigest()


def score_files(task: str, make_options: dict[str, Any], files: dict[str, str | None],
                links: dict[str, str]) -> float:
    """The reward of a set of changed files: a fresh episode of the task, the files written into its
    worktree as the agent left them, minidebug's eval (which keeps the task's tests and harness its own)."""
    from minidebug.workspace.safefs import remove_entry

    from ..core.make import make

    with make(task, **make_options) as env:
        env.reset()
        workspace = env.workspace
        assert workspace is not None, "reset() starts the episode's workspace"
        root = workspace.root
        for rel, content in sorted(files.items()) + sorted(links.items()):
            target = root / rel
            if not workspace.contains(target.parent) or ".." in Path(rel).parts or Path(rel).parts[0] == ".git":
                continue
            remove_entry(root, rel)
            if rel in links:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(links[rel], target)
            elif content is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(base64.b64decode(content))
        result = env.evaluate()
        return 1.0 if result.success else 0.0


_JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                                "object": dict}


def signature_of(schema: dict[str, Any]) -> inspect.Signature:
    """A function signature for a tool's JSON schema (keyword-only; optional parameters default to None)."""
    required = set(schema.get("required", []))
    parameters = []
    for name, spec in schema.get("properties", {}).items():
        kinds = spec.get("type", "string")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        python: Any = next((_JSON_TYPES[k] for k in kinds if k in _JSON_TYPES), str)  # a type, or list[...]
        item = spec.get("items", {}).get("type") if python is list else None
        if item in _JSON_TYPES:
            python = GenericAlias(list, (_JSON_TYPES[item],))  # list[item's type], built at run time
        annotation: Any = Annotated[python if name in required else Optional[python],  # noqa: UP045 (as verifiers gets it)
                               Field(description=spec.get("description", ""))]
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                                            default=inspect.Parameter.empty if name in required else None))
    parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)
    return inspect.Signature(parameters, return_annotation=str)


__all__ = ["MinidebugTaskset", "MinidebugTask", "MinidebugToolset", "load_environment"]

if __name__ == "__main__":  # verifiers starts each rollout's tool server as `python -m` of this module
    MinidebugToolset.run()
