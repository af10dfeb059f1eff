"""minidebug in inspect_ai (extra `[inspect]`): a sandbox provider, the debugging tools, and a ready Task.

    inspect eval minidebug/minidebug_tasks -T tasks='sum_*' --model openai/gpt-4.1

- `sandbox="minidebug"` works in any inspect Task (the provider is registered through inspect's `inspect_ai`
  entry point). Each sample gets its own episode: a worktree of the task named by the sample's metadata
  `minidebug_task` (or the sandbox config's `task`), with its venv, limits and sandbox. `exec` runs commands in
  the worktree inside the venv, confined like minidebug's bash tool; `read_file`/`write_file` stay inside the
  project, and files the task owns (tests, harness, hidden files) cannot be written.
- `debugging_tools()` gives minidebug's tools (pdb, view, edit, trace, inspect, eval, ...) as inspect tools that
  act on the current sample's episode: pdb sessions and breakpoints live as long as the sample.
- `minidebug_score()` scores the final state with minidebug's own eval (counted tests, own eval tree).
- `minidebug_tasks(...)` puts them together over bundled tasks or task folders, solved with inspect's `react`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, ToolDef, ToolError as InspectToolError, ToolParams
from inspect_ai.util import ExecResult, SandboxEnvironment, sandbox, sandboxenv
from pydantic import BaseModel

from ..errors import ToolError
from ..workspace.safefs import read_entry, write_file

TOOLS = ("pdb", "trace", "inspect", "view", "listdir", "grep", "edit", "eval")
METADATA_KEY = "minidebug_task"


class MinidebugSandboxConfig(BaseModel, frozen=True):
    """`task` is used when a sample names none in its metadata; the rest are `minidebug.make`'s options."""

    task: str | None = None
    strategy: str = "debug"
    max_steps: int | None = None
    max_tokens: int | None = None
    sandbox: str | None = "auto"

    def make_options(self) -> dict[str, Any]:
        options = self.model_dump(exclude={"task"})
        return {key: value for key, value in options.items() if value is not None or key == "sandbox"}


@sandboxenv(name="minidebug")
class MinidebugSandbox(SandboxEnvironment):
    """One minidebug episode as an inspect sandbox."""

    def __init__(self, env: Any):
        super().__init__()
        self.env = env

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return MinidebugSandboxConfig(**config)

    @classmethod
    async def sample_init(cls, task_name: str, config: Any, metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        import asyncio

        from ..core.make import make

        settings = config if isinstance(config, MinidebugSandboxConfig) else MinidebugSandboxConfig()
        name = metadata.get(METADATA_KEY) or settings.task
        if not name:
            raise ValueError(f"the minidebug sandbox needs a task: sample metadata {METADATA_KEY!r} or config task")
        env = make(name, bash=True, terminate_on_success=False, **settings.make_options())
        try:
            await asyncio.to_thread(env.reset, seed=0)
            _keep_path_in_login_shells(env.workspace)
        except BaseException:
            env.close()
            raise
        return {"default": cls(env)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: Any, environments: dict[str, SandboxEnvironment],
                             interrupted: bool) -> None:
        for environment in environments.values():
            await environment.as_type(MinidebugSandbox).env.aclose()

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        import asyncio

        return await asyncio.to_thread(self._exec, cmd, input, cwd, env or {}, timeout)

    def _exec(self, cmd: list[str], input: str | bytes | None, cwd: str | None, extra: dict[str, str],
              timeout: int | None) -> ExecResult[str]:
        workspace = self.env.workspace
        folder = _relative(workspace, cwd, workspace.relative) if cwd else "."
        stdin = input.encode() if isinstance(input, str) else input
        limit = float(timeout or self.env.limits.command_timeout)
        result = self.env.exec(list(cmd), limit, cwd=folder, env={k: v for k, v in extra.items() if k != "PATH"},
                                  stdin=stdin)
        if result.timed_out:
            raise TimeoutError(f"{shlex.join(cmd)[:200]} timed out after {limit:g} s")
        code = result.returncode if result.returncode is not None else 1
        return ExecResult(success=code == 0, returncode=code, stdout=result.output, stderr="")

    async def write_file(self, file: str, contents: str | bytes) -> None:
        workspace = self.env.workspace
        rel = _relative(workspace, file, workspace.writable, PermissionError)
        data = contents.encode() if isinstance(contents, str) else contents
        write_file(workspace.root, rel, data)

    async def read_file(self, file: str, text: bool = True) -> str | bytes:  # type: ignore[override]
        workspace = self.env.workspace
        rel = _relative(workspace, file, workspace.relative, FileNotFoundError)
        entry = read_entry(workspace.root, rel)  # `rel` has its links resolved: a link here is a dangling one
        if entry is None or entry[0] != "file":
            raise FileNotFoundError(f"{file}: not a regular file of the project")
        return entry[1].decode("utf-8") if text else entry[1]


def _keep_path_in_login_shells(workspace: Any) -> None:
    """inspect's bash tool starts `bash --login`, whose /etc/profile resets PATH: the episode's HOME gets a
    profile that puts the venv first again."""
    path = workspace.environ()["PATH"]
    (workspace.home / ".bash_profile").write_text(f"export PATH={shlex.quote(path)}\n", encoding="utf-8")


def _relative(workspace: Any, path: str, check: Any, error: type[Exception] = PermissionError) -> str:
    """A path inside the project (an absolute one is taken relative to the worktree when it lies inside),
    checked by the workspace's rules; their ToolError becomes the OS error inspect expects."""
    root = str(workspace.root)
    if path == root or path.startswith(root + "/"):
        path = path[len(root) + 1:] or "."
    try:
        return check(path)
    except ToolError as exc:
        raise error(str(exc)) from None


def _episode() -> Any:
    return sandbox().as_type(MinidebugSandbox).env


def _as_inspect_tool(name: str, schema: dict[str, Any]) -> Tool:
    import asyncio

    async def execute(**arguments: Any) -> str:
        env = _episode()
        if name not in env.tools:
            raise InspectToolError(f"{name} is not available in this episode")
        arguments = {key: value for key, value in arguments.items() if value is not None}
        observation, *_ = await asyncio.to_thread(env.step, {"name": name, "arguments": arguments})
        return observation

    parameters = ToolParams.model_validate(schema["input_schema"])
    return ToolDef(execute, name=name, description=schema["description"], parameters=parameters).as_tool()


def debugging_tools(names: tuple[str, ...] = TOOLS) -> list[Tool]:
    """minidebug's tools as inspect tools acting on the current sample's episode.

    Raises:
        ValueError: an unknown tool name.
    """
    from ..tools import TOOLS as REGISTRY, load_tool, unknown_tool_message
    from ..tools.schemas import tool_schemas

    for name in names:
        if name not in REGISTRY:
            raise ValueError(unknown_tool_message(name, REGISTRY))
    schemas = tool_schemas([load_tool(name) for name in names], "anthropic")
    return [_as_inspect_tool(schema["name"], schema) for schema in schemas]


@scorer(metrics=[mean()])
def minidebug_score():
    """The fraction of the task's counted tests that pass in the final state, by minidebug's own eval."""

    async def score(state: TaskState, target: Target) -> Score:
        import asyncio

        result = await asyncio.to_thread(_episode().evaluate)
        value = result.score / result.max_score if result.max_score else 0.0
        return Score(value=value, answer=f"{result.score}/{result.max_score}",
                     explanation=f"{result.score} of {result.max_score} counted tests pass",
                     metadata={"score": result.score, "max_score": result.max_score})

    return score


@task
def minidebug_tasks(tasks: str | list[str] = "*", strategy: str = "debug", max_steps: int = 30,
                    model: Any = None) -> Task:
    """Bundled tasks or task folders (selectors: names, globs, paths; a list, or one comma-separated string,
    as `inspect eval -T tasks=a,b` passes either) as an inspect Task, solved by inspect's `react` agent with
    minidebug's tools (those of the strategy) and scored by its eval."""
    from ..tasks.select import select_tasks
    from ..tools.strategies import DEBUG_TOOLS, parse_strategy

    words = [tasks] if isinstance(tasks, str) else list(tasks)
    selected = select_tasks([s.strip() for word in words for s in str(word).split(",") if s.strip()])
    plan = parse_strategy(strategy)
    names = TOOLS if not plan.withheld else tuple(t for t in TOOLS if t not in DEBUG_TOOLS)
    dataset = [Sample(id=t.name, input=t.description.strip(), metadata={METADATA_KEY: str(Path(t.root))})
               for t in selected]
    config = MinidebugSandboxConfig(strategy=plan.name, max_steps=max_steps)
    return Task(dataset=dataset, solver=react(tools=debugging_tools(names)), scorer=minidebug_score(),
                sandbox=("minidebug", config), model=model)
