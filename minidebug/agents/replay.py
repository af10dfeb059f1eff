"""Replays the actions of a recorded trajectory, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.calls import ToolCall
from ..core.interface import Env
from ..core.trajectory import Exchange, StepRecord, read_trajectory
from ..errors import MinidebugError


class ReplayAgent:
    """Plays back the actions of a JSONL trajectory; submits when they run out.

    Args:
        trajectory: the file written by `minidebug run --out`.
    """

    def __init__(self, trajectory: str | Path):
        if not trajectory:
            raise MinidebugError("the replay agent needs a trajectory file (--trajectory)")
        self.recorded = [r for r in read_trajectory(Path(trajectory)) if isinstance(r, StepRecord)]
        self.actions = [r.action.to_call() for r in self.recorded]

    def start(self, env: Env, observation: str, info: dict[str, Any]) -> None:
        self._next = iter(self.actions)

    def act(self, observation: str, info: dict[str, Any]) -> ToolCall:
        return next(self._next, ToolCall("submit"))

    def take_exchange(self) -> Exchange | None:
        """None: a replay asks no model."""
        return None
