"""One episode's files: a git worktree of the task's base commit, reset in milliseconds.

The layout of an episode's temp dir:
    <tmp>/minidebug-ep-XXXX/work-XXXX   the worktree the agent sees (unique name: git names worktrees by it)
    <tmp>/minidebug-ep-XXXX/home        HOME of the debugged program
    <tmp>/minidebug-ep-XXXX/tmp         TMPDIR of the debugged program
    <tmp>/minidebug-ep-XXXX/eval        the eval tree, while an eval runs (see evaltree.py)
    <tmp>/minidebug-ep-XXXX/owner       pid and start time of the process that made it
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path, PurePosixPath

from ..errors import ToolError, WorkspaceError
from ..sandbox.reaper import owned_temp_dir
from ..store.cache import PreparedTask
from ..store.gitcmd import git
from ..store.locks import file_lock
from ..store.removal import remove_tree
from ..store.venv import BUILD_PRODUCTS_EXCLUDE, lay_build_products
from ..tasks.task import Task
from .safefs import read_entry, remove_entry, write_entry
from .untracked import Layout, commit_layout, remove_untracked, restore_folders

EPISODE_PREFIX = "minidebug-ep-"


MAX_CHANGED_FILES = 10_000  # files a text patch may change (and eval lay into its tree)


class Workspace:
    """A worktree with path confinement and read-only/hidden rules.

    Raises:
        WorkspaceError: git could not make the worktree.
    """

    def __init__(self, task: Task, prepared: PreparedTask):
        self.task = task
        self.prepared = prepared
        self.harness = task.harness.with_test_files(frozenset(prepared.test_files))
        self.dir = owned_temp_dir(EPISODE_PREFIX)
        self.root = self.dir / f"work-{self.dir.name[len(EPISODE_PREFIX):]}"
        self.home = self.dir / "home"
        self.tmp = self.dir / "tmp"
        self._closed = False
        self._admin: Path | None = None  # git's record of the worktree, in the bare repo
        self._git_options: tuple[str, ...] = ()
        self._layout: Layout | None = None  # the base commit's folders and files (see untracked.py)
        self.last_read = ""  # a digest of what the last text_changes() read (see `_digest`)
        self.last_changes: list[tuple[str, str, tuple[str, bytes, int] | None]] = []  # and what it read
        try:
            self.home.mkdir()
            self.tmp.mkdir()
            with self._admin_lock():
                git(prepared.bare_repo, "worktree", "add", "--quiet", "--detach", str(self.root), prepared.base_commit)
            # Read once, now, while only we have touched it: later, the worktree's `.git` is the agent's.
            self._dot_git = (self.root / ".git").read_text()
            admin = self._admin = Path(self._dot_git.split("gitdir:", 1)[1].strip())
            # The common dir is named too: the admin dir's `commondir` file is the agent's to rewrite.
            self._git_env = {"GIT_DIR": str(admin), "GIT_COMMON_DIR": str(prepared.bare_repo),
                             "GIT_WORK_TREE": str(self.root)}
            excluded = prepared.venv / BUILD_PRODUCTS_EXCLUDE
            # What the install built, laid in below, is never the agent's change.
            self._git_options = ("-c", f"core.excludesFile={excluded}") if excluded.is_file() else ()
            lay_build_products(prepared.venv, self.root)
            self._folder_time = os.stat(self.root).st_mtime_ns  # every folder's time after a reset (see reset)
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
        return git(self.dir, *self._git_options, *args, env={**self._git_env, **(env or {})})

    def reset(self) -> None:
        """Put the worktree back to the base commit: tracked files restored, everything else removed."""
        if self._layout is None:
            self._layout = commit_layout(self.git("ls-tree", "-r", "-t", "-z", self.prepared.base_commit))
        restore_folders(self.root, self._layout)  # walkable again, whatever mode a program gave a folder
        remove_entry(self.dir, self.root.name + "/.git")
        remove_untracked(self.root, self._layout)  # before git, whose clean is slow on deep trees
        try:
            self.git("checkout", "--quiet", "--force", "--detach", self.prepared.base_commit)
            self.git("clean", "-ffdxq")  # -ff: nested repositories the agent made go too
        except WorkspaceError:  # what git cannot walk (paths past PATH_MAX, unreadable folders): start over
            self._empty_worktree()
            self.git("checkout", "--quiet", "--force", "--detach", self.prepared.base_commit)
            self.git("clean", "-ffdxq")
        (self.root / ".git").write_text(self._dot_git)
        lay_build_products(self.venv, self.root)
        restore_folders(self.root, self._layout, self._folder_time)  # modes and times as every episode starts
        for scratch in (self.home, self.tmp):
            remove_entry(self.dir, scratch.name)
            scratch.mkdir()

    def _empty_worktree(self) -> None:
        """Remove everything in the worktree, never following a link and however deep (see remove_tree)."""
        try:
            names = os.listdir(self.root)
        except OSError:
            return
        for name in names:
            remove_entry(self.root, name)

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
        """The agent's changes against the base commit as a text diff, new files included: what eval scores.

        The files eval leaves out (see `text_changes`) are named after the diff, one `... not scored: <path>`
        line each, never shown. Nothing in the worktree's `.gitattributes` can hide a change: the diff is text,
        with no textconv, external diff, or attributes file of the host's. The worktree's index is not touched.
        """
        changes, left_out = self.text_changes()
        patch = ""
        if changes:
            with tempfile.TemporaryDirectory(dir=self.dir, prefix="diff-") as scratch:
                patch = self._text_diff(changes, Path(scratch))
        lines = []
        for rel, reason in left_out:
            if reason == self.ALLOWED_BINARY:
                lines.append(f"Binary file used by eval, not shown: {rel}\n")
            elif reason == self.BINARY:
                lines.append(f"Binary file not scored: {rel}\n")
            else:
                lines.append(f"File not scored: {rel} ({reason})\n")
        return patch + "".join(lines)

    def _text_diff(self, changes: list[tuple[str, str, tuple[str, bytes, int] | None]], scratch: Path) -> str:
        """git's diff of the base commit against the bytes read for `changes`, in a scratch index and object
        folder: no file of the worktree is read again, and none through its `.gitattributes` (an `ident`,
        `eol` or `working-tree-encoding` there would make git show other bytes than eval uses)."""
        env = {**self._git_env, "GIT_INDEX_FILE": str(scratch / "index"), "GIT_ATTR_NOSYSTEM": "1",
               "GIT_OBJECT_DIRECTORY": str(scratch / "objects"),
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.prepared.bare_repo / "objects")}
        no_attributes = ("-c", f"core.attributesFile={os.devnull}")
        (scratch / "objects").mkdir()
        written = [(rel, entry) for status, rel, entry in changes if status != "D" and entry is not None]
        for number, (_, entry) in enumerate(written):
            (scratch / f"blob-{number}").write_bytes(entry[1])
        git(self.dir, "read-tree", self.prepared.base_commit, env=env)
        shas = git(self.dir, "hash-object", "-w", "--no-filters", "--stdin-paths", env=env,
                   stdin="".join(f"{scratch}/blob-{number}\n" for number in range(len(written)))).split()
        info = [f"0 {'0' * 40}\t{rel}\0" for status, rel, _ in changes if status == "D"]
        for (rel, (kind, _, mode)), sha in zip(written, shas):
            git_mode = "120000" if kind == "link" else ("100755" if mode & 0o111 else "100644")
            info.append(f"{git_mode} {sha}\t{rel}\0")
        git(self.dir, "update-index", "-z", "--index-info", env=env, stdin="".join(info))
        return git(self.dir, *no_attributes, "diff", "--cached", "--text", "--no-textconv", "--no-ext-diff",
                   "--no-color", self.prepared.base_commit, env=env)

    BINARY = "binary"
    ALLOWED_BINARY = "a binary file the task allows"

    def text_changes(self) -> tuple[list[tuple[str, str, tuple[str, bytes, int] | None]], list[tuple[str, str]]]:
        """The agent's changes split into the text patch, the only thing eval scores, and what it leaves out.

        Returns (changes, left_out): changes as (status, path, entry) with status "M" or "D" (see `changes`)
        and entry what `safefs.read_entry` read (None for a deletion); left_out as (path, reason). A changed
        file is in the text patch only if a text diff shows it as it is: UTF-8 with no NUL byte. Bytecode
        (`__pycache__/`, `*.pyc`, `*.pyo`), compiled extensions (`*.so`, `*.pyd`) and nested git repositories
        never are; other binary files only where the task's `binary` globs allow them (they reach eval, with
        the reason ALLOWED_BINARY, but no text diff can show them).
        """
        allowed = getattr(self.task, "binary", None)
        changes, left_out = [], []
        changed = self.changes()
        if len(changed) > MAX_CHANGED_FILES:  # never a debugging change; reading each would hold the eval up
            left_out = [(".", f"{len(changed):,} changed files, more than a text patch may hold "
                              f"({MAX_CHANGED_FILES:,}): none is scored")]
            self.last_read, self.last_changes = _digest([], left_out), []
            return [], left_out
        for status, rel in changed:
            entry = None
            reason = None if status == "D" else self._never_scored(rel)
            if status != "D" and reason is None:
                entry = read_entry(self.root, rel)
                if entry is None:
                    reason = "not a regular file, or too large"
                elif entry[0] == "file" and not self._is_text(entry[1]):
                    reason = self.ALLOWED_BINARY if allowed and allowed.match(rel) else self.BINARY
            if reason is None:
                changes.append((status, rel, entry))
            else:
                left_out.append((rel, reason))
        self.last_read, self.last_changes = _digest(changes, left_out), list(changes)
        return changes, left_out

    def put_back(self, changes: list[tuple[str, str, tuple[str, bytes, int] | None]]) -> None:
        """Make the worktree the base with the text patch `changes` (as text_changes() read them) and nothing
        else; no program of the episode may be running."""
        self.reset()
        for status, rel, entry in changes:
            if status == "D":
                remove_entry(self.root, rel)
            elif entry is not None:
                write_entry(self.root, rel, *entry)

    @staticmethod
    def _never_scored(rel: str) -> str | None:
        """Why a changed path never reaches eval, from its name alone (None: its name is fine)."""
        parts = rel.rstrip("/").split("/")
        if not _is_utf8(rel):
            return "a name that is not UTF-8 text"  # no text patch can name it
        if rel.endswith("/") or ".git" in parts:  # git status lists a nested repository as its folder
            return "a nested git repository"
        if "__pycache__" in parts:
            return "bytecode cache"
        if parts[-1].endswith((".pyc", ".pyo")):
            return "bytecode"
        if parts[-1].endswith((".so", ".pyd")) or ".so." in parts[-1]:
            return "compiled extension"
        return None

    @staticmethod
    def _is_text(data: bytes) -> bool:
        if b"\0" in data:
            return False
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

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
        if "\n" in path or "\r" in path:
            raise ToolError("path contains a line break")
        if not _is_utf8(path):
            raise ToolError("path is not UTF-8 text (it holds a lone surrogate)")
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
        read = [read_entry(self.prepared.eval_base, rel) for rel in files] if self.prepared.eval_base.is_dir() else []
        base = [entry for entry in read if entry is not None]
        if base and len(base) == len(read):  # the base's own bytes, kept by the cache: no git process
            changed = [rel for rel, entry in zip(files, base) if not _same_entry(read_entry(self.root, rel), entry)]
        else:
            changed = self.git("diff", "--name-only", "-z", "--no-renames", self.prepared.base_commit, "--",
                               *files, env={"GIT_LITERAL_PATHSPECS": "1"}).split("\0")
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
                remove_tree(self.dir)  # iterative, never following a link: the worktree and whatever a program made
            finally:
                self._forget_worktree()

    def _forget_worktree(self) -> None:
        """Remove git's record of the removed worktree: its admin folder, named when the worktree was made (as
        `git worktree prune` would, without a git process); `prune` where that name is not known."""
        admin = self._admin
        if admin is not None and admin.parent == self.prepared.bare_repo / "worktrees":
            remove_tree(admin)
            return
        try:
            git(self.prepared.bare_repo, "worktree", "prune")
        except WorkspaceError:
            pass

    def _admin_lock(self):
        """Serialises worktree add/remove/prune on the shared bare repo across processes."""
        return file_lock(self.prepared.bare_repo.parent / "worktrees.lock")


def _digest(changes: list[tuple[str, str, tuple[str, bytes, int] | None]], left_out: list[tuple[str, str]]) -> str:
    """A digest of a text patch as text_changes() read it: each path, its status, kind, mode and bytes, and
    what was left out, with why."""
    digest = hashlib.sha256()
    for status, rel, entry in changes:
        kind, data, mode = entry if entry is not None else ("", b"", 0)
        digest.update(f"{status}\0{rel}\0{kind}\0{mode}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    for rel, reason in left_out:
        digest.update(f"left out\0{rel}\0{reason}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _same_entry(entry: tuple[str, bytes, int] | None, base: tuple[str, bytes, int]) -> bool:
    """Whether a worktree entry is what the base has: same kind, bytes and executable bit."""
    if entry is None:
        return False
    return entry[:2] == base[:2] and bool(entry[2] & 0o111) == bool(base[2] & 0o111)


def _is_utf8(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (a name made of bytes that are not UTF-8 holds lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
