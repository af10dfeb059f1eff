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
        result = episode.exec(args.command)
        text = result.output.rstrip()
        if result.returncode not in (0, None):
            text += f"\n[exit code {result.returncode}]"
        return text or "[no output]"
