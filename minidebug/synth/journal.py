"""What a run of `minidebug synth` leaves in its out folder so that a run started again there goes on where it
stopped: the journal (`.synth-journal.jsonl`), written as candidates are judged, and the baseline
(`.synth-baseline.json`), the counted tests and coverage map measured at the commit.

The journal's first line says what the folder is made from (the clone, commit, seed, modifiers, the repository
whose recipe builds the venv, and whether name errors are kept); every other line is one candidate's verdict,
written as soon as the candidate's runs end, whatever the order: the tests that failed (with what a task's
files need of them) and, for a candidate that a task can be made of, those that passed. A line is flushed as it
is written, so a run stopped by Ctrl-C or killed loses the candidates in flight and no more; a line cut short by
a kill is dropped when the journal is opened again. Another run with the folder takes each judged candidate's
verdict from the journal instead of running it, and the baseline instead of measuring it again: outcomes are
taken in candidate order either way, so it keeps the same tasks as one run that was never stopped.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .validate import SynthError, TestOutcome

JOURNAL = ".synth-journal.jsonl"
BASELINE = ".synth-baseline.json"
FORMAT = 1


def candidate_key(path: str, source: str) -> str:
    """A candidate's name in the journal: its file and the digest of the file's text with the bug."""
    return f"{path}:{hashlib.sha256(source.encode('utf-8', 'surrogateescape')).hexdigest()[:32]}"


class Journal:
    """The verdicts already recorded in `out` for a run made from `identity`, and the file new ones go to."""

    def __init__(self, out: Path, identity: dict[str, Any]):
        self.out = Path(out)
        self.path = self.out / JOURNAL
        self.identity = {"format": FORMAT, **identity}
        self.verdicts: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.out.mkdir(parents=True, exist_ok=True)
        if self.path.is_file():
            self._read()
        else:
            tasks = sorted(p.name for p in self.out.iterdir() if (p / "task.toml").is_file())
            if tasks:
                named = ", ".join(tasks[:3]) + (", ..." if len(tasks) > 3 else "")
                raise SynthError(f"{self.out} holds task folders ({named}) but no {JOURNAL} saying what they were "
                                 f"made from: give another --out")
            self.path.write_text(json.dumps(self.identity) + "\n", encoding="utf-8")
        self._file = self.path.open("a", encoding="utf-8")

    def _read(self) -> None:
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):  # a line cut short by a kill: dropped, so that the next one starts a line
            data = data[:data.rfind(b"\n") + 1]
            with self.path.open("r+b") as file:
                file.truncate(len(data))
        lines = data.decode("utf-8", "surrogateescape").splitlines()
        try:
            recorded = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            recorded = None
        if not isinstance(recorded, dict):
            raise SynthError(f"{self.path} does not start with what the folder was made from: give another --out")
        differ = [name for name in sorted(set(recorded) | set(self.identity))
                  if recorded.get(name) != self.identity.get(name)]
        if differ:
            said = "; ".join(f"{name} {_shown(recorded.get(name))} there, {_shown(self.identity.get(name))} now"
                             for name in differ)
            raise SynthError(f"{self.out} holds tasks made otherwise ({said}): give the same options to go on "
                             f"with it, or another --out")
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                self.verdicts[entry["key"]] = entry

    def record(self, key: str, entry: Mapping[str, Any]) -> None:
        """One candidate's verdict, on a line of its own, flushed at once."""
        line = json.dumps({"key": key, **entry}, ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            self.verdicts[key] = {"key": key, **entry}

    def close(self) -> None:
        self._file.close()

    # -- the baseline ------------------------------------------------------------------------------------------

    def baseline(self) -> dict[str, Any] | None:
        """The baseline an earlier run with this folder measured, or None."""
        try:
            data = json.loads((self.out / BASELINE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) and data.get("format") == FORMAT else None

    def save_baseline(self, data: dict[str, Any]) -> None:
        temporary = self.out / f"{BASELINE}.partial"
        temporary.write_text(json.dumps({"format": FORMAT, **data}) + "\n", encoding="utf-8")
        temporary.replace(self.out / BASELINE)


def _shown(value: Any) -> str:
    return "none" if value is None else json.dumps(value)


def outcome_entry(failing: Mapping[str, TestOutcome]) -> dict[str, list[Any]]:
    return {test: [r.outcome, r.type, r.message, [list(frame) for frame in r.frames]] for test, r in failing.items()}


def outcomes_of(entry: Mapping[str, list[Any]]) -> dict[str, TestOutcome]:
    return {test: TestOutcome(outcome, kind, message, tuple((path, line) for path, line in frames))
            for test, (outcome, kind, message, frames) in entry.items()}
