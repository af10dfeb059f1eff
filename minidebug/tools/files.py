"""Read-only file tools: view, listdir, grep."""

from __future__ import annotations

import os
import re

from pydantic import Field

from ..errors import ToolError
from ..workspace.safefs import open_parent, read_entry
from .base import Arguments, Episode, Tool, read_bytes

VIEW_WINDOW = 200
MAX_GREP_BYTES = 64 * 1024 * 1024  # read at most this much text in one grep
MAX_LISTING = 400
MAX_MATCHES = 200
MAX_WALK_DEPTH = 64  # folder levels a listing or search goes down
MAX_WALK_ENTRIES = 100_000  # files and folders one search looks at
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class View(Tool):
    name = "view"
    description = (
        "Show a file with line numbers. Optional start/end (1-based, inclusive) pick a window; "
        f"without them the first {VIEW_WINDOW} lines are shown."
    )

    class Args(Arguments):
        path: str = Field(description="file path relative to the project root")
        start: int | None = Field(None, description="first line to show (1-based)")
        end: int | None = Field(None, description="last line to show (inclusive)")

    def run(self, episode: Episode, args: Args) -> str:
        rel = episode.workspace.relative(args.path)
        lines = read_bytes(episode.workspace.root, rel, args.path).decode("utf-8", errors="replace").splitlines()
        total = len(lines)
        if total == 0:
            return f"{rel} is empty."
        start = args.start if args.start is not None else 1
        end = args.end if args.end is not None else start + VIEW_WINDOW - 1
        if start < 1 or end < start:
            raise ToolError(f"view: need 1 <= start <= end (got start={start}, end={end})")
        if start > total:
            raise ToolError(f"view: {rel} has {total} lines; start={start} is past the end")
        end = min(end, total)
        marks = episode.breakpoint_lines(rel)
        width = len(str(end))
        body = "\n".join(
            f"{n:>{width}}{'B' if n in marks else ' '} {lines[n - 1]}" for n in range(start, end + 1)
        )
        header = f"{rel} (lines {start}-{end} of {total})" if (start, end) != (1, total) else f"{rel} ({total} lines)"
        return f"{header}\n{body}"


class Listdir(Tool):
    name = "listdir"
    description = "List the project's files as a tree. Optional path (default: the root) and depth (default 2)."

    class Args(Arguments):
        path: str | None = Field(None, description="folder relative to the project root")
        depth: int | None = Field(None, description="how many levels to show (default 2)")

    def run(self, episode: Episode, args: Args) -> str:
        workspace = episode.workspace
        rel = workspace.relative(args.path or ".")
        depth = 2 if args.depth is None else args.depth
        if depth < 1:
            raise ToolError("listdir: depth must be at least 1")
        top = workspace.path(rel)
        if not top.is_dir():
            raise ToolError(f"{args.path}: not a directory")
        lines = [f"{rel}/" if rel != "." else "./"]
        walk = Walk(episode, rel, min(depth, MAX_WALK_DEPTH), MAX_LISTING, dirs_first=True)
        for child, level, is_dir in walk:
            lines.append(f"{'  ' * level}{child.rsplit('/', 1)[-1]}{'/' if is_dir else ''}")
        if walk.entries_cut:
            lines.append(f"[listing stopped at {MAX_LISTING} entries; list a subfolder]")
        if walk.depth_cut and depth > MAX_WALK_DEPTH:
            lines.append(f"[folders more than {MAX_WALK_DEPTH} levels deep are not listed; list a subfolder]")
        return "\n".join(lines)


class Grep(Tool):
    name = "grep"
    description = (
        "Search the project's files for a string (or a Python regex with regex=true); "
        "prints file:line: text for each match. Optional path narrows the search."
    )

    class Args(Arguments):
        pattern: str = Field(description="text to look for")
        path: str | None = Field(None, description="file or folder to search (default: the whole project)")
        regex: bool | None = Field(None, description="treat pattern as a regular expression")

    def run(self, episode: Episode, args: Args) -> str:
        workspace = episode.workspace
        if not args.pattern:
            raise ToolError("grep: empty pattern")
        if len(args.pattern) > 1000:
            raise ToolError("grep: pattern longer than 1000 characters")
        if args.regex:
            try:
                re.compile(args.pattern)
            except (re.error, RecursionError, OverflowError) as exc:
                raise ToolError(f"grep: bad regex: {exc}") from None
        rel = workspace.relative(args.path or ".")
        notes: list[str] = []
        texts = list(self._texts(episode, rel, notes))
        if args.regex:
            total, found = _regex_search(args.pattern, texts, episode.limits.command_timeout)
        else:
            found = [(name, number, line) for name, text in texts
                     for number, line in enumerate(text.splitlines(), 1) if args.pattern in line]
            total = len(found)
        matches = [f"{name}:{number}: {line[:300]}" for name, number, line in found[:MAX_MATCHES]]
        capped = "".join(f"\n{note}" for note in notes)
        if not matches:
            return f"no matches for {args.pattern!r}{capped}"
        more = f"\n[{total - len(matches)} more matches not shown; narrow the search]" if total > len(matches) else ""
        return "\n".join(matches) + more + capped

    @classmethod
    def _texts(cls, episode: Episode, rel: str, notes: list[str]):
        """(path, text) of each regular text file to search; FIFOs, devices and the like are never opened.
        A note for each limit the search ran into is added to `notes`."""
        workspace = episode.workspace
        budget = MAX_GREP_BYTES
        for file_rel in cls._files(episode, rel, notes):
            target = workspace.path(file_rel)
            try:
                is_link = target.is_symlink()
            except OSError:
                continue
            if is_link:  # inside the project (checked by _files): read what it points at
                try:
                    resolved = workspace.relative(file_rel)
                except ToolError:
                    continue
            else:
                resolved = file_rel
            entry = read_entry(workspace.root, resolved) if resolved != "." else None
            if entry is None or entry[0] != "file" or b"\0" in entry[1][:8192]:
                continue
            budget -= len(entry[1])
            if budget < 0:
                return
            yield file_rel, entry[1].decode("utf-8", errors="replace")

    @staticmethod
    def _files(episode: Episode, rel: str, notes: list[str]):
        workspace = episode.workspace
        top = workspace.path(rel)
        if top.is_file():
            yield rel
            return
        walk = Walk(episode, rel, MAX_WALK_DEPTH, MAX_WALK_ENTRIES, dirs_first=False)
        for child, _, is_dir in walk:
            if is_dir:
                continue
            try:
                if workspace.path(child).is_symlink() and not workspace.contains(workspace.path(child)):
                    continue  # a symlink out of the project
            except OSError:  # a path too long to look up by name
                continue
            yield child
        if walk.depth_cut:
            notes.append(f"[folders more than {MAX_WALK_DEPTH} levels deep were not searched; give a path]")
        if walk.entries_cut:
            notes.append(f"[the search stopped after {MAX_WALK_ENTRIES} files and folders; give a path]")


class Walk:
    """The entries under folder `rel` of the worktree, depth first, without recursion and without following
    links; iterate for (rel, level, is_dir), level 1 being rel's own entries. Hidden entries are left out.
    Folders at level `max_depth` are not entered (then `depth_cut`); after `max_entries` entries the walk
    stops (then `entries_cut`). A folder that cannot be opened is passed over."""

    def __init__(self, episode: Episode, rel: str, max_depth: int, max_entries: int, dirs_first: bool):
        self.workspace = episode.workspace
        self.rel, self.max_depth, self.max_entries, self.dirs_first = rel, max_depth, max_entries, dirs_first
        self.depth_cut = self.entries_cut = False

    def __iter__(self):
        stack = [iter(self._entries(self.rel))]
        count = 0
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                continue
            child, is_dir = item
            if count >= self.max_entries:
                self.entries_cut = True
                return
            count += 1
            level = len(stack)
            yield child, level, is_dir
            if is_dir:
                if level < self.max_depth:
                    stack.append(iter(self._entries(child)))
                else:
                    self.depth_cut = True

    def _entries(self, folder: str) -> list[tuple[str, bool]]:
        """(rel, is_dir) of folder's visible entries, sorted; the folder is opened without following a link."""
        root = self.workspace.root
        try:
            if folder == ".":
                fd = os.open(root, _DIR_FLAGS)
            else:
                with open_parent(root, folder) as (parent, name):
                    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            return []
        try:
            with os.scandir(fd) as scan:
                found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan]
        except OSError:
            return []
        finally:
            os.close(fd)
        prefix = "" if folder == "." else folder + "/"
        found.sort(key=(lambda e: (not e[1], e[0])) if self.dirs_first else (lambda e: (e[1], e[0])))
        return [(prefix + name, is_dir) for name, is_dir in found if not self.workspace.is_hidden(prefix + name)]


_REGEX_SEARCH = """
import json, re, sys
search, limit = re.compile(sys.argv[1]).search, int(sys.argv[2])
total, shown = 0, []
for name, text in json.load(sys.stdin):
    for number, line in enumerate(text.splitlines(), 1):
        if search(line):
            total += 1
            if len(shown) < limit:
                shown.append([name, number, line])
json.dump([total, shown], sys.stdout)
"""


def _regex_search(pattern: str, texts: list[tuple[str, str]], timeout: float) -> tuple[int, list]:
    """Run the regex in a child process with a deadline: a pattern that backtracks without end (`(a+)+$`)
    costs its own time limit, never the host's GIL."""
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _REGEX_SEARCH, pattern, str(MAX_MATCHES)],
                              input=json.dumps(texts), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"grep: the regex search ran past {timeout:g} s and was stopped; simplify the pattern "
                        "(nested repeats like (a+)+ backtrack without end)") from None
    if done.returncode != 0:
        raise ToolError(f"grep: the regex search failed: {done.stderr.strip()[-300:]}")
    total, shown = json.loads(done.stdout)
    return total, [tuple(item) for item in shown]
