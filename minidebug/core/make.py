"""`make()`: an env from a task and keyword options.

Each option is documented once, where it is defined: the fields of `Limits` and `EnvConfig` carry their
descriptions, and `make()`'s docstring is built from them at import; the few options that are no field are
described in `NOT_FIELDS`. `options_table()` renders the same rows as README's options table.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from ..errors import UsageError
from ..runner.pool import WarmPool
from ..sandbox.choose import require
from ..tasks.spec import Limits
from ..tasks.task import Task, load_task
from ..tools import DEFAULT_TOOLS
from .config import EnvConfig
from .env import DebugEnv

# make()'s options that are no field of Limits or EnvConfig.
NOT_FIELDS = {
    "task": "Path of a task folder (task.toml and repo/, or a debug-gym folder), name of a bundled task, or a "
            "loaded `Task`.",
    "bash": "Also offer the `bash` tool (added to `tools`). Default False.",
    "warm_pool": "A `minidebug.WarmPool` whose warm eval interpreters the env borrows, one per eval (fork mode; "
                 "see [How it works](#how-it-works)): they outlive the env, so the next env of the same venv and "
                 "settings finds one waiting and its first eval skips the interpreter start and the imports. "
                 "Default None: the process's shared pool (`minidebug.shared_pool()`), whose rooms outlive envs "
                 "too.",
    "requirements": "More pip requirements for the task's venv (e.g. a package a debug-gym folder needs); a "
                    "venv with them is built once and cached, and the task's content hash includes them. "
                    "Default: none.",
}


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
    strict: bool = False,
    reward: str = "fraction",
    eval_mode: str | None = None,
    requirements: list[str] | tuple[str, ...] = (),
    encoding: str | None = None,
    cache_dir: Any = None,
    warm_pool: WarmPool | None = None,
) -> DebugEnv:
    """Make an env for a task folder, a bundled task name, or a loaded Task.

    The limits (`max_steps` to `processes`) left as None take the task's `[limits]` from task.toml, and
    the defaults below where it sets none; `tools` and `encoding` left as None take their defaults.
    These descriptions are those of the fields of `Limits` and `EnvConfig` (README's options table shows
    the same).

    Args:
        {options}

    Returns:
        A DebugEnv; call `reset()` before `step()`, and `close()` (or use `with`).

    Raises:
        TaskError: the task cannot be found or is malformed.
        WorkspaceError: sandbox="bwrap" or "landlock" and it cannot run here.
        UsageError: a bad option value (e.g. an unknown tool name); the message names the option (a
            UsageError is a ValueError too).
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
                              "cache_dir": cache_dir, "strategy": strategy, "strict": strict,
                              "eval_mode": eval_mode, "reward": reward}
    if tools is not None:
        config["tools"] = tuple(tools)
    if bash and "bash" not in config.get("tools", ()):
        config["tools"] = tuple(config.get("tools", DEFAULT_TOOLS)) + ("bash",)
    if encoding is not None:
        config["encoding"] = encoding
    try:
        limits = type(loaded.spec.limits).model_validate({**loaded.spec.limits.model_dump(), **overrides})
        env_config = EnvConfig(**config)
    except ValidationError as exc:
        raise UsageError(_bad_options(exc, {**overrides, **config})) from None
    require(env_config.sandbox)  # an explicit sandbox that cannot run fails at make(), not at the first reset()
    return DebugEnv(loaded, limits, env_config, warm_pool)


def _bad_options(exc: ValidationError, given: dict[str, Any]) -> str:
    """One line per invalid option: its name, the value given and what is wrong with it."""
    lines = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "?"
        value = repr(given.get(name, error.get("input")))
        value = value if len(value) <= 80 else value[:77] + "..."
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"make(): bad option {name}={value}: {message}")
    return "\n".join(lines)


def option_field(name: str) -> FieldInfo | None:
    """The field of `Limits` or `EnvConfig` that make()'s option `name` sets, if there is one."""
    return Limits.model_fields.get(name) or EnvConfig.model_fields.get(name)


def shown_default(value: Any) -> str:
    """A default as the options table shows it."""
    if isinstance(value, tuple) and value:
        return ", ".join(f"`{item}`" for item in value)
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def option_rows() -> list[tuple[str, str, str]]:
    """(name, default, description) of each of make()'s options, in its signature's order. An option that is
    neither a field nor in `NOT_FIELDS` gets the description "(undocumented)"."""
    rows = []
    for name, parameter in inspect.signature(make).parameters.items():
        field = option_field(name)
        if field is not None:
            rows.append((name, shown_default(field.default), field.description or "(undocumented)"))
        else:
            default = "required" if parameter.default is inspect.Parameter.empty else shown_default(parameter.default)
            rows.append((name, default, NOT_FIELDS.get(name, "(undocumented)")))
    return rows


def options_table() -> str:
    """make()'s options as README's Markdown table: option, default, description."""
    lines = ["| option | default | description |", "|---|---|---|"]
    lines += [f"| `{name}` | {default} | {description} |" for name, default, description in option_rows()]
    return "\n".join(lines)


def _args_section() -> str:
    """The Args entries of make()'s docstring, one per option, wrapped and indented as the docstring is."""
    return "\n".join(textwrap.fill(f"{name}: {description}", width=108, initial_indent=" " * 8,
                                   subsequent_indent=" " * 12, break_on_hyphens=False)
                     for name, _, description in option_rows()).lstrip()


if make.__doc__:  # None under python -OO
    make.__doc__ = make.__doc__.replace("{options}", _args_section())
