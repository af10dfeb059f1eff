"""Run one episode: an agent on a task, recorded as a JSONL trajectory."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.trajectory import (
    Action,
    EpisodeOutcome,
    HeaderRecord,
    ResultRecord,
    StepInfo,
    StepRecord,
    TrajectoryWriter,
    episode_id,
)
from ..tasks.select import task_set
from ..tasks.task import Task

TRAJECTORY_PREFIX = "minidebug-trajectory-"  # a batch worker's scratch folder for an episode's trajectory


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to run; plain data so that it crosses process and machine boundaries."""

    task_path: str
    task_name: str
    agent: str
    seed: int
    agent_options: dict[str, Any] = field(default_factory=dict)
    make_options: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return episode_id(self.task_name, self.agent, self.seed, self.make_options.get("strategy", "debug"))


def run_episode(task: Task, agent_name: str = "oracle", out_dir: Path | None = None,
                agent_options: dict[str, Any] | None = None, seed: int = 0,
                **make_options: Any) -> EpisodeOutcome:
    """Play one episode of `agent_name` on `task`; with out_dir, write `<task>.<agent>.s<seed>.jsonl` there.

    `agent_options` are the agent's constructor arguments (e.g. model and base_url for "llm"); the
    strategy is a make option (`strategy="rewrite"`). What the agent's `take_exchange()` gives after each
    action (what the model was sent and answered, see LLMAgent.take_exchange) is recorded with its step.
    A failure inside the episode (a broken task, an agent error) is recorded in `error`, not raised;
    KeyboardInterrupt closes the env and propagates.
    """
    from ..agents import Agent, load_agent
    from ..core.make import make

    started = time.monotonic()
    options = dict(agent_options or {})
    model = options.get("model")
    writer = None
    final, steps, solved, error, tokens, diff = 0.0, 0, False, None, 0, ""
    suspicious: list[str] = []
    with make(task, **make_options) as env:
        strategy = env.strategy.name
        try:
            observation, info = env.reset(seed=seed)
            if out_dir is not None:
                name = episode_id(task.name, agent_name, seed, strategy)
                writer = TrajectoryWriter(Path(out_dir) / f"{name}.jsonl", HeaderRecord(
                    task=task.name, task_path=str(task.root), task_hash=task.content_hash(),
                    task_set=task_set(task), agent=agent_name, strategy=strategy, model=model,
                    seed=seed, limits=env.limits.model_dump(), tools=list(env.tools),
                    observation=observation, tokens_used=info["tokens_used"]))
            agent: Agent = load_agent(agent_name)(**options)
            agent.start(env, observation, info)
            terminated = truncated = False
            while not (terminated or truncated):
                action = agent.act(observation, info)
                exchange = agent.take_exchange()
                step_started = time.monotonic()
                observation, reward, terminated, truncated, info = env.step(action)
                steps = info["step"]
                suspicious += [finding for finding in info.get("suspicious", ()) if finding not in suspicious]
                if writer:
                    writer.step(StepRecord(step=steps, action=Action.from_call(action), observation=observation,
                                           reward=reward, terminated=terminated, truncated=truncated,
                                           info=StepInfo(**info), seconds=round(time.monotonic() - step_started, 4),
                                           exchange=exchange))
            final = info.get("score", 0) / info["max_score"] if info.get("max_score") else 0.0  # whatever `reward=`
            solved = terminated and final == 1.0
            diff = env.diff()
        except Exception as exc:  # one broken episode must not end a whole run
            error = f"{exc.__class__.__name__}: {exc}"
        tokens = env.budget.used
        result = EpisodeOutcome(task=task.name, agent=agent_name, seed=seed, solved=solved, reward=final,
                                steps=steps, tokens=tokens, seconds=round(time.monotonic() - started, 3),
                                error=error, strategy=strategy, model=model, task_set=task_set(task),
                                suspicious=suspicious)
        if writer:
            writer.finish(ResultRecord(**result.model_dump(), diff=diff))
    return result
