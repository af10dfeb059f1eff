"""What a tool returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: the observation text and, for eval, the score."""

    text: str
    score: int | None = None
    max_score: int | None = None
    submitted: bool = False
    suspicious: tuple[str, ...] = ()  # eval: signs of in-memory forgery, `file:line: what`
