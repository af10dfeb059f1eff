"""A small reader of unified diffs (the `git diff` / `git apply` format)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[str] = field(default_factory=list)  # each with its ' ', '-' or '+' prefix

    @property
    def old_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def new_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]


@dataclass
class FilePatch:
    old_path: str | None  # None for a new file
    new_path: str | None  # None for a deleted file
    hunks: list[Hunk] = field(default_factory=list)
    no_newline_at_end: bool = False  # the new file lacks a final newline


def _strip_prefix(path: str) -> str | None:
    path = path.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff into per-file hunks.

    Raises:
        ValueError: the text has no file header, or a hunk is malformed.
    """
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = FilePatch(_strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:]))
            patches.append(current)
            hunk = None
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if current is None:
                raise ValueError(f"line {i + 1}: hunk before any file header")
            old_start, old_count, new_start, new_count = match.groups()
            hunk = Hunk(int(old_start), int(old_count or 1), int(new_start), int(new_count or 1))
            current.hunks.append(hunk)
        elif hunk is not None and line[:1] in (" ", "-", "+") and not _hunk_full(hunk):
            hunk.lines.append(line)
        elif hunk is not None and line == "" and not _hunk_full(hunk):
            hunk.lines.append(" ")  # some editors strip the space of an empty context line
        elif line.startswith("\\") and hunk is not None:
            if hunk.lines and hunk.lines[-1][:1] in ("+", " "):
                current.no_newline_at_end = True
        i += 1
    if not patches:
        raise ValueError("no '--- a/...' / '+++ b/...' file header found")
    for file_patch in patches:
        for h in file_patch.hunks:
            if len(h.old_lines) != h.old_count or len(h.new_lines) != h.new_count:
                raise ValueError(f"hunk @@ -{h.old_start},{h.old_count} of {file_patch.new_path or file_patch.old_path} "
                                 "does not match its line counts")
    return patches


def _hunk_full(hunk: Hunk) -> bool:
    return len(hunk.old_lines) >= hunk.old_count and len(hunk.new_lines) >= hunk.new_count
