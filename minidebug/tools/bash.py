"""bash (off by default): one shell command in the worktree, inside the venv, with a timeout."""

from __future__ import annotations

from pydantic import Field

from ..errors import ToolError
from .base import Arguments, Episode, Tool


class Bash(Tool):
    name = "bash"
    description = "Run one shell command in the project root, inside its virtualenv, with a timeout."

    class Args(Arguments):
        command: str = Field(description="the shell command")

    def run(self, episode: Episode, args: Args) -> str:
        if not args.command.strip():
            raise ToolError("bash: empty command")
        workspace = episode.workspace
        env = workspace.environ()
        timeout = episode.limits.command_timeout
        completed, text = episode.confinement.run(["bash", "-c", args.command], cwd=workspace.root, env=env,
                                                  timeout=timeout, writable=workspace.writable_dirs)
        text = text.rstrip()
        if completed.returncode not in (0, None):
            text += f"\n[exit code {completed.returncode}]"
        return text or "[no output]"
