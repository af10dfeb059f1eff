"""What a report shows, computed from run folders: episodes, the summary per arm and task set, tool use."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.trajectory import trajectories

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


def arm_of(header: dict[str, Any], run: str, several_runs: bool) -> str:
    """"<run> · <model or agent> · <strategy>", the run named only when several are compared."""
    parts = [run] if several_runs else []
    parts += [header.get("model") or header.get("agent") or "?", header.get("strategy") or "debug"]
    return " · ".join(parts)


def load(runs: list[Path]) -> Report:
    """Every complete episode of the run folders, summarised.

    Raises:
        ValueError: a run folder does not exist, or no folder holds a complete trajectory.
    """
    labels = _labels(runs)
    episodes = []
    for run, label in zip(runs, labels):
        for path, records in trajectories([run]):
            episodes.append(_episode(f"e{len(episodes)}", label, path.stem, records, len(runs) > 1))
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


def _episode(key: str, run: str, name: str, records: list[dict[str, Any]], several_runs: bool) -> Episode:
    header, result = records[0], records[-1]
    steps = [r for r in records if r.get("type") == "step"]
    calls = Counter((s.get("action") or {}).get("name", "?") for s in steps)
    timeline, previous, model_tokens = [], header.get("tokens_used", 0), 0
    by_tool: Counter = Counter({"problem statement": previous} if previous else {})
    for step in steps:
        info = step.get("info") or {}
        usage = sum(u.get("completion_tokens", u.get("output_tokens", 0)) or 0
                    for u in (step.get("model") or {}).get("usage", []))
        model_tokens += usage
        used = info.get("tokens_used", previous)
        tool = (step.get("action") or {}).get("name", "?")
        by_tool[tool] += max(used - previous - usage, 0)
        previous = used
        observation = step.get("observation", "")
        if len(observation) > MAX_OBSERVATION_CHARS:
            observation = (observation[:MAX_OBSERVATION_CHARS]
                           + f"\n[{len(observation) - MAX_OBSERVATION_CHARS} more characters in the trajectory]")
        timeline.append({"step": step.get("step"), "tool": tool, "arguments": (step.get("action") or {}).get("arguments"),
                         "observation": observation, "reward": step.get("reward"), "error": info.get("error"),
                         "score": info.get("score"), "max_score": info.get("max_score"),
                         "tools_enabled": info.get("tools_enabled"), "seconds": step.get("seconds"),
                         "thought": _thought(step)})
    arm = arm_of(header, run, several_runs)
    detail = {"name": name, "run": run, "arm": arm, "task": header.get("task"), "task_set": header.get("task_set"),
              "problem": header.get("observation", ""), "timeline": timeline, "diff": result.get("diff", ""),
              "budget": [[tool, n] for tool, n in by_tool.most_common()] + [["model answers", model_tokens]],
              "limits": header.get("limits", {}), "truncated_by": (steps[-1].get("info") or {}).get("truncated_by")
              if steps else None}
    return Episode(key, run, name, header.get("task", "?"), header.get("task_set") or "?", arm,
                   bool(result.get("solved")), float(result.get("reward") or 0.0), int(result.get("steps") or 0),
                   int(result.get("tokens") or 0), float(result.get("seconds") or 0.0), result.get("error"), calls,
                   model_tokens, detail)


def _thought(step: dict[str, Any]) -> str | None:
    """The text the model wrote along with this step's call, if any."""
    answers = [m for m in (step.get("model") or {}).get("messages", []) if m.get("role") == "assistant"]
    return (answers[-1].get("content") or None) if answers else None


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
