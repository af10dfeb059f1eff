"""One model turn written as text, played on an env: the shared core of the RL-trainer adapters.

A trainer hands over the model's raw text; its tool calls (read by `ToolCall.parse_text`) run in order on
the episode, their observations come back as one message, and the episode's reward is given when it ends:
the score of the last eval if the final call scored, else a fresh eval of the final state, so a rollout that
runs out of turns is still scored on what it changed. The reward is 1.0 when every counted test passes and 0.0
otherwise (`reward="solved"`, what RL trainers want: a fraction would pay for tests that passed before any
change), or the fraction of counted tests passing (`reward="fraction"`, the env's own reward).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.calls import ToolCall
from ..errors import ToolError, UsageError

REWARDS = ("solved", "fraction")


@dataclass
class Turn:
    """What one turn gave: the observation text, the reward (the final one once `done`), and details."""

    observation: str
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


class TextTurns:
    """Plays text turns on a reset DebugEnv. A turn without any well-formed tool call still counts toward
    the episode's `max_steps`, and its observation says what shapes are accepted.

    Args:
        env: a DebugEnv, already reset.
        reward: "solved" (1.0 or 0.0) or "fraction".

    Raises:
        ValueError: an unknown reward kind.
    """

    def __init__(self, env: Any, reward: str = "solved"):
        if reward not in REWARDS:
            raise UsageError(f"unknown reward {reward!r}; choose one of {', '.join(REWARDS)}")
        self.env = env
        self.kind = reward
        self.turns = 0
        self.done = False
        self.reward = 0.0
        self._schemas: tuple[tuple[str, ...], list[dict[str, Any]]] = ((), [])

    def play(self, text: str) -> Turn:
        """Run the tool calls in `text`; after the episode ended, every turn says so and gives no reward."""
        if self.done:
            return Turn("error: the episode is over", 0.0, True)
        self.turns += 1
        observations: list[str] = []
        info: dict[str, Any] = {}
        try:
            calls = ToolCall.parse_text(text, self._tool_schemas())
        except ToolError as exc:
            calls, info["error"] = [], str(exc)
            observations.append(f"error: {exc}")
        scored = False
        for call in calls:
            observation, reward, terminated, truncated, info = self.env.step(call)
            observations.append(observation if len(calls) == 1 else f"[{call.name}]\n{observation}")
            scored = "score" in info
            if scored:
                self.reward = self._reward(info["score"], info["max_score"])
            if terminated or truncated:
                self.done = True
                break
        if not self.done and self.turns >= self.env.limits.max_steps:
            self.done, info["truncated_by"] = True, "max_steps"
        if not self.done:
            return Turn("\n\n".join(observations), 0.0, False, info)
        if not scored:
            result = self.env.evaluate()
            self.reward = self._reward(result.score, result.max_score)
            info = {**info, "score": result.score, "max_score": result.max_score, "final_eval": True}
        return Turn("\n\n".join(observations), self.reward, True, info)

    def _tool_schemas(self) -> list[dict[str, Any]]:
        """The env's tool schemas, made again only when its tools change (an unlock)."""
        names = tuple(self.env.tools)
        if self._schemas[0] != names:
            self._schemas = (names, self.env.tool_schemas())
        return self._schemas[1]

    def _reward(self, score: int, max_score: int) -> float:
        if not max_score:
            return 0.0
        if self.kind == "fraction":
            return score / max_score
        return 1.0 if score == max_score else 0.0
