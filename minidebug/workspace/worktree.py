"""One episode's files: a git worktree of the task's base commit, reset in milliseconds.

The layout of an episode's temp dir:
    <tmp>/minidebug-ep-XXXX/work-XXXX   the worktree the agent sees (unique name: git names worktrees by it)
    <tmp>/minidebug-ep-XXXX/home        HOME of the debugged program
    <tmp>/minidebug-ep-XXXX/tmp         TMPDIR of the debugged program
    <tmp>/minidebug-ep-XXXX/eval        the eval tree, while an eval runs (see evaltree.py)
    <tmp>/minidebug-ep-XXXX/owner       pid and start time of the process that made it
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from ..store.cache import PreparedTask
from ..errors import ToolError, WorkspaceError
from ..store.gitcmd import git
from ..store.locks import file_lock
from ..sandbox.reaper import start_time
from .safefs import remove_entry
from ..tasks.task import Task

EPISODE_PREFIX = "minidebug-ep-"
OWNER_FILE = "owner"  # "<pid> <start time>" of the process that made the episode, for `minidebug gc`


class Workspace:
    """A worktree with path confinement and read-only/hidden rules.

    Raises:
        WorkspaceError: git could not make the worktree.
    """

    def __init__(self, task: Task, prepared: PreparedTask):
        self.task = task
        self.prepared = prepared
        self.harness = task.harness.with_test_files(frozenset(prepared.test_files))
        self.dir = Path(tempfile.mkdtemp(prefix=EPISODE_PREFIX)).resolve()
        self.root = self.dir / f"work-{self.dir.name[len(EPISODE_PREFIX):]}"
        self.home = self.dir / "home"
        self.tmp = self.dir / "tmp"
        self._closed = False
        try:
            self.home.mkdir()
            self.tmp.mkdir()
            (self.dir / OWNER_FILE).write_text(f"{os.getpid()} {start_time()}")
            with self._admin_lock():
                git(prepared.bare_repo, "worktree", "add", "--quiet", "--detach", str(self.root), prepared.base_commit)
            # Read once, now, while only we have touched it: later, the worktree's `.git` is the agent's.
            self._dot_git = (self.root / ".git").read_text()
            admin = Path(self._dot_git.split("gitdir:", 1)[1].strip())
            self._git_env = {"GIT_DIR": str(admin), "GIT_WORK_TREE": str(self.root)}
        except BaseException:
            self.close()
            raise

    @property
    def venv(self) -> Path:
        return self.prepared.venv

    @property
    def drivers(self) -> Path:
        return self.prepared.drivers

    @property
    def writable_dirs(self) -> list[Path]:
        """What the agent's programs may write: the worktree, their HOME and their TMPDIR."""
        return [self.root, self.home, self.tmp]

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        """git on the worktree through its admin dir: nothing the agent put in the worktree's `.git` is read."""
        return git(self.dir, *args, env={**self._git_env, **(env or {})})

    def reset(self) -> None:
        """Put the worktree back to the base commit: tracked files restored, everything else removed."""
        remove_entry(self.dir, self.root.name + "/.git")
        self.git("checkout", "--quiet", "--force", "--detach", self.prepared.base_commit)
        self.git("clean", "-ffdxq")  # -ff: nested repositories the agent made go too
        (self.root / ".git").write_text(self._dot_git)
        for scratch in (self.home, self.tmp):
            remove_entry(self.dir, scratch.name)
            scratch.mkdir()

    def changes(self) -> list[tuple[str, str]]:
        """The agent's changes against the base as (status, path): "M" modified or added, "D" deleted."""
        out = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                       "--ignore-submodules=all")
        found = []
        for entry in filter(None, out.split("\0")):
            code, rel = entry[:2], entry[3:]
            found.append(("D" if "D" in code else "M", rel))
        return found

    def environ(self, *python_paths: Path) -> dict[str, str]:
        """The allowlisted environment for a program of this episode (see process.episode_environ).

        python_paths go first on PYTHONPATH; for a `[source]` task the worktree (and its src/, if any)
        follow, so that the project is imported from the worktree, not from what setup installed; the
        episode's pip layer comes last.
        """
        from ..sandbox.process import episode_environ

        paths = [str(p) for p in python_paths]
        if self.task.spec.source is not None:
            paths += [str(self.root), str(self.root / "src")]
        env = episode_environ(self.venv, self.home, self.tmp)
        env["PIP_TARGET"] = str(self.pip_layer)  # `pip install` never writes the shared venv
        env["PYTHONPATH"] = ":".join(paths + [str(self.pip_layer)])
        return env

    @property
    def pip_layer(self) -> Path:
        """Where the agent's own `pip install`s go (removed at reset; eval never sees it)."""
        return self.home / ".site-packages"

    def diff(self) -> str:
        """The unified diff of the worktree against the base commit, new files included."""
        self.git("add", "--all", "--intent-to-add")
        return self.git("diff", "--no-color", "--no-ext-diff", self.prepared.base_commit)

    def base_text(self, rel: str) -> str | None:
        """A file's text at the base commit (None if it is not there)."""
        try:
            return self.git("show", f"{self.prepared.base_commit}:{rel}")
        except WorkspaceError:
            return None

    # -- paths ---------------------------------------------------------------------------
    def relative(self, path: str) -> str:
        """Check an agent-given path and return it as a normalised worktree-relative POSIX path.

        Raises:
            ToolError: the path is absolute, escapes the worktree (`..`, a symlink), or is hidden.
        """
        if not isinstance(path, str):
            raise ToolError("path must be a string")
        if "\0" in path:
            raise ToolError("path contains a NUL byte")
        if len(path) > 4096:
            raise ToolError("path is too long")
        if os.path.isabs(path):
            raise ToolError(f"{path}: absolute paths are not allowed; use a path relative to the project root")
        posix = PurePosixPath(path.replace("\\", "/"))
        if ".." in posix.parts:
            raise ToolError(f"{path}: '..' is not allowed; paths stay inside the project")
        rel = posix.as_posix()
        rel = "." if rel in ("", ".") else rel
        try:
            resolved = (self.root / rel).resolve()
        except (OSError, RuntimeError) as exc:  # symlink loops, names too long
            raise ToolError(f"{path}: cannot resolve: {exc}") from None
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"{path}: resolves outside the project")
        resolved_rel = "." if resolved == self.root else resolved.relative_to(self.root).as_posix()
        for candidate in {rel, resolved_rel}:
            if self.is_hidden(candidate):
                raise ToolError(f"{path}: no such file or directory")
        return resolved_rel

    def path(self, rel: str) -> Path:
        return self.root / rel

    def contains(self, path: Path) -> bool:
        """True if path, with symlinks resolved, lies inside the worktree."""
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            return False
        return resolved == self.root or self.root in resolved.parents

    def is_hidden(self, rel: str) -> bool:
        first = rel.split("/", 1)[0]
        return first == ".git" or (rel != "." and self.task.hidden.match(rel))

    def is_readonly(self, rel: str) -> bool:
        return rel in self.prepared.readonly_files or self.task.readonly.match(rel)

    def writable(self, path: str) -> str:
        """Like `relative`, and also refuse read-only files, test-harness files and folders."""
        rel = self.relative(path)
        if rel == "." or self.is_readonly(rel):
            raise ToolError(f"{path}: read-only; the agent may view and run it but not edit it")
        if self.harness.owns(rel):
            raise ToolError(f"{path}: read-only: it configures how the tests run, which belongs to the task")
        if self.path(rel).is_dir():
            raise ToolError(f"{path}: is a directory")
        return rel

    # -- eval support ---------------------------------------------------------------------
    def restore_readonly(self) -> list[str]:
        """Put back any read-only file that was changed behind the tools' back; returns their paths."""
        files = list(self.prepared.readonly_files)
        if not files:
            return []
        changed = self.git("diff", "--name-only", "-z", "--no-renames", self.prepared.base_commit, "--", *files,
                           env={"GIT_LITERAL_PATHSPECS": "1"}).split("\0")
        changed = [rel for rel in changed if rel]
        for rel in changed:
            remove_entry(self.root, rel)  # a symlink or folder put in its place is removed, never followed
        if changed:
            self.git("checkout", "--quiet", self.prepared.base_commit, "--", *changed,
                     env={"GIT_LITERAL_PATHSPECS": "1"})
        return changed

    # -- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        """Remove the worktree and the episode's temp dir. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with self._admin_lock():
            try:
                if self.root.exists():
                    git(self.prepared.bare_repo, "worktree", "remove", "--force", str(self.root))
            except WorkspaceError:
                pass
            finally:
                shutil.rmtree(self.dir, ignore_errors=True)
                try:
                    git(self.prepared.bare_repo, "worktree", "prune")
                except WorkspaceError:
                    pass

    def _admin_lock(self):
        """Serialises worktree add/remove/prune on the shared bare repo across processes."""
        return file_lock(self.prepared.bare_repo.parent / "worktrees.lock")
