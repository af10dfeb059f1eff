"""What a tool is: a name, a description, a pydantic model of its arguments and a `run`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ToolError
from ..workspace.safefs import read_entry
from .output import ToolOutput

if TYPE_CHECKING:
    from ..runner.starts import Starts
    from ..sandbox.confinement import Confinement
    from ..scoring.evaluate import EvalResult
    from ..tasks.spec import Limits
    from ..tasks.task import Task
    from ..workspace.shell import ExecResult
    from ..workspace.worktree import Workspace

MAX_TEXT_ARGUMENT = 1_000_000  # characters in any one string argument


class Episode(Protocol):
    """What a tool may use of the episode it runs in."""

    task: Task
    workspace: Workspace
    limits: Limits
    confinement: Confinement

    def starts(self) -> list[Starts]:
        """The ways the episode's next program (a pdb session, a probe run) may start, in the order to try
        them; the last always starts it (see runner/starts.py)."""

    def evaluate(self) -> EvalResult: ...

    def end_programs(self) -> None:
        """Stop every program of the episode (see `DebugEnv.end_programs`)."""

    def exec(self, command: str, timeout: float | None = None) -> ExecResult:
        """Run a shell command in the worktree, confined (see `DebugEnv.exec`)."""

    def file_edited(self, rel: str, before: str, after: str) -> None:
        """The text of `rel` changed from before to after (tools that track lines follow it)."""

    def breakpoint_lines(self, rel: str) -> set[int]:
        """Lines of `rel` that hold a pdb breakpoint."""


class Arguments(BaseModel):
    """Base of every tool's arguments: strict types, no unknown keys."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Tool:
    """A tool; subclasses set `name`, `description`, `Args` and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[Arguments]] = Arguments

    def parse(self, arguments: Any) -> Arguments:
        """Validate raw arguments.

        Raises:
            ToolError: unknown, missing or mistyped arguments (all of them listed).
        """
        for key, value in dict(arguments).items():
            if isinstance(value, str) and len(value) > MAX_TEXT_ARGUMENT:
                raise ToolError(f"{self.name}: argument {key!r} is too long ({len(value)} characters; "
                                f"at most {MAX_TEXT_ARGUMENT})")
        try:
            return self.Args.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                field = ".".join(str(p) for p in error["loc"]) or "arguments"
                message = "unknown argument" if error["type"] == "extra_forbidden" else error["msg"]
                problems.append(f"{field!r}: {message}")
            expected = ", ".join(self.Args.model_fields) or "none"
            raise ToolError(f"{self.name}: bad arguments: {'; '.join(problems)} (expected: {expected})") from None

    def run(self, episode: Episode, args: Any) -> ToolOutput | str:
        """Carry out one call with validated arguments; a ToolError becomes the agent's observation."""
        raise NotImplementedError

    # Hooks: the env calls each on every enabled tool; a tool that keeps state overrides them.
    def reset(self, episode: Episode, keep_breakpoints: bool) -> None:
        """The episode is about to go back to the base commit (its files are still the agent's)."""

    def warm_up(self, episode: Episode) -> None:
        """The episode was reset and runs warm: start ahead, in the background, what makes the next call fast
        (pdb: its next session)."""

    def close(self) -> None:
        """The episode ends, or the tool is taken away: stop whatever the tool started. Idempotent."""

    def file_edited(self, episode: Episode, rel: str, before: str, after: str) -> None:
        """The text of `rel` changed from `before` to `after` through a tool."""

    def breakpoint_lines(self, episode: Episode, rel: str) -> set[int]:
        """Lines of `rel` the tool marks (pdb: its breakpoints), shown by `view`."""
        return set()

    def json_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, as pydantic writes it."""
        return self.Args.model_json_schema()


def read_bytes(root: Path, rel: str, shown: str) -> bytes:
    """A worktree file's bytes (read without following any link), or a ToolError saying why not."""
    path = root / rel
    if path.is_dir():
        raise ToolError(f"{shown}: is a directory (use listdir)")
    entry = read_entry(root, rel) if rel != "." else None
    if entry is None or entry[0] != "file":
        raise ToolError(f"{shown}: no such file" if not path.exists() else f"{shown}: not a regular file")
    if b"\0" in entry[1][:8192]:
        raise ToolError(f"{shown}: binary file")
    return entry[1]
