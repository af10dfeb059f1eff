"""Recorded runs in other formats: chat fine-tuning JSONL, and predictions for the SWE-bench harness."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.trajectory import Record, StepRecord, Trajectory, trajectories


def conversation(records: Iterable[Record]) -> list[dict[str, Any]]:
    """The chat as the model saw it, rebuilt from the steps' exchange records (system prompt first,
    the model's last answer last); empty when the agent recorded none (e.g. the oracle)."""
    messages: list[dict[str, Any]] = []
    for record in records:
        if isinstance(record, StepRecord) and record.exchange is not None:
            messages += record.exchange.messages
    return messages


def offered_tools(trajectory: Trajectory) -> list[str]:
    """Every tool the episode offered: those at the start and those unlocked on the way."""
    names = list(trajectory.header.tools or [])
    for step in trajectory.steps:
        names += step.info.tools_enabled or []
    return list(dict.fromkeys(names))


def sft_examples(runs: list[Path], solved_only: bool = False) -> Iterator[dict[str, Any]]:
    """One chat fine-tuning example per recorded episode: {"messages", "tools", "metadata"}."""
    from ..tools import TOOLS, load_tool
    from ..tools.schemas import tool_schemas

    for path, trajectory in trajectories(runs):
        header, result = trajectory.header, trajectory.result
        messages = conversation(trajectory.steps)
        if not messages or (solved_only and not result.solved):
            continue
        tools = [load_tool(name) for name in offered_tools(trajectory) if name in TOOLS]
        yield {"messages": messages, "tools": tool_schemas(tools, "openai"),
               "metadata": {"episode": path.stem, "task": header.task, "task_set": header.task_set,
                            "agent": header.agent, "strategy": header.strategy, "model": header.model,
                            "solved": result.solved, "reward": result.reward, "steps": result.steps}}


def export_sft(runs: list[Path], out: Path, solved_only: bool = False) -> int:
    """Write the examples to `out` as JSONL; returns how many were written."""
    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for example in sft_examples(runs, solved_only):
            handle.write(json.dumps(example, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(out)
    return count


def predictions(runs: list[Path]) -> list[dict[str, Any]]:
    """One SWE-bench prediction per task and arm: `instance_id` (the task's name), `model_name_or_path` (the
    model or agent, and the strategy when it is not "debug"), `model_patch` (the episode's final diff). With
    several seeds of a task and arm, the lowest seed's episode is used."""
    chosen: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for _, trajectory in trajectories(runs):
        header = trajectory.header
        name = header.model or header.agent or "minidebug"
        if header.strategy != "debug":
            name = f"{name}__{header.strategy}"
        key, seed = (header.task, name), header.seed
        if key not in chosen or seed < chosen[key][0]:
            chosen[key] = (seed, {"instance_id": key[0], "model_name_or_path": name,
                                  "model_patch": trajectory.result.diff})
    return [prediction for _, prediction in sorted(chosen.values(), key=lambda item: (item[1]["model_name_or_path"],
                                                                                      item[1]["instance_id"]))]


def export_predictions(runs: list[Path], out: Path) -> list[tuple[Path, int]]:
    """Write `predictions(runs)` as JSON lists (what the SWE-bench harness reads with --predictions_path), one
    file per arm, since the harness keys predictions by `instance_id`: `out` itself when the runs hold one arm,
    else `<out's stem>.<arm><out's suffix>` beside it for each. Returns (file, how many) per file written."""
    arms: dict[str, list[dict[str, Any]]] = {}
    for prediction in predictions(runs):
        arms.setdefault(prediction["model_name_or_path"], []).append(prediction)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for arm, records in arms.items():
        path = out if len(arms) == 1 else out.with_name(f"{out.stem}.{_file_part(arm)}{out.suffix}")
        path.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append((path, len(records)))
    return written


def _file_part(name: str) -> str:
    """An arm's name as part of a file name (a model name may hold slashes)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)
