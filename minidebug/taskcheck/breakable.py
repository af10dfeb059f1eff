"""Which line of a changed region a debugger can stop on, read from the compiled code's line tables.

A gold patch's first changed line is often no place for a breakpoint: a blank line, a comment, a docstring, a
decorator's continuation, or nothing at all when the patch only inserts lines. `probe_lines` picks, per changed
region, the line that executes nearest to the change.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from ..tasks.patch import FilePatch


@dataclass(frozen=True)
class Scope:
    """One code object: the module, a class body or a function; `lines` are those it runs itself."""

    first: int
    last: int
    lines: frozenset[int]
    is_module: bool


def scopes(source: str, filename: str = "<probe>") -> list[Scope]:
    """The module's code objects and their executable lines, from their line tables.

    Raises:
        SyntaxError: the source does not compile.
    """
    found: list[Scope] = []
    module = compile(source, filename, "exec", dont_inherit=True)
    texts = source.splitlines()
    refused = {number for number, text in enumerate(texts, 1)  # pdb refuses breakpoints on these lines
               if not text.strip() or text.strip().startswith(("#", '"""', "'''"))}
    pending: list[CodeType] = [module]
    while pending:
        code = pending.pop()
        lines = {line for _, _, line in code.co_lines() if line is not None and line > 0} - refused
        if code is not module:
            lines.discard(code.co_firstlineno)  # the `def`/`class` line runs in the enclosing scope
        found.append(Scope(code.co_firstlineno, max(lines, default=code.co_firstlineno), frozenset(lines),
                           code is module))
        pending.extend(const for const in code.co_consts if isinstance(const, CodeType))
    return found


def changed_regions(file_patch: FilePatch) -> list[tuple[int, int]]:
    """The old file's lines each change touches, as (first, last): one region per run of removed and added
    lines between context lines. A run that only adds lines changes the place between two old lines: the
    region is those two."""
    regions = []
    for hunk in file_patch.hunks:
        line = hunk.old_start + (1 if hunk.old_count == 0 else 0)  # `@@ -N,0`: the lines go after line N
        removed: list[int] = []
        added = False
        for text in [*hunk.lines, " "]:  # a final context line closes the last run
            if text.startswith("-"):
                removed.append(line)
                line += 1
            elif text.startswith("+"):
                added = True
            elif text.startswith(" "):
                if removed:
                    regions.append((removed[0], removed[-1]))
                elif added:
                    regions.append((max(line - 1, 1), line))
                removed, added = [], False
                line += 1
    return regions


def probe_lines(found: list[Scope], regions: list[tuple[int, int]]) -> list[int]:
    """One line to stop on per changed region, in order and without repeats: the first executable line inside
    the region; else the nearest line run by the innermost function or class around it (so a changed docstring
    or comment in a function is probed in that function's body, not at its `def`), else the nearest line at all.
    A later line wins a tie: the code after a change runs after it."""
    lines = set().union(*(scope.lines for scope in found)) if found else set()
    chosen = [_line_for(found, lines, region) for region in regions]
    return list(dict.fromkeys(line for line in chosen if line is not None))


def _line_for(found: list[Scope], lines: set[int], region: tuple[int, int]) -> int | None:
    first, last = region
    inside = sorted(line for line in lines if first <= line <= last)
    if inside or not lines:
        return inside[0] if inside else None
    around = [s for s in found if not s.is_module and s.lines and s.first <= first and last <= s.last + 1]
    candidates = min(around, key=lambda s: s.last - s.first).lines if around else lines
    return min(candidates, key=lambda line: (min(abs(line - first), abs(line - last)), line < first))
