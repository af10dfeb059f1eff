"""An env's episode written to a trajectory file as it is played, whoever drives the env.

    recorder = EpisodeRecorder(env, tmp_path / "sum_tree.jsonl")
    obs, info = env.reset()             # the header line
    env.step({"name": "eval"})          # a step line (astep/areset are recorded too)
    recorder.finish()                   # the result line, with the final diff

The file is a trajectory as `minidebug run` writes it (minidebug/core/trajectory.py), so `minidebug replay`
re-runs it. A reset starts the file over: it holds the env's latest episode.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from ..core.calls import ToolCall
from ..core.trajectory import Action, HeaderRecord, ResultRecord, StepInfo, StepRecord, TrajectoryWriter
from ..errors import MinidebugError, ToolError


class EpisodeRecorder:
    """Records `env`'s episode to `path`: the env's `reset` and `step` are wrapped on the instance, so every
    call is recorded, an agent's or `areset`/`astep`'s alike, and the env stays the DebugEnv it was.

    Args:
        env: a DebugEnv, not reset yet.
        path: the trajectory file (its folder is made).
        agent: the name the file gives the agent.
    """

    _suspicious: list[str]

    def __init__(self, env: Any, path: Path, agent: str = "pytest"):
        self.env, self.path, self.agent = env, Path(path), agent
        self._reset, self._step = env.reset, env.step
        self._lock = threading.Lock()
        self._writer: TrajectoryWriter | None = None
        self.started = False  # the env was reset: the file exists
        env.reset, env.step = self.reset, self.step

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """The env's `reset`; starts the trajectory file over with its header."""
        from ..tasks.select import task_set

        with self._lock:
            observation, info = self._reset(seed=seed, options=options)
            if self._writer is not None:
                self._writer.close()
            env, task = self.env, self.env.task
            self._writer = TrajectoryWriter(self.path, HeaderRecord(
                task=task.name, task_path=str(task.root), task_hash=task.content_hash(), task_set=task_set(task),
                agent=self.agent, strategy=env.strategy.name, seed=seed or 0, limits=env.limits.model_dump(),
                tools=list(env.tools), observation=observation, tokens_used=info["tokens_used"]))
            self.started, self._seed, self._since, self._suspicious = True, seed or 0, time.monotonic(), []
            self._last = (0.0, False, 0)  # reward, terminated, steps
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The env's `step`; writes the step's line."""
        with self._lock:
            clock = time.monotonic()
            observation, reward, terminated, truncated, info = self._step(action)
            if self._writer is not None:
                self._writer.step(StepRecord(step=info["step"], action=_action(action), observation=observation,
                                             reward=reward, terminated=terminated, truncated=truncated,
                                             info=StepInfo(**info), seconds=round(time.monotonic() - clock, 4)))
                self._suspicious += [s for s in info.get("suspicious", ()) if s not in self._suspicious]
                fraction = info["score"] / info["max_score"] if info.get("max_score") else 0.0  # any `reward=`
                self._last = (fraction, terminated, info["step"])
        return observation, reward, terminated, truncated, info

    def diff(self) -> str:
        """The env's diff now, or why there is none (the env was closed)."""
        try:
            return self.env.diff()
        except (MinidebugError, OSError) as exc:
            return f"(no diff: {exc})"

    def finish(self) -> None:
        """Write the result line (the outcome and the final diff) and close the file. Idempotent."""
        from ..tasks.select import task_set

        with self._lock:
            if self._writer is None:
                return
            fraction, terminated, steps = self._last
            task = self.env.task
            self._writer.finish(ResultRecord(
                task=task.name, agent=self.agent, seed=self._seed, solved=terminated and fraction == 1.0,
                reward=fraction, steps=steps, tokens=self.env.budget.used, strategy=self.env.strategy.name,
                seconds=round(time.monotonic() - self._since, 3), task_set=task_set(task),
                suspicious=self._suspicious, diff=self.diff()))
            self._writer = None


def _action(action: Any) -> Action:
    """The recorded form of an action; one that is no tool call is kept as its text under the name "?"."""
    try:
        return Action.from_call(ToolCall.parse(action))
    except ToolError:
        return Action(name="?", arguments={"text": str(action)[:2000]})
