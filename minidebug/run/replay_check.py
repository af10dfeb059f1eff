"""Re-run a recorded trajectory and report every step whose observation differs."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.trajectory import read_trajectory


@dataclass(frozen=True)
class Mismatch:
    step: int  # 0 is the observation of reset()
    field: str
    expected: Any
    got: Any

    def describe(self) -> str:
        if self.field == "observation":
            diff = difflib.unified_diff(str(self.expected).splitlines(), str(self.got).splitlines(),
                                        "recorded", "replayed", lineterm="", n=1)
            return f"step {self.step}: observation differs\n" + "\n".join(list(diff)[:40])
        return f"step {self.step}: {self.field} was {self.expected!r}, now {self.got!r}"


def replay(path: Path, cache_dir: Path | None = None) -> tuple[list[Mismatch], list[str]]:
    """Replay the trajectory at path in a fresh env.

    Returns the mismatches and warnings (e.g. the task changed since the recording).

    Raises:
        TaskError: the recorded task cannot be found.
    """
    from ..core.make import make

    from ..tasks.task import load_task

    records = read_trajectory(Path(path))
    header = records[0] if records and records[0].get("type") == "header" else {}
    if not header:
        raise ValueError(f"{path}: no header line; not a minidebug trajectory")
    recorded_path = header.get("task_path")
    task = load_task(recorded_path if recorded_path and Path(recorded_path).is_dir() else header["task"])
    warnings = []
    if task.content_hash() != header.get("task_hash"):
        warnings.append(f"task {task.name} has changed since the recording (hash {header.get('task_hash')} "
                        f"then, {task.content_hash()} now)")
    limits = header.get("limits", {})
    mismatches = []
    with make(task, tools=header.get("tools"), strategy=header.get("strategy", "debug"), cache_dir=cache_dir,
                        **limits) as env:
        observation, _ = env.reset(seed=0)
        if "observation" in header and observation != header["observation"]:
            mismatches.append(Mismatch(0, "observation", header["observation"], observation))
        for record in (r for r in records if r.get("type") == "step"):
            observation, reward, terminated, truncated, _ = env.step(record["action"])
            got = {"observation": observation, "reward": reward, "terminated": terminated, "truncated": truncated}
            for field, value in got.items():
                if record.get(field) != value:
                    mismatches.append(Mismatch(record["step"], field, record.get(field), value))
    return mismatches, warnings
