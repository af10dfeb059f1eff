"""Run one episode: an agent on a task, recorded as a JSONL trajectory."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from .task import Task, bundled_task_names, load_task


@dataclass(frozen=True)
class EpisodeResult:
    task: str
    agent: str
    seed: int
    solved: bool
    reward: float
    steps: int
    tokens: int
    seconds: float
    error: str | None = None

    @property
    def id(self) -> str:
        return episode_id(self.task, self.agent, self.seed)


def episode_id(task: str, agent: str, seed: int) -> str:
    """The name of an episode, and of its trajectory file (`<id>.jsonl`)."""
    return f"{task}.{agent}.s{seed}"


def select_tasks(selectors: Iterable[str] | None) -> list[Task]:
    """Tasks from selectors: folder paths, bundled names, or globs over bundled names (default: all bundled).

    Raises:
        TaskError: a selector matches nothing.
    """
    from .errors import TaskError

    selectors = list(selectors or ["*"])
    tasks: list[Task] = []
    for selector in selectors:
        if any(ch in selector for ch in "*?[") and not Path(selector).exists():
            names = fnmatch.filter(bundled_task_names(), selector)
            if not names:
                raise TaskError(f"no bundled task matches {selector!r}")
            tasks.extend(load_task(name) for name in names)
        else:
            tasks.append(load_task(selector))
    return tasks


def run_episode(task: Task, agent_name: str = "oracle", out_dir: Path | None = None,
                agent_options: dict[str, Any] | None = None, seed: int = 0,
                **make_options: Any) -> EpisodeResult:
    """Play one episode of `agent_name` on `task`; with out_dir, write `<task>.<agent>.s<seed>.jsonl` there.

    `agent_options` are the agent's constructor arguments (e.g. model and base_url for "llm").
    A failure inside the episode (a broken task, an agent error) is recorded in `error`, not raised;
    KeyboardInterrupt closes the env and propagates.
    """
    import minidebug

    from .agents import load_agent
    from .trajectory import TrajectoryWriter

    started = time.monotonic()
    writer = None
    reward, steps, solved, error, tokens, diff = 0.0, 0, False, None, 0, ""
    with minidebug.make(task, **make_options) as env:
        try:
            observation, info = env.reset(seed=seed)
            if out_dir is not None:
                writer = TrajectoryWriter(Path(out_dir) / f"{episode_id(task.name, agent_name, seed)}.jsonl", {
                    "task": task.name, "task_path": str(task.root), "task_hash": task.content_hash(),
                    "agent": agent_name, "seed": seed, "limits": env.limits.model_dump(), "tools": list(env.tools),
                    "observation": observation})
            agent = load_agent(agent_name)(**(agent_options or {}))
            agent.start(env, observation, info)
            terminated = truncated = False
            while not (terminated or truncated):
                action = agent.act(observation, info)
                step_started = time.monotonic()
                observation, reward, terminated, truncated, info = env.step(action)
                steps = info["step"]
                if writer:
                    writer.step({"step": steps, "action": action.to_dict(), "observation": observation,
                                 "reward": reward, "terminated": terminated, "truncated": truncated,
                                 "info": info, "seconds": round(time.monotonic() - step_started, 4)})
            solved = terminated and reward == 1.0
            diff = env.diff()
        except Exception as exc:  # one broken episode must not end a whole run
            error = f"{exc.__class__.__name__}: {exc}"
        tokens = env.budget.used
        result = EpisodeResult(task.name, agent_name, seed, solved, reward, steps, tokens,
                               round(time.monotonic() - started, 3), error)
        if writer:
            writer.finish({**asdict(result), "diff": diff})
    return result
