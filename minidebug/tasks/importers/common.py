"""What every importer shares: its report, and TOML strings written safely."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ImportReport:
    """What an import wrote, and what it left out and why (by exercise or instance name): `skipped` the
    entries that cannot make a task, `failed` those this machine could not import (a local clone missing or
    incomplete, say)."""

    made: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # what was changed in a task that was written

    def summary(self, out: Path) -> str:
        lines = [f"{len(self.made)} task(s) written to {out}"]
        if self.notes:
            lines.append(f"{len(self.notes)} written with changes:")
            lines += [f"  {name}: {note}" for name, note in sorted(self.notes.items())]
        if self.skipped:
            lines.append(f"{len(self.skipped)} skipped:")
            lines += [f"  {name}: {reason}" for name, reason in sorted(self.skipped.items())]
        if self.failed:
            lines.append(f"{len(self.failed)} FAILED:")
            lines += [f"  {name}: {reason}" for name, reason in sorted(self.failed.items())]
        return "\n".join(lines)


def toml_string(text: str) -> str:
    """`text` as a TOML basic string: quotes, backslashes and control characters escaped, the rest (emoji
    included) kept as it is."""
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    body = "".join(escapes.get(ch) or (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch)
                   for ch in text)
    return f'"{body}"'
