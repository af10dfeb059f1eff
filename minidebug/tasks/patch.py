"""Unified diffs (the `git diff` / `git apply` format): a reader, and the one routine that places and applies a
file's hunks as `git apply` does.

Where a hunk applies is searched, as git searches it: from the line its header names in the file as the earlier
hunks left it, then one line further, one line back, two further, and so on, matching its old lines exactly
(fuzz 0, whitespace included). A hunk that starts at line 1 (or 0) must match at the file's start, and one with
no trailing context at its end. Real patches carry offsets (`@@ -424,6` whose context is at line 434); a
routine that wrote at the stated line would write over the wrong lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[str] = field(default_factory=list)  # each with its ' ', '-' or '+' prefix
    old_ends_bare: bool = False  # `\ No newline at end of file` after its last old line
    new_ends_bare: bool = False  # ... after its last new line

    @property
    def old_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def new_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]

    def old_text(self) -> list[str]:
        """The old lines with their line ends, as they stand in the file."""
        return _ended(self.old_lines, self.old_ends_bare)

    def new_text(self) -> list[str]:
        """The new lines with their line ends."""
        return _ended(self.new_lines, self.new_ends_bare)


def _ended(lines: list[str], bare: bool) -> list[str]:
    ended = [line + "\n" for line in lines]
    if bare and ended:
        ended[-1] = lines[-1]
    return ended


@dataclass
class FilePatch:
    old_path: str | None  # None for a new file
    new_path: str | None  # None for a deleted file
    hunks: list[Hunk] = field(default_factory=list)


def _strip_prefix(path: str) -> str | None:
    path = path.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _inside(path: str) -> bool:
    """Whether a patch's path names a file inside the project, as git apply's check has it: relative, no
    empty, `.` or `..` component, nothing in `.git`."""
    parts = path.split("/")
    return not path.startswith("/") and all(part not in ("", ".", "..") for part in parts) \
        and parts[0].lower() != ".git"


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff into per-file hunks.

    Raises:
        ValueError: the text has no file header, a hunk is malformed, or a path is not inside the project.
    """
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    lines = text.split("\n")  # not splitlines(): a form feed or a lone \r is part of a line, as git sees it
    if lines and lines[-1] == "":
        lines.pop()
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
        elif line.startswith("\\") and hunk is not None and hunk.lines:
            kind = hunk.lines[-1][:1]
            hunk.old_ends_bare |= kind in ("-", " ")
            hunk.new_ends_bare |= kind in ("+", " ")
        i += 1
    if not patches:
        raise ValueError("no '--- a/...' / '+++ b/...' file header found")
    for file_patch in patches:
        for path in (file_patch.old_path, file_patch.new_path):
            if path is not None and not _inside(path):
                raise ValueError(f"the patch names {path!r}, which is not a path inside the project "
                                 "(git apply refuses it too)")
        for h in file_patch.hunks:
            if len(h.old_lines) != h.old_count or len(h.new_lines) != h.new_count:
                where = file_patch.new_path or file_patch.old_path
                raise ValueError(f"hunk @@ -{h.old_start},{h.old_count} of {where} does not match its line counts")
    return patches


def _hunk_full(hunk: Hunk) -> bool:
    return len(hunk.old_lines) >= hunk.old_count and len(hunk.new_lines) >= hunk.new_count


@dataclass(frozen=True)
class Placed:
    """A hunk and the line (1-based) of the file as the earlier hunks left it where its old lines start; for a
    hunk without old lines, the line its new lines go before."""

    hunk: Hunk
    line: int


def _lines(text: str) -> list[str]:
    """The lines of `text` with their line ends (only `\n` ends a line); the last may have none."""
    return _LINE.findall(text)


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def _find(image: list[str], patched: list[bool], hunk: Hunk) -> int | None:
    old = hunk.old_text()
    trailing = next((i for i, line in enumerate(reversed(hunk.lines)) if line[:1] != " "), len(hunk.lines))
    at_start = hunk.old_start <= 1
    at_end = trailing == 0
    if at_start:
        guess = 0
    elif at_end:
        guess = len(image) - len(old)
    else:
        guess = (hunk.new_start - 1) if hunk.new_start else 0
    guess = min(guess, len(image)) if guess >= 0 else len(image)

    def fits(at: int) -> bool:
        # git compares the old lines' bytes with the file's from that line on: a last old line without its line
        # end matches the start of the file's line; at the end, the bytes must end where the file does.
        if at_start and at != 0 or at + len(old) > len(image) or any(patched[at:at + len(old)]):
            return False
        if at_end:
            return at + len(old) == len(image) and image[at:] == old
        return image[at:at + len(old) - 1] == old[:-1] and (not old or image[at + len(old) - 1].startswith(old[-1]))

    back = fore = guess
    if fits(guess):
        return guess
    while back > 0 or fore < len(image):
        if fore < len(image):
            fore += 1
            if fits(fore):
                return fore
        if back > 0:
            back -= 1
            if fits(back):
                return back
    return None


def _placed(image: list[str], file_patch: FilePatch) -> list[Placed]:
    """Place each hunk in turn and apply it to `image` (changed in place); lines a hunk wrote are not matched
    by a later one."""
    placed, patched = [], [False] * len(image)
    for number, hunk in enumerate(file_patch.hunks, 1):
        at = _find(image, patched, hunk)
        if at is None:
            path = file_patch.old_path or file_patch.new_path
            raise ValueError(f"{path}: hunk #{number} (@@ -{hunk.old_start},{hunk.old_count} "
                             f"+{hunk.new_start},{hunk.new_count} @@) does not apply")
        image[at:at + hunk.old_count] = hunk.new_text()
        patched[at:at + hunk.old_count] = [True] * hunk.new_count
        placed.append(Placed(hunk, at + 1))
    return placed


def place(text: str, file_patch: FilePatch) -> list[Placed]:
    """Where each hunk of `file_patch` applies to `text`, in order, as `git apply` places it.

    Raises:
        ValueError: a hunk's old lines are nowhere (or not where its shape requires) in the file as the
            earlier hunks left it: `git apply` refuses the patch too.
    """
    return _placed(_lines(text), file_patch)


def apply_file_patch(text: str | None, file_patch: FilePatch) -> str | None:
    """`text` (None: the file is not there) with `file_patch` applied as `git apply` applies it; None when the
    patch deletes the file.

    Raises:
        ValueError: the patch does not apply: a hunk matches nowhere, it creates a file that is there, or it
            changes or deletes one that is not (or deletes one whose text is not the patch's).
    """
    path = file_patch.old_path or file_patch.new_path
    if file_patch.old_path is None and text is not None:
        raise ValueError(f"{path}: already exists")
    if file_patch.old_path is not None and text is None:
        raise ValueError(f"{path}: does not exist")
    image = _lines(text or "")
    _placed(image, file_patch)
    if file_patch.new_path is None:
        if image:
            raise ValueError(f"{path}: the deletion does not remove the whole file")
        return None
    return "".join(image)


def relocated(text: str, file_patch: FilePatch) -> FilePatch:
    """`file_patch` with each hunk's header line numbers where `git apply` really applies it to `text` (old
    lines in `text`, new lines in the result), for readers of the numbers (regions, probes).

    Raises:
        ValueError: as `place`.
    """
    spots = place(text, file_patch)
    hunks = []
    for index, spot in enumerate(spots):
        shift = sum(other.hunk.new_count - other.hunk.old_count for other in spots[:index] if other.line < spot.line)
        old_line = spot.line - shift
        hunk = spot.hunk
        hunks.append(replace(hunk, old_start=old_line if hunk.old_count else old_line - 1,
                             new_start=spot.line if hunk.new_count else spot.line - 1, lines=list(hunk.lines)))
    return FilePatch(file_patch.old_path, file_patch.new_path, hunks)
