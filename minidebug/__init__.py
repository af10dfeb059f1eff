"""minidebug: a small, fast, container-free interactive debugging environment for LLM agents.

    import minidebug
    with minidebug.make("sum_tree") as env:
        obs, info = env.reset()
        obs, reward, terminated, truncated, info = env.step({"name": "view", "arguments": {"path": "tree.py"}})

Heavy modules load on first use, so `import minidebug` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .core.calls import ToolCall
from .errors import MinidebugError, TaskError, ToolError, UsageError, WorkspaceError

if TYPE_CHECKING:
    from .core.config import EnvConfig
    from .core.env import DebugEnv
    from .core.interface import Env
    from .core.make import make
    from .runner.pool import WarmPool, shared_pool
    from .tasks.spec import Limits
    from .tasks.task import Task, load_task
    from .tools.output import ToolOutput

__version__ = "0.1.0"

_LAZY = {"make": "minidebug.core.make", "DebugEnv": "minidebug.core.env", "EnvConfig": "minidebug.core.config",
         "Task": "minidebug.tasks.task", "Limits": "minidebug.tasks.spec", "load_task": "minidebug.tasks.task",
         "ToolOutput": "minidebug.tools.output", "WarmPool": "minidebug.runner.pool",
         "shared_pool": "minidebug.runner.pool",
         "Env": "minidebug.core.interface"}

__all__ = ["make", "load_task", "DebugEnv", "Env", "EnvConfig", "ToolCall", "ToolOutput", "Task", "Limits", "WarmPool",
           "shared_pool",
           "MinidebugError", "TaskError", "WorkspaceError", "ToolError", "UsageError"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'minidebug' has no attribute {name!r}")
