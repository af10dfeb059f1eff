"""The oracle: applies the task's gold patch through the edit tool, hunk by hunk, then eval and submit.

It proves a task solvable with the same tools an agent has, and needs no model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.calls import ToolCall
from ..core.trajectory import Exchange
from ..errors import TaskError
from ..tasks.patch import FilePatch, parse_patch


def edits_for(file_patch: FilePatch) -> Iterator[ToolCall]:
    """The edit calls that apply one file's hunks in order (line numbers shift as earlier hunks land)."""
    if file_patch.new_path is None:
        raise TaskError(f"the oracle cannot delete files ({file_patch.old_path}); edit the file instead")
    path = file_patch.new_path
    if file_patch.old_path is None:
        text = "".join(line + "\n" for line in file_patch.hunks[0].new_lines) if file_patch.hunks else ""
        yield ToolCall("edit", {"path": path, "start": 1, "end": 0, "new_code": text})
        return
    shift = 0
    for hunk in file_patch.hunks:
        start = hunk.old_start + shift + (1 if hunk.old_count == 0 else 0)
        end = start + hunk.old_count - 1
        new_code = "".join(line + "\n" for line in hunk.new_lines)
        yield ToolCall("edit", {"path": path, "start": start, "end": end, "new_code": new_code})
        shift += hunk.new_count - hunk.old_count


def gold_edits(task: Any) -> list[ToolCall]:
    """The edit calls that apply a task's gold patch.

    Raises:
        TaskError: the task has no solution.patch, or it deletes a file.
    """
    if task.solution is None:
        raise TaskError(f"task {task.name!r} has no solution.patch for the oracle to apply")
    calls: list[ToolCall] = []
    for file_patch in parse_patch(task.solution.read_text(encoding="utf-8")):
        calls.extend(edits_for(file_patch))
    return calls


class OracleAgent:
    """Replays the gold patch: one edit per hunk, then eval, then submit."""

    def start(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        self._plan = iter(gold_edits(env.task) + [ToolCall("eval"), ToolCall("submit")])

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        return next(self._plan, ToolCall("submit"))

    def take_exchange(self) -> Exchange | None:
        """None: the oracle asks no model."""
        return None
