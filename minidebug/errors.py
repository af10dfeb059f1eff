"""The exception hierarchy.

Two channels (as in inspect_ai): a `ToolError` is shown to the agent as its
observation and the episode goes on; anything else propagates to the caller.
"""


class MinidebugError(Exception):
    """Base class of every error minidebug raises on purpose."""


class TaskError(MinidebugError):
    """A task folder is missing, malformed or inconsistent."""


class WorkspaceError(MinidebugError):
    """A worktree, virtualenv or cache could not be built or used."""


class ToolError(MinidebugError):
    """A bad tool call; the message becomes the agent's observation."""


class UsageError(MinidebugError, ValueError):
    """Options that cannot work together or are out of range (the CLI exits 2 with the message)."""
