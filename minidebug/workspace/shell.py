"""A shell command (or argv) run in an episode's worktree: inside its venv, confined like every program."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.confinement import Confinement
from .worktree import Workspace


@dataclass(frozen=True)
class ExecResult:
    """How a command ended.

    Attributes:
        returncode: its exit status (negative: killed by that signal; None: killed at the deadline).
        output: stdout and stderr merged, followed by a line naming a timeout or a resource limit it hit.
        timed_out: it was killed at the deadline.
    """

    returncode: int | None
    output: str
    timed_out: bool


def run_command(workspace: Workspace, confinement: Confinement, command: str | Sequence[str], timeout: float, *,
                cwd: str = ".", env: Mapping[str, str] | None = None, stdin: bytes | None = None,
                writable: Sequence[Path] = ()) -> ExecResult:
    """Run `command` (a string for `bash -c`, or an argv) in the worktree folder `cwd`.

    `env` adds variables to the episode's allowlisted environment; a PATH there goes before the episode's
    own. `stdin` is fed from a file in the episode's TMPDIR. `writable` names more folders inside the
    episode that the command may write.

    Raises:
        ToolError: `cwd` is outside the worktree.
        ValueError: a `writable` folder is outside the episode.
    """
    for folder in writable:
        if workspace.dir not in Path(folder).parents:
            raise ValueError(f"{folder}: not inside the episode's folder")
    folder = workspace.root / workspace.relative(cwd) if cwd not in ("", ".") else workspace.root
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    if stdin is not None:
        feed = workspace.tmp / "exec-stdin"
        feed.write_bytes(stdin)
        argv = ["bash", "-c", 'exec "$@" < "$0"', str(feed), *argv]
    environ = workspace.environ()
    extra = dict(env or {})
    if "PATH" in extra:
        extra["PATH"] = f"{extra['PATH']}:{environ['PATH']}"
    environ.update(extra)
    completed, text = confinement.run(argv, cwd=folder, env=environ, timeout=timeout,
                                      writable=[*workspace.writable_dirs, *writable])
    return ExecResult(completed.returncode, text, completed.timed_out)
