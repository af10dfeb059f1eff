"""Re-run a recorded trajectory and report every step whose observation differs."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.trajectory import HeaderRecord, StepRecord, read_trajectory
from ..errors import UsageError


@dataclass(frozen=True)
class Mismatch:
    """One field of one step that came out differently in the replay."""

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
        ValueError: the file is no trajectory (TrajectoryError: a malformed line or a newer format).
    """
    from ..core.make import make
    from ..tasks.task import load_task

    records = read_trajectory(Path(path))
    header = records[0] if records else None
    if not isinstance(header, HeaderRecord):
        raise UsageError(f"{path}: no header line; not a minidebug trajectory")
    recorded_path = header.task_path
    task = load_task(recorded_path if recorded_path and Path(recorded_path).is_dir() else header.task)
    warnings = []
    if task.content_hash() != header.task_hash:
        warnings.append(f"task {task.name} has changed since the recording (hash {header.task_hash} "
                        f"then, {task.content_hash()} now)")
    mismatches = []
    with make(task, tools=header.tools, strategy=header.strategy, cache_dir=cache_dir, **header.limits) as env:
        observation, _ = env.reset(seed=0)
        if header.observation is not None and observation != header.observation:
            mismatches.append(Mismatch(0, "observation", header.observation, observation))
        for record in (r for r in records if isinstance(r, StepRecord)):
            observation, reward, terminated, truncated, _ = env.step(record.action.to_call())
            got = (("observation", record.observation, observation), ("reward", record.reward, reward),
                   ("terminated", record.terminated, terminated), ("truncated", record.truncated, truncated))
            for field, expected, value in got:
                if expected != value:
                    mismatches.append(Mismatch(record.step, field, expected, value))
    return mismatches, warnings
