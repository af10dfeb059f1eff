"""The edit tool: replace a line range, or a unique snippet; shows the diff it made."""

from __future__ import annotations

import codecs
import difflib
import re

from pydantic import Field, model_validator

from ..errors import ToolError
from ..workspace.safefs import write_file
from .base import Arguments, Episode, Tool, read_bytes

_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
# Encodings a file may declare: each maps ASCII to itself and every character to fixed bytes, so the bytes
# written say what the text says. Others (utf-7, unicode_escape, raw_unicode_escape, utf-16, ...) would let
# text that reads one way become bytes, or source, that mean another.
SAFE_ENCODINGS = frozenset({"utf-8", "ascii", "cp1252", *(f"iso8859-{n}" for n in range(1, 17))})


def declared_encoding(data: bytes, shown: str) -> str:
    """The encoding a PEP 263 cookie in the first two lines declares (UTF-8 without one), as Python reads it.

    Raises:
        ToolError: the declared encoding is unknown or not one of SAFE_ENCODINGS.
    """
    # Lines as CPython's compile() splits them (\r, \n, \r\n) and as a reader splitting at \n alone would:
    # every cookie either finds must be safe; the first of compile()'s is the one used.
    first = [match.group(1).decode("ascii") for line in data.splitlines()[:2] if (match := _CODING.match(line))]
    other = [match.group(1).decode("ascii") for line in data.split(b"\n")[:2] if (match := _CODING.match(line))]
    for declared in other + first[1:]:
        _safe(declared, shown)
    return _safe(first[0], shown) if first else "utf-8"


def _safe(declared: str, shown: str) -> str:
    """The canonical name of a declared encoding, if it is one of SAFE_ENCODINGS; else a ToolError."""
    name = declared.lower().replace("_", "-")  # what CPython's tokenizer does before looking the codec up
    if name == "utf-8" or name.startswith("utf-8-"):
        name = "utf-8"
    elif any(name == base or name.startswith(base + "-") for base in ("latin-1", "iso-8859-1", "iso-latin-1")):
        name = "iso8859-1"
    try:
        canonical = codecs.lookup(name).name
    except LookupError:
        raise ToolError(f"{shown}: declares an unknown encoding {declared!r}; refusing to edit it") from None
    if canonical not in SAFE_ENCODINGS:
        raise ToolError(f"{shown}: declares the encoding {declared!r}, which edit does not write (it accepts "
                        "utf-8, ascii, latin-1 and the other iso-8859 encodings, and cp1252)")
    return canonical


def _load(root, rel: str, shown: str) -> tuple[str, str, str]:
    """A file's text with "\\n" newlines, its encoding (a PEP 263 cookie, else UTF-8) and its newline style.

    Raises:
        ToolError: the file is not valid text in its encoding, or declares an encoding edit does not write
            (it is refused rather than rewritten).
    """
    data = read_bytes(root, rel, shown)  # the same refusals as view: folders, missing and binary files
    encoding = declared_encoding(data, shown)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown}: not valid {encoding} text ({exc.__class__.__name__}); "
                        "refusing to rewrite it") from exc
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), encoding, newline


class Edit(Tool):
    name = "edit"
    description = (
        "Change a file. Either give start/end (1-based, inclusive) and new_code to replace those lines "
        "(end = start - 1 inserts before start; new_code '' deletes them; a new path creates the file), "
        "or give old and new to replace one unique occurrence of a snippet. Shows the resulting diff."
    )

    class Args(Arguments):
        path: str = Field(description="file path relative to the project root")
        start: int | None = Field(None, description="first line to replace (1-based)")
        end: int | None = Field(None, description="last line to replace (inclusive)")
        new_code: str | None = Field(None, description="replacement text for lines start..end")
        old: str | None = Field(None, description="exact snippet to replace (must occur once)")
        new: str | None = Field(None, description="text that replaces the snippet")

        @model_validator(mode="after")
        def _one_form(self):
            by_lines = (self.start, self.end, self.new_code)
            by_snippet = (self.old, self.new)
            if all(v is not None for v in by_snippet) and all(v is None for v in by_lines):
                return self
            if all(v is not None for v in by_lines) and all(v is None for v in by_snippet):
                return self
            raise ValueError("give either start, end and new_code, or old and new")

    def run(self, episode: Episode, args: Args) -> str:
        workspace = episode.workspace
        rel = workspace.writable(args.path)
        path = workspace.path(rel)
        exists = path.exists()
        before, encoding, newline = _load(workspace.root, rel, args.path) if exists else ("", "utf-8", "\n")
        lines = before.splitlines(keepends=True)
        if args.old is not None:
            assert args.new is not None, "Args._one_form: old comes with new"
            start, end, replacement = self._snippet(rel, before, args.old, args.new)
        else:
            assert args.start is not None and args.end is not None and args.new_code is not None, \
                "Args._one_form: without old, start, end and new_code are given"
            if not exists and args.start != 1:
                raise ToolError(f"{args.path}: no such file; to create it use start=1, end=0")
            start, end, replacement = args.start, args.end, args.new_code
            if start < 1 or end < start - 1 or start > len(lines) + 1:
                raise ToolError(
                    f"edit: bad range start={start}, end={end} for {rel} ({len(lines)} lines); "
                    "need 1 <= start <= end + 1 and start <= lines + 1"
                )
            end = min(end, len(lines))
        new_lines = replacement.splitlines(keepends=True)
        if new_lines and not new_lines[-1].endswith("\n") and (end < len(lines) or before.endswith("\n") or not exists):
            new_lines[-1] += "\n"
        if start - 1 > 0 and lines and not lines[start - 2].endswith("\n"):
            lines[start - 2] += "\n"
        after = "".join(lines[: start - 1] + new_lines + lines[end:])
        if after == before and exists:
            return f"{rel}: no change."
        refusal = workspace.harness.refuses_text(rel, after, workspace.base_text)
        if refusal:
            raise ToolError(f"{args.path}: refused: {refusal}")
        text = after.replace("\n", newline)
        # Python reads the file in the encoding its new text declares: write it in that one, and only if the
        # bytes read back as exactly this text.
        encoding = declared_encoding(text.encode("utf-8", errors="replace"), args.path)
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError as exc:
            raise ToolError(f"{args.path}: the new text cannot be written in the file's encoding {encoding}: "
                            f"{exc.reason}") from None
        if data.decode(encoding, errors="replace") != text:
            raise ToolError(f"{args.path}: the new text does not read back the same in {encoding}; not written")
        write_file(workspace.root, rel, data)  # never through a link swapped in since the checks
        episode.file_edited(rel, before, after)
        diff = difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True),
            fromfile=f"a/{rel}" if exists else "/dev/null", tofile=f"b/{rel}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in diff).rstrip("\n")

    @staticmethod
    def _snippet(rel: str, text: str, old: str, new: str) -> tuple[int, int, str]:
        if not old:
            raise ToolError("edit: 'old' is empty")
        count = text.count(old)
        if count != 1:
            raise ToolError(f"edit: the snippet occurs {count} times in {rel}; it must occur exactly once "
                            "(add surrounding lines to make it unique)")
        offset = text.index(old)
        first = text.count("\n", 0, offset) + 1
        last = text.count("\n", 0, offset + len(old) - 1) + 1
        lines = text.splitlines(keepends=True)
        block = "".join(lines[first - 1:last])
        start_in_block = offset - sum(len(line) for line in lines[: first - 1])
        replaced = block[:start_in_block] + new + block[start_in_block + len(old):]
        return first, last, replaced
