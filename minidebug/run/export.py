"""Recorded runs in other formats: chat fine-tuning JSONL, and predictions for the SWE-bench harness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ..core.trajectory import trajectories


def conversation(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat as the model saw it, rebuilt from the steps' exchange records (system prompt first,
    the model's last answer last); empty when the agent recorded none (e.g. the oracle)."""
    messages: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") == "step" and record.get("model"):
            messages += record["model"]["messages"]
    return messages


def offered_tools(records: list[dict[str, Any]]) -> list[str]:
    """Every tool the episode offered: those at the start and those unlocked on the way."""
    names = list(records[0].get("tools", []))
    for record in records:
        names += (record.get("info") or {}).get("tools_enabled", []) if record.get("type") == "step" else []
    return list(dict.fromkeys(names))


def sft_examples(runs: list[Path], solved_only: bool = False) -> Iterator[dict[str, Any]]:
    """One chat fine-tuning example per recorded episode: {"messages", "tools", "metadata"}."""
    from ..tools import TOOLS, load_tool
    from ..tools.schemas import tool_schemas

    for path, records in trajectories(runs):
        header, result = records[0], records[-1]
        messages = conversation(records)
        if not messages or (solved_only and not result.get("solved")):
            continue
        tools = [load_tool(name) for name in offered_tools(records) if name in TOOLS]
        yield {"messages": messages, "tools": tool_schemas(tools, "openai"),
               "metadata": {"episode": path.stem, "task": header.get("task"), "task_set": header.get("task_set"),
                            "agent": header.get("agent"), "strategy": header.get("strategy", "debug"),
                            "model": header.get("model"), "solved": bool(result.get("solved")),
                            "reward": result.get("reward"), "steps": result.get("steps")}}


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
    for _, records in trajectories(runs):
        header, result = records[0], records[-1]
        name = header.get("model") or header.get("agent") or "minidebug"
        if header.get("strategy", "debug") != "debug":
            name = f"{name}__{header['strategy']}"
        key, seed = (header.get("task", "?"), name), int(header.get("seed") or 0)
        if key not in chosen or seed < chosen[key][0]:
            chosen[key] = (seed, {"instance_id": key[0], "model_name_or_path": name,
                                  "model_patch": result.get("diff", "")})
    return [prediction for _, prediction in sorted(chosen.values(), key=lambda item: (item[1]["model_name_or_path"],
                                                                                      item[1]["instance_id"]))]


def export_predictions(runs: list[Path], out: Path) -> int:
    """Write `predictions(runs)` to `out` as a JSON list (what the SWE-bench harness reads with
    --predictions_path); returns how many."""
    records = predictions(runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(records)
