"""Read-only file tools: view, listdir, grep."""

from __future__ import annotations

import os
import re
from typing import Optional

from pydantic import Field

from ..errors import ToolError
from ..workspace.safefs import read_entry
from .base import Arguments, Episode, Tool, read_bytes

VIEW_WINDOW = 200
MAX_GREP_BYTES = 64 * 1024 * 1024  # read at most this much text in one grep
MAX_LISTING = 400
MAX_MATCHES = 200


class View(Tool):
    name = "view"
    description = (
        "Show a file with line numbers. Optional start/end (1-based, inclusive) pick a window; "
        f"without them the first {VIEW_WINDOW} lines are shown."
    )

    class Args(Arguments):
        path: str = Field(description="file path relative to the project root")
        start: Optional[int] = Field(None, description="first line to show (1-based)")
        end: Optional[int] = Field(None, description="last line to show (inclusive)")

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
        path: Optional[str] = Field(None, description="folder relative to the project root")
        depth: Optional[int] = Field(None, description="how many levels to show (default 2)")

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
        count = 0

        def walk(folder, prefix, level):
            nonlocal count
            try:
                entries = sorted(os.scandir(folder), key=lambda e: (not e.is_dir(follow_symlinks=False), e.name))
            except OSError:
                return
            for entry in entries:
                child = os.path.relpath(entry.path, workspace.root).replace(os.sep, "/")
                if workspace.is_hidden(child):
                    continue
                if count >= MAX_LISTING:
                    return
                count += 1
                is_dir = entry.is_dir(follow_symlinks=False)
                lines.append(f"{prefix}{entry.name}{'/' if is_dir else ''}")
                if is_dir and level < depth:
                    walk(entry.path, prefix + "  ", level + 1)

        walk(top, "  ", 1)
        if count >= MAX_LISTING:
            lines.append(f"[listing stopped at {MAX_LISTING} entries; list a subfolder]")
        return "\n".join(lines)


class Grep(Tool):
    name = "grep"
    description = (
        "Search the project's files for a string (or a Python regex with regex=true); "
        "prints file:line: text for each match. Optional path narrows the search."
    )

    class Args(Arguments):
        pattern: str = Field(description="text to look for")
        path: Optional[str] = Field(None, description="file or folder to search (default: the whole project)")
        regex: Optional[bool] = Field(None, description="treat pattern as a regular expression")

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
        texts = list(self._texts(episode, rel))
        if args.regex:
            total, found = _regex_search(args.pattern, texts, episode.limits.command_timeout)
        else:
            found = [(name, number, line) for name, text in texts
                     for number, line in enumerate(text.splitlines(), 1) if args.pattern in line]
            total = len(found)
        matches = [f"{name}:{number}: {line[:300]}" for name, number, line in found[:MAX_MATCHES]]
        if not matches:
            return f"no matches for {args.pattern!r}"
        more = f"\n[{total - len(matches)} more matches not shown; narrow the search]" if total > len(matches) else ""
        return "\n".join(matches) + more

    @classmethod
    def _texts(cls, episode: Episode, rel: str):
        """(path, text) of each regular text file to search; FIFOs, devices and the like are never opened."""
        workspace = episode.workspace
        budget = MAX_GREP_BYTES
        for file_rel in cls._files(episode, rel):
            target = workspace.path(file_rel)
            if target.is_symlink():  # inside the project (checked by _files): read what it points at
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
    def _files(episode: Episode, rel: str):
        workspace = episode.workspace
        top = workspace.path(rel)
        if top.is_file():
            yield rel
            return
        for dirpath, dirnames, filenames in os.walk(top):
            here = os.path.relpath(dirpath, workspace.root).replace(os.sep, "/")
            prefix = "" if here == "." else here + "/"
            dirnames[:] = sorted(d for d in dirnames if not workspace.is_hidden(prefix + d))
            for name in sorted(filenames):
                child = prefix + name
                if workspace.is_hidden(child):
                    continue
                if os.path.islink(os.path.join(dirpath, name)) and not workspace.contains(workspace.path(child)):
                    continue  # a symlink out of the project
                yield child


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
