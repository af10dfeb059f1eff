"""Run episodes: one agent on one task, recorded as a trajectory."""

from __future__ import annotations

import fnmatch
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from .task import Task, bundled_task_names, load_task


@dataclass(frozen=True)
class EpisodeResult:
    task: str
    agent: str
    solved: bool
    reward: float
    steps: int
    tokens: int
    seconds: float
    error: str | None = None


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
                agent_options: dict[str, Any] | None = None, **make_options: Any) -> EpisodeResult:
    """Play one episode of `agent_name` on `task`; with out_dir, write `<task>.<agent>.jsonl` there.

    `agent_options` are the agent's constructor arguments (e.g. model and base_url for "llm")."""
    import minidebug

    from .agents import load_agent
    from .trajectory import TrajectoryWriter

    started = time.monotonic()
    writer = None
    reward, steps, solved, error = 0.0, 0, False, None
    with minidebug.make(task, **make_options) as env:
        observation, info = env.reset(seed=0)
        if out_dir is not None:
            writer = TrajectoryWriter(Path(out_dir) / f"{task.name}.{agent_name}.jsonl", {
                "task": task.name, "task_path": str(task.root), "task_hash": task.content_hash(), "agent": agent_name,
                "limits": env.limits.model_dump(), "tools": list(env.tools), "observation": observation})
        try:
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
        except Exception as exc:  # one broken episode must not end a whole run
            error = f"{exc.__class__.__name__}: {exc}"
        result = EpisodeResult(task.name, agent_name, solved, reward, steps, env.budget.used,
                               round(time.monotonic() - started, 3), error)
        if writer:
            writer.finish({**asdict(result), "diff": env.diff()})
    return result


def run(tasks: list[Task], agent_name: str = "oracle", out_dir: Path | None = None,
        agent_options: dict[str, Any] | None = None, **make_options: Any) -> list[EpisodeResult]:
    """Run every task once; with out_dir, also write `results.json` there.

    Raises:
        ValueError: unknown agent name.
    """
    from .agents import load_agent

    load_agent(agent_name)(**(agent_options or {}))  # bad options fail here, before any episode
    results = [run_episode(task, agent_name, out_dir, agent_options, **make_options) for task in tasks]
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "results.json").write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return results


def format_table(results: list[EpisodeResult]) -> str:
    """A per-task table and a total line."""
    width = max([len(r.task) for r in results] + [4])
    lines = [f"{'task':<{width}}  solved  steps  seconds", f"{'-' * width}  ------  -----  -------"]
    for r in results:
        mark = "yes" if r.solved else ("ERROR" if r.error else "no")
        lines.append(f"{r.task:<{width}}  {mark:<6}  {r.steps:>5}  {r.seconds:>7.2f}")
        if r.error:
            lines.append(f"  {r.error}")
    solved = sum(r.solved for r in results)
    total_seconds = sum(r.seconds for r in results)
    lines.append(f"{'total':<{width}}  {solved}/{len(results):<4}  {sum(r.steps for r in results):>5}  {total_seconds:>7.2f}")
    return "\n".join(lines)
