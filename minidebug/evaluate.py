"""Run a task's eval command in a workspace and score it from pytest's own results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .limits import Confinement
from .workspace import Workspace

_PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_report"


@dataclass(frozen=True)
class EvalResult:
    """Outcome of one eval run.

    `score` counts passing tests and `max_score` all tests that ran or failed to be
    collected (skipped ones excluded); a crash, import or collection error scores 0.
    """

    score: int
    max_score: int
    output: str
    tests: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def success(self) -> bool:
        return self.max_score > 0 and self.score == self.max_score

    @property
    def reward(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for outcome in self.tests.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "error", "skipped") if counts.get(k)]
        return f"{', '.join(parts) or 'no tests ran'} (score {self.score}/{self.max_score})"


def evaluate(workspace: Workspace, command: list[str], timeout: float, confinement: Confinement,
             fail_to_pass: list[str] | None = None, pass_to_pass: list[str] | None = None) -> EvalResult:
    """Run `command` in the worktree, hidden files put back for the run, read-only files restored first.

    With `fail_to_pass` (SWE-bench style), the score counts those tests that pass, and is 0 unless every
    `pass_to_pass` test passes too; max_score is the number of fail_to_pass tests.
    """
    notes = []
    restored = workspace.restore_readonly()
    if restored:
        notes.append(f"read-only files restored before eval: {', '.join(restored)}")
    report = workspace.tmp / "minidebug-report.json"
    report.unlink(missing_ok=True)
    env = workspace.environ(_PLUGIN_DIR)
    env["PYTEST_ADDOPTS"] += " -p minidebug_report"
    env["MINIDEBUG_REPORT"] = str(report)
    placed = workspace.overlay_hidden()
    try:
        completed, output = confinement.run(command, cwd=workspace.root, env=env, timeout=timeout)
    except OSError as exc:
        return EvalResult(0, 0, f"could not run {command[0]}: {exc}", notes=tuple(notes))
    finally:
        for path in placed:
            path.unlink(missing_ok=True)
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return EvalResult(0, 0, output, notes=tuple(notes + ["no pytest results were recorded"]))
    finally:
        report.unlink(missing_ok=True)
    tests = {str(k): str(v) for k, v in data.get("tests", {}).items()}
    errors = list(data.get("collect_errors", []))
    for nodeid in errors:
        tests.setdefault(nodeid, "error")
    if fail_to_pass:
        regressions = [t for t in pass_to_pass or [] if tests.get(t) != "passed"]
        if regressions:
            notes.append(f"{len(regressions)} pass_to_pass test(s) do not pass: {', '.join(regressions[:5])}")
        score = 0 if regressions else sum(tests.get(t) == "passed" for t in fail_to_pass)
        return EvalResult(score, len(fail_to_pass), output, tests, tuple(notes))
    scored = {k: v for k, v in tests.items() if v != "skipped"}
    score = 0 if errors else sum(v == "passed" for v in scored.values())
    return EvalResult(score, len(scored), output, tests, tuple(notes))
