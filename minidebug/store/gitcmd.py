"""Git plumbing through GitPython, with an environment that the caller's git config cannot bend."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

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
    ("core.attributesFile", os.devnull),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty value clears the list
    ("commit.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

# What every repository minidebug makes holds as its config, and all it holds. A program (without a sandbox)
# can write a repository's config, `info/attributes` or `config.worktree`, naming filter and textconv drivers
# (which no command-line setting can switch off without knowing their names), includes and extensions; so
# before host-side git runs on one of ours, these are put back as made (see `pin_repository`).
PINNED_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n[gc]\n\tauto = 0\n"
_UNPINNED = ("info/attributes", "config.worktree")
MAX_MESSAGE = 2000  # of git's stderr in an error (a program can make paths thousands of characters long)


def is_bare_repository(folder: Path) -> bool:
    """A bare repo minidebug makes: a `*.git` folder (not a link) with HEAD and objects/."""
    return (folder.name.endswith(".git") and not folder.is_symlink() and (folder / "HEAD").is_file()
            and (folder / "objects").is_dir())


def pin_repository(repo: Path) -> None:
    """Put back a repository's config as minidebug made it (PINNED_CONFIG) if it differs, and remove the
    attribute and per-worktree config files git would read from it. A link in their place is replaced, never
    followed."""
    from .removal import remove_tree

    config = repo / "config"
    try:
        fd = os.open(config, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            current = handle.read(len(PINNED_CONFIG) + 1)
    except OSError:
        current = None
    if current != PINNED_CONFIG:
        fd, staged = tempfile.mkstemp(prefix=".config-", dir=repo)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(PINNED_CONFIG)
            os.replace(staged, config)
        except BaseException:
            Path(staged).unlink(missing_ok=True)
            raise
    for name in _UNPINNED:
        if os.path.lexists(repo / name):
            remove_tree(repo / name)


def _repository(cwd: Path, env: Mapping[str, str] | None) -> Path | None:
    """The repository of ours whose config this git call reads (None for a new or someone else's)."""
    env = env or {}
    for candidate in (env.get("GIT_COMMON_DIR"), env.get("GIT_DIR"), cwd):
        if candidate:
            folder = Path(candidate)
            return folder if is_bare_repository(folder) else None
    return None


def git_environ(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    # GitPython layers this over os.environ; blank out any GIT_* of the caller's.
    env = {k: "" for k in os.environ if k.startswith("GIT_")}
    env.update(_IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ATTR_NOSYSTEM"] = "1"
    env["GIT_ASKPASS"] = ""  # set and empty: no askpass program at all (nor core.askPass, nor SSH_ASKPASS)
    env["GIT_PAGER"] = "cat"
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

    repo = _repository(Path(cwd), env)
    if repo is not None:
        try:
            pin_repository(repo)
        except OSError as exc:
            raise WorkspaceError(f"cannot restore the config of {repo}: {exc}") from None
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
            message = str(exc.stderr).strip()
            if len(message) > MAX_MESSAGE:
                message = message[:MAX_MESSAGE // 2] + " [...] " + message[-MAX_MESSAGE // 2:]
            raise WorkspaceError(f"git {' '.join(args[:3])} failed in {cwd}: {message}") from None
