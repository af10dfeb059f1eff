"""The oracle: applies the task's gold patch through the edit tool, hunk by hunk, then eval and submit.

It proves a task solvable with the same tools an agent has, and needs no model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..core.calls import ToolCall
from ..core.env import DebugEnv
from ..core.interface import Env
from ..core.trajectory import Exchange
from ..errors import TaskError, UsageError
from ..tasks.patch import FilePatch, parse_patch, place


def edits_for(file_patch: FilePatch, text: str | None) -> Iterator[ToolCall]:
    """The edit calls that apply one file's hunks in order, each where `git apply` places it in `text` (the
    file's pristine text; None when the patch creates it).

    Raises:
        TaskError: the patch deletes the file, or does not apply to `text`.
    """
    if file_patch.new_path is None:
        raise TaskError(f"the oracle cannot delete files ({file_patch.old_path}); edit the file instead")
    path = file_patch.new_path
    if file_patch.old_path is None:
        content = "".join(line + "\n" for line in file_patch.hunks[0].new_lines) if file_patch.hunks else ""
        yield ToolCall("edit", {"path": path, "start": 1, "end": 0, "new_code": content})
        return
    if text is None:
        raise TaskError(f"the gold patch changes {path}, which is not in the task's tree")
    try:
        spots = place(text, file_patch)
    except ValueError as exc:
        raise TaskError(f"the gold patch does not apply: {exc}") from None
    for spot in spots:
        new_code = "".join(line + "\n" for line in spot.hunk.new_lines)
        yield ToolCall("edit", {"path": path, "start": spot.line, "end": spot.line + spot.hunk.old_count - 1,
                                "new_code": new_code})


def gold_edits(task: Any, base_text: Callable[[str], str | None]) -> list[ToolCall]:
    """The edit calls that apply a task's gold patch, each hunk where `git apply` places it.

    Args:
        task: the task.
        base_text: a file's pristine text by its path in the tree (None when it is not there).

    Raises:
        TaskError: the task has no solution.patch, it deletes a file, or it does not apply.
    """
    if task.solution is None:
        raise TaskError(f"task {task.name!r} has no solution.patch for the oracle to apply")
    calls: list[ToolCall] = []
    for file_patch in parse_patch(task.solution.read_text(encoding="utf-8")):
        calls.extend(edits_for(file_patch, base_text(file_patch.old_path) if file_patch.old_path else None))
    return calls


class OracleAgent:
    """Replays the gold patch: one edit per hunk, then eval, then submit."""

    def start(self, env: Env, observation: str, info: dict[str, Any]) -> None:
        if not isinstance(env, DebugEnv) or env.workspace is None:
            raise UsageError("the oracle reads the pristine files of a started DebugEnv (reset() first)")
        self._plan = iter(gold_edits(env.task, env.workspace.base_text) + [ToolCall("eval"), ToolCall("submit")])

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        return next(self._plan, ToolCall("submit"))

    def take_exchange(self) -> Exchange | None:
        """None: the oracle asks no model."""
        return None
