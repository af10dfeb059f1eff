"""Git plumbing through GitPython, with an environment that the caller's git config cannot bend."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping

from ..errors import WorkspaceError

# A fixed identity and date make the base commit of a task the same on every machine.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "minidebug",
    "GIT_AUTHOR_EMAIL": "minidebug@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00 +0000",
    "GIT_COMMITTER_NAME": "minidebug",
    "GIT_COMMITTER_EMAIL": "minidebug@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00 +0000",
}

_NO_PROGRAMS = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.sshCommand", "false"),
    ("diff.external", ""),
    ("core.pager", "cat"),
    ("protocol.ext.allow", "never"),
)


def git_environ(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    # GitPython layers this over os.environ; blank out any GIT_* of the caller's.
    env = {k: "" for k in os.environ if k.startswith("GIT_")}
    env.update(_IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Whatever a repository's own config says, git runs no program of its choosing on the host.
    for index, (key, value) in enumerate(_NO_PROGRAMS):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(len(_NO_PROGRAMS))
    if extra:
        env.update(extra)
    return env


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None) -> str:
    """Run `git args...` in cwd and return its stdout.

    Raises:
        WorkspaceError: git exited non-zero (its stderr is in the message).
    """
    from git.cmd import Git
    from git.exc import GitCommandError

    with tempfile.TemporaryFile() as istream:
        if stdin is not None:
            istream.write(stdin.encode())
            istream.seek(0)
        try:
            return Git(str(cwd)).execute(
                ["git", *args],
                env=git_environ(env),
                istream=istream if stdin is not None else None,
                strip_newline_in_stdout=False,
            )
        except GitCommandError as exc:
            raise WorkspaceError(f"git {' '.join(args[:3])} failed in {cwd}: {str(exc.stderr).strip()}") from None
