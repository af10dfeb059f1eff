"""`make()`: an env from a task and keyword options."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..sandbox.choose import resolve
from ..tasks.task import Task, load_task
from ..tools import DEFAULT_TOOLS
from .config import EnvConfig
from .env import DebugEnv


def make(
    task: Any,
    *,
    max_steps: int | None = None,
    max_tokens: int | None = None,
    observation_tokens: int | None = None,
    eval_timeout: float | None = None,
    pdb_timeout: float | None = None,
    command_timeout: float | None = None,
    memory_mb: int | None = None,
    cpu_seconds: int | None = None,
    file_size_mb: int | None = None,
    processes: int | None = None,
    max_seconds: float | None = None,
    tools: list[str] | tuple[str, ...] | None = None,
    bash: bool = False,
    terminate_on_success: bool = True,
    keep_breakpoints: bool = False,
    sandbox: str | None = "auto",
    strategy: str = "debug",
    requirements: list[str] | tuple[str, ...] = (),
    encoding: str | None = None,
    cache_dir: Any = None,
) -> DebugEnv:
    """Make an env for a task folder, a bundled task name, or a loaded Task.

    Args:
        task: path of a task folder, name of a bundled task, or a `Task`.
        max_steps, max_tokens, observation_tokens, eval_timeout, pdb_timeout, command_timeout:
            override the task's `[limits]`.
        memory_mb, cpu_seconds, file_size_mb, processes: resource limits of every process the agent's
            actions start (defaults: 4096 MB, 600 s, 1024 MB, 256), overriding the task's `[limits]`.
        max_seconds: wall-clock budget of an episode.
        tools: the tools the agent may use (default: every tool except bash).
        bash: also enable the bash tool.
        terminate_on_success: end the episode when an eval passes every test.
        keep_breakpoints: keep pdb breakpoints across reset().
        sandbox: "auto" (the default: bwrap where it works; else no sandbox, with a warning naming what
            is lost), "bwrap" (raises WorkspaceError where bwrap cannot run), "landlock" (the file-system
            part only, for machines without user namespaces; raises where it cannot run) or None.
            Inside bwrap a program sees the system folders, its interpreter and the task's venv
            read-only, its own worktree, HOME and TMPDIR writable, a private /tmp, and no network.
        strategy: "debug" (every tool; the default), "rewrite" (no pdb, trace or inspect) or
            "debug-after-N" (those three unlocked by the env after the agent's N-th successful edit; that
            observation names them and `tool_schemas()` then includes them).
        requirements: more pip requirements for the task's venv (e.g. a package a debug-gym folder needs);
            a venv with them is built once and cached like any other.
        encoding: tiktoken encoding for budgets (default: cl100k_base, offline).
        cache_dir: cache for bare repos and venvs.

    Returns:
        A DebugEnv; call `reset()` before `step()`, and `close()` (or use `with`).

    Raises:
        TaskError: the task cannot be found or is malformed.
        WorkspaceError: sandbox="bwrap" or "landlock" and it cannot run here.
        ValueError: a bad option (e.g. an unknown tool name).
    """
    loaded = task if isinstance(task, Task) else load_task(task)
    loaded = loaded.with_requirements(list(requirements))
    overrides = {"max_steps": max_steps, "max_tokens": max_tokens, "observation_tokens": observation_tokens,
                 "eval_timeout": eval_timeout, "pdb_timeout": pdb_timeout, "command_timeout": command_timeout,
                 "memory_mb": memory_mb, "cpu_seconds": cpu_seconds, "file_size_mb": file_size_mb,
                 "processes": processes}
    overrides = {key: value for key, value in overrides.items() if value is not None}
    config: dict[str, Any] = {"terminate_on_success": terminate_on_success, "max_seconds": max_seconds,
                              "keep_breakpoints": keep_breakpoints, "sandbox": sandbox,
                              "cache_dir": cache_dir, "strategy": strategy}
    if tools is not None:
        config["tools"] = tuple(tools)
    if bash and "bash" not in config.get("tools", ()):
        config["tools"] = tuple(config.get("tools", DEFAULT_TOOLS)) + ("bash",)
    if encoding is not None:
        config["encoding"] = encoding
    try:
        limits = loaded.spec.limits.model_copy(update=overrides)
        limits = type(limits).model_validate(limits.model_dump())
        env_config = EnvConfig(**config)
    except ValidationError as exc:
        raise ValueError(str(exc)) from None
    if env_config.sandbox in ("bwrap", "landlock"):
        resolve(env_config.sandbox)  # fail at make(), not at the first reset()
    return DebugEnv(loaded, limits, env_config)
