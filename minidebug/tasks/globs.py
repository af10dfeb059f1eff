"""gitignore-style glob sets for the `readonly` and `hidden` task fields."""

from __future__ import annotations

from collections.abc import Iterable

import pathspec


class GlobSet:
    """A list of gitignore-style patterns matched against worktree-relative POSIX paths.

    A leading `/` anchors a pattern at the worktree root, as in .gitignore.

    Raises:
        ValueError: a pattern is empty, climbs out with `..`, or does not compile.
    """

    def __init__(self, patterns: Iterable[str]):
        self.patterns = list(patterns)
        for pattern in self.patterns:
            if not isinstance(pattern, str) or not pattern.strip():
                raise ValueError("empty glob")
            if ".." in pattern.split("/"):
                raise ValueError(f"bad glob {pattern!r}: '..' is not allowed")
            if "\0" in pattern:
                raise ValueError(f"bad glob {pattern!r}: NUL byte")
        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)
        except ValueError as exc:
            raise ValueError(f"bad glob: {exc}") from None

    def match(self, rel_path: str) -> bool:
        """True if the path, or one of its parent folders, matches."""
        if not self.patterns:
            return False
        # A line break in a name is matched as any other character: the patterns' `.` never matches one, and
        # no pattern holds a NUL byte.
        return self._spec.match_file(rel_path.replace("\n", "\0"))

    def __bool__(self) -> bool:
        return bool(self.patterns)
