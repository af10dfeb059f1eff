"""What a report shows, computed from run folders: episodes, the summary per arm and task set, tool use."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.trajectory import HeaderRecord, Trajectory, trajectories

MAX_OBSERVATION_CHARS = 20_000  # per step in an episode page; the trajectory keeps the whole text
DEBUG_TOOLS = ("pdb", "trace", "inspect")


@dataclass
class Episode:
    """One recorded episode, as the report needs it."""

    key: str
    run: str
    name: str
    task: str
    task_set: str
    arm: str
    solved: bool
    reward: float
    steps: int
    tokens: int
    seconds: float
    error: str | None
    tool_calls: Counter
    model_tokens: int
    detail: dict[str, Any] = field(repr=False)

    @property
    def pdb_calls(self) -> int:
        return self.tool_calls["pdb"]


@dataclass
class Row:
    """Solve counts of one arm (run, agent or model, strategy) on one task set, or on all of them."""

    episodes: int = 0
    solved: int = 0
    steps: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, episode: Episode) -> None:
        self.episodes += 1
        self.solved += episode.solved
        self.steps.append(episode.steps)
        self.tokens.append(episode.tokens)
        self.seconds.append(episode.seconds)

    @property
    def rate(self) -> float:
        return self.solved / self.episodes if self.episodes else 0.0

    def mean(self, values: str) -> float:
        data = getattr(self, values)
        return statistics.fmean(data) if data else 0.0


@dataclass
class Report:
    runs: list[str]
    episodes: list[Episode]
    arms: list[str]
    task_sets: list[str]
    table: dict[tuple[str, str], Row]  # (arm, task set or "all") -> row
    tool_use: dict[str, dict[str, Any]]  # arm -> {"calls": Counter, "pdb_solved": mean, "pdb_unsolved": mean, ...}


def arm_of(header: HeaderRecord, run: str, several_runs: bool) -> str:
    """"<run> · <model or agent> · <strategy>", the run named only when several are compared."""
    parts = [run] if several_runs else []
    parts += [header.model or header.agent or "?", header.strategy or "debug"]
    return " · ".join(parts)


def load(runs: list[Path]) -> Report:
    """Every complete episode of the run folders, summarised.

    Raises:
        ValueError: a run folder does not exist, or no folder holds a complete trajectory.
    """
    labels = _labels(runs)
    episodes = []
    for run, label in zip(runs, labels):
        for path, trajectory in trajectories([run]):
            episodes.append(_episode(f"e{len(episodes)}", label, path.stem, trajectory, len(runs) > 1))
    if not episodes:
        raise ValueError(f"no complete trajectory in {', '.join(map(str, runs))} (run with --out to record them)")
    arms = list(dict.fromkeys(e.arm for e in episodes))
    task_sets = sorted({e.task_set for e in episodes})
    table: dict[tuple[str, str], Row] = {}
    for episode in episodes:
        for column in (episode.task_set, "all"):
            table.setdefault((episode.arm, column), Row()).add(episode)
    return Report(labels, episodes, arms, task_sets, table, _tool_use(episodes, arms))


def _labels(runs: list[Path]) -> list[str]:
    names = [Path(run).resolve().name for run in runs]
    return names if len(set(names)) == len(names) else [f"{i + 1}:{name}" for i, name in enumerate(names)]


def _episode(key: str, run: str, name: str, trajectory: Trajectory, several_runs: bool) -> Episode:
    header, steps, result = trajectory.header, trajectory.steps, trajectory.result
    calls = Counter(step.action.name for step in steps)
    timeline, previous, model_tokens = [], header.tokens_used, 0
    by_tool: Counter = Counter({"problem statement": previous} if previous else {})
    for step in steps:
        info = step.info
        usage = step.exchange.completion_tokens if step.exchange else 0
        model_tokens += usage
        used = info.tokens_used if info.tokens_used is not None else previous
        tool = step.action.name
        by_tool[tool] += max(used - previous - usage, 0)
        previous = used
        observation = step.observation
        if len(observation) > MAX_OBSERVATION_CHARS:
            observation = (observation[:MAX_OBSERVATION_CHARS]
                           + f"\n[{len(observation) - MAX_OBSERVATION_CHARS} more characters in the trajectory]")
        timeline.append({"step": step.step, "tool": tool, "arguments": step.action.arguments,
                         "observation": observation, "reward": step.reward, "error": info.error,
                         "score": info.score, "max_score": info.max_score,
                         "tools_enabled": info.tools_enabled, "seconds": step.seconds,
                         "thought": step.exchange.thought if step.exchange else None})
    arm = arm_of(header, run, several_runs)
    detail = {"name": name, "run": run, "arm": arm, "task": header.task, "task_set": header.task_set,
              "problem": header.observation or "", "timeline": timeline, "diff": result.diff,
              "budget": [[tool, n] for tool, n in by_tool.most_common()] + [["model answers", model_tokens]],
              "limits": header.limits, "truncated_by": steps[-1].info.truncated_by if steps else None}
    return Episode(key, run, name, header.task, header.task_set or "?", arm, result.solved, result.reward,
                   result.steps, result.tokens, result.seconds, result.error, calls, model_tokens, detail)


def _tool_use(episodes: list[Episode], arms: list[str]) -> dict[str, dict[str, Any]]:
    use = {}
    for arm in arms:
        group = [e for e in episodes if e.arm == arm]
        solved, unsolved = [e for e in group if e.solved], [e for e in group if not e.solved]
        calls: Counter = Counter()
        for episode in group:
            calls.update(episode.tool_calls)
        mean = lambda values: statistics.fmean(values) if values else None  # noqa: E731
        use[arm] = {"calls": calls, "episodes": len(group),
                    "pdb_per_episode": mean([e.pdb_calls for e in group]),
                    "pdb_solved": mean([e.pdb_calls for e in solved]),
                    "pdb_unsolved": mean([e.pdb_calls for e in unsolved]),
                    "debugger_share": mean([any(e.tool_calls[t] for t in DEBUG_TOOLS) for e in group])}
    return use
