"""JSONL trajectories: a header line, one line per step, a result line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, TextIO


class TrajectoryWriter:
    """Writes one episode as JSON lines; each line is flushed as it is written."""

    def __init__(self, path: Path, header: dict[str, Any]):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = path.open("w", encoding="utf-8")
        self._write({"type": "header", **header})

    def step(self, record: dict[str, Any]) -> None:
        self._write({"type": "step", **record})

    def finish(self, result: dict[str, Any]) -> None:
        self._write({"type": "result", **result})
        self.close()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    """The records of a trajectory file, in order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def trajectories(runs: list[Path]) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    """(path, records) of every complete trajectory in the run folders (or trajectory files), in name order.

    Raises:
        ValueError: a run folder or file does not exist.
    """
    for run in runs:
        run = Path(run)
        if not run.exists():
            raise ValueError(f"{run}: no such run folder or trajectory")
        for path in sorted(run.glob("*.jsonl")) if run.is_dir() else [run]:
            records = read_trajectory(path)
            if records and records[0].get("type") == "header" and records[-1].get("type") == "result":
                yield path, records
