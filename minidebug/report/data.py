"""What a report shows, computed from run folders: episodes, arms, the summary per arm and task set, tool use.

An arm is a model (or, without one, an agent) under one strategy: "qwen · debug". When two run folders hold
the same model and strategy, the run's name follows in brackets so that the two stay apart. Arms are ordered
alphabetically by model, then strategy (numbers by value: debug-after-2 before debug-after-10), then by the
order of the run folders on the command line; each keeps that place and one colour everywhere in the report.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.trajectory import EpisodeOutcome, Trajectory, trajectories
from ..errors import UsageError

MAX_OBSERVATION_CHARS = 20_000  # per step in an episode page; the trajectory keeps the whole text
DEBUG_TOOLS = ("pdb", "trace", "inspect")
BASELINE = "rewrite"  # the strategy without debugging tools, which the others are compared with
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")  # matplotlib's tab10, in its order: arm i gets COLOURS[i % 10]


@dataclass
class Episode:
    """One recorded episode, as the report needs it."""

    key: str
    run: str
    name: str
    outcome: EpisodeOutcome  # as the trajectory's result line records it (task, strategy, seed: its header's)
    task_set: str
    model: str  # the model, or the agent when there is none
    step_seconds: float  # the env's time in the steps (tool calls)
    tool_calls: Counter
    model_tokens: int
    debugger: bool  # pdb, trace or inspect was offered at some point of the episode
    unlocked: bool  # tools were unlocked during the episode (debug-after-N)
    suspicious: list[str]  # why an eval of the episode looked forged, if any did
    detail: dict[str, Any] = field(repr=False)
    arm: str = ""  # set once every episode is loaded (see `load`)

    @property
    def task(self) -> str:
        return self.outcome.task or "?"

    @property
    def strategy(self) -> str:
        return self.outcome.strategy

    @property
    def seed(self) -> int:
        return self.outcome.seed

    @property
    def solved(self) -> bool:
        return self.outcome.solved

    @property
    def reward(self) -> float:
        return self.outcome.reward

    @property
    def steps(self) -> int:
        return self.outcome.steps

    @property
    def tokens(self) -> int:
        return self.outcome.tokens

    @property
    def seconds(self) -> float:
        """The whole episode, as its result records it: setup, agent and steps."""
        return self.outcome.seconds

    @property
    def error(self) -> str | None:
        return self.outcome.error

    @property
    def pdb_calls(self) -> int:
        return self.tool_calls["pdb"]

    @property
    def setup_seconds(self) -> float:
        """The episode's time outside its steps: setup of the worktree and tools, and the agent's own time."""
        return max(self.seconds - self.step_seconds, 0.0)


@dataclass
class Row:
    """Solve counts of one arm on one task set, or on all of them."""

    episodes: int = 0
    solved: int = 0
    suspicious: int = 0
    steps: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    setup_seconds: list[float] = field(default_factory=list)

    def add(self, episode: Episode) -> None:
        self.episodes += 1
        self.solved += episode.solved
        self.suspicious += bool(episode.suspicious)
        self.steps.append(episode.steps)
        self.tokens.append(episode.tokens)
        self.seconds.append(episode.seconds)
        self.step_seconds.append(episode.step_seconds)
        self.setup_seconds.append(episode.setup_seconds)

    @property
    def rate(self) -> float:
        return self.solved / self.episodes if self.episodes else 0.0

    def mean(self, values: str) -> float:
        data = getattr(self, values)
        return statistics.fmean(data) if data else 0.0


@dataclass(frozen=True)
class Arm:
    """What an arm is: its model (or agent), strategy and run folder."""

    model: str
    strategy: str
    run: str
    colour: str


@dataclass
class Report:
    runs: list[str]
    episodes: list[Episode]
    arms: list[str]  # in the report's order (see the module docstring)
    task_sets: list[str]
    table: dict[tuple[str, str], Row]  # (arm, task set or "all") -> row
    tool_use: dict[str, dict[str, Any]]  # arm -> {"calls": Counter, "pdb_solved": mean or None, ...}
    arm_info: dict[str, Arm]

    def colour(self, arm: str) -> str:
        return self.arm_info[arm].colour


def natural_key(text: str) -> list:
    """Sorts text with its numbers by value: "debug-after-2" before "debug-after-10"."""
    return [int(part) if index % 2 else part for index, part in enumerate(re.split(r"(\d+)", text))]


def load(runs: list[Path]) -> Report:
    """Every complete episode of the run folders, summarised.

    Raises:
        ValueError: a run folder does not exist, or no folder holds a complete trajectory.
    """
    labels = _labels(runs)
    episodes: list[Episode] = []
    for run, label in zip(runs, labels):
        for path, trajectory in trajectories([run]):
            episodes.append(_episode(f"e{len(episodes)}", label, path.stem, trajectory))
    if not episodes:
        raise UsageError(f"no complete trajectory in {', '.join(map(str, runs))} (run with --out to record them)")
    arm_info = _arms(episodes, labels)
    by_key = {(info.model, info.strategy, info.run): arm for arm, info in arm_info.items()}
    for episode in episodes:
        episode.arm = episode.detail["arm"] = by_key[(episode.model, episode.strategy, episode.run)]
    arms = list(arm_info)
    task_sets = sorted({e.task_set for e in episodes})
    table: dict[tuple[str, str], Row] = {}
    for episode in episodes:
        for column in (episode.task_set, "all"):
            table.setdefault((episode.arm, column), Row()).add(episode)
    return Report(labels, episodes, arms, task_sets, table, _tool_use(episodes, arms), arm_info)


def _labels(runs: list[Path]) -> list[str]:
    names = [Path(run).resolve().name for run in runs]
    return names if len(set(names)) == len(names) else [f"{i + 1}:{name}" for i, name in enumerate(names)]


def _arms(episodes: list[Episode], runs: list[str]) -> dict[str, Arm]:
    """Each arm's name and description, in the report's order."""
    keys = sorted({(e.model, e.strategy, e.run) for e in episodes},
                  key=lambda k: (natural_key(k[0]), natural_key(k[1]), runs.index(k[2])))
    shared = Counter((model, strategy) for model, strategy, _ in keys)
    arms = {}
    for index, (model, strategy, run) in enumerate(keys):
        name = f"{model} · {strategy}" + (f" [{run}]" if shared[(model, strategy)] > 1 else "")
        arms[name] = Arm(model, strategy, run, COLOURS[index % len(COLOURS)])
    return arms


def split_unlock_note(observation: str, enabled: list[str] | None) -> tuple[str, str | None]:
    """The observation without the note that announces newly enabled tools, and that note (None if absent).

    The note is the last paragraph: a heading line, then one "- <tool>(...)" line per enabled tool.
    """
    if not enabled:
        return observation, None
    head, separator, note = observation.rpartition("\n\n")
    lines = note.split("\n")
    if separator and len(lines) == len(enabled) + 1 and all(
            line.startswith(f"- {tool}(") for line, tool in zip(lines[1:], enabled)):
        return head, note
    return observation, None


def _episode(key: str, run: str, name: str, trajectory: Trajectory) -> Episode:
    header, steps, result = trajectory.header, trajectory.steps, trajectory.result
    calls = Counter(step.action.name for step in steps)
    timeline, previous, model_tokens = [], header.tokens_used, 0
    by_tool: Counter = Counter({"problem statement": previous} if previous else {})
    offered = set(header.tools or ())
    unlocked, suspicious = False, []
    for step in steps:
        info = step.info
        usage = step.exchange.completion_tokens if step.exchange else 0
        model_tokens += usage
        used = info.tokens_used if info.tokens_used is not None else previous
        tool = step.action.name
        by_tool[tool] += max(used - previous - usage, 0)
        previous = used
        offered.update(info.tools_enabled or ())
        unlocked = unlocked or bool(info.tools_enabled)
        suspicious += [reason for reason in info.suspicious or () if reason not in suspicious]
        observation, note = split_unlock_note(step.observation, info.tools_enabled)
        if len(observation) > MAX_OBSERVATION_CHARS:
            observation = (observation[:MAX_OBSERVATION_CHARS]
                           + f"\n[{len(observation) - MAX_OBSERVATION_CHARS} more characters in the trajectory]")
        timeline.append({"step": step.step, "tool": tool, "arguments": step.action.arguments,
                         "observation": observation, "note": note, "reward": step.reward, "error": info.error,
                         "score": info.score, "max_score": info.max_score, "suspicious": info.suspicious or None,
                         "tools_enabled": info.tools_enabled, "seconds": step.seconds,
                         "thought": step.exchange.thought if step.exchange else None})
    suspicious += [reason for reason in getattr(result, "suspicious", None) or () if reason not in suspicious]
    strategy = header.strategy or "debug"
    debugger = bool(offered & set(DEBUG_TOOLS)) if header.tools is not None else strategy != BASELINE
    detail = {"name": name, "run": run, "task": header.task, "task_set": header.task_set,
              "problem": header.observation or "", "timeline": timeline, "diff": result.diff,
              "suspicious": suspicious,
              "budget": [[tool, n] for tool, n in by_tool.most_common()] + [["model answers", model_tokens]],
              "limits": header.limits, "truncated_by": steps[-1].info.truncated_by if steps else None}
    outcome = result.outcome().model_copy(update={"task": header.task, "strategy": strategy, "seed": header.seed})
    return Episode(key, run, name, outcome, header.task_set or "?", header.model or header.agent or "?",
                   round(sum(step.seconds for step in steps), 4), calls, model_tokens, debugger, unlocked,
                   suspicious, detail)


def _tool_use(episodes: list[Episode], arms: list[str]) -> dict[str, dict[str, Any]]:
    """Per arm: calls by tool, and how the debugger was used; the debugger's figures are None ("n/a") for an
    arm whose episodes never had it."""
    use = {}
    for arm in arms:
        group = [e for e in episodes if e.arm == arm]
        calls: Counter = Counter()
        for episode in group:
            calls.update(episode.tool_calls)
        available = any(e.debugger for e in group)
        counted = group if available else []
        withheld = any(e.unlocked or e.strategy.startswith("debug-after") for e in group)
        mean = lambda values: statistics.fmean(values) if values else None  # noqa: E731
        use[arm] = {"calls": calls, "episodes": len(group), "available": available,
                    "unlocked": sum(e.unlocked for e in group) if withheld else None,
                    "pdb_per_episode": mean([e.pdb_calls for e in counted]),
                    "pdb_solved": mean([e.pdb_calls for e in counted if e.solved]),
                    "pdb_unsolved": mean([e.pdb_calls for e in counted if not e.solved]),
                    "debugger_share": mean([any(e.tool_calls[t] for t in DEBUG_TOOLS) for e in counted])}
    return use
