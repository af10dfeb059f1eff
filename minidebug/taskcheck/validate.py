"""`minidebug validate`: prove SWE-bench-style tasks runnable here, one row per task, several at once.

For a task with FAIL_TO_PASS / PASS_TO_PASS lists: on the base commit the FAIL_TO_PASS tests fail and the
PASS_TO_PASS ones pass; with the gold patch applied through `edit`, all of them pass; a reset brings the base
back. A task that cannot even be built here (its setup needs a compiler or a system library that is missing,
an interpreter that is not installed) gets a row saying so, instead of stopping the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .gold import gold_run


@dataclass(frozen=True)
class Validation:
    """One task's row: counts per phase, and what is wrong (empty when valid)."""

    task: str
    fail_to_pass: int = 0
    pass_to_pass: int = 0
    base_failing: int = 0  # FAIL_TO_PASS tests that fail on the base (all of them, for a valid task)
    base_p2p_passing: int = 0
    gold_f2p_passing: int = 0
    gold_p2p_passing: int = 0
    reset_ok: bool = False
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def validate_task(task_path: str, make_options: dict[str, Any] | None = None) -> Validation:
    """Validate one task folder; every failure becomes the row's `problem`, never an exception."""
    from ..core.make import make

    from ..tasks.task import load_task

    try:
        task = load_task(task_path)
    except Exception as exc:  # a broken task is a row, not a traceback
        return Validation(Path(task_path).name, problem=f"cannot load: {exc}")
    f2p, p2p = list(task.spec.fail_to_pass), list(task.spec.pass_to_pass)
    row: dict[str, Any] = {"task": task.name, "fail_to_pass": len(f2p), "pass_to_pass": len(p2p)}
    if not f2p:
        return Validation(**row, problem="no fail_to_pass tests: use `minidebug check` for this task")
    if task.solution is None:
        return Validation(**row, problem="no solution.patch")
    try:
        with make(task, terminate_on_success=False, max_steps=10_000, **(make_options or {})) as env:
            run = gold_run(env)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Validation(**row, problem=f"cannot run here: {type(exc).__name__}: {first[:300]}")
    if run.base.error:
        return Validation(**row, problem=_cannot_run(run.base.error))
    row.update(base_failing=len(f2p) - run.base.passed(f2p), base_p2p_passing=run.base.passed(p2p))
    if run.gold is None:
        return Validation(**row, problem=f"the gold patch's edit failed: {run.edit_error}")
    if run.gold.error:
        return Validation(**row, problem=_cannot_run(run.gold.error))
    row.update(gold_f2p_passing=run.gold.passed(f2p), gold_p2p_passing=run.gold.passed(p2p))
    if run.after_reset.error:
        return Validation(**row, problem=_cannot_run(run.after_reset.error))
    again = run.after_reset
    row["reset_ok"] = (len(f2p) - again.passed(f2p), again.passed(p2p)) == \
        (row["base_failing"], row["base_p2p_passing"])
    problems = []
    if row["base_failing"] < len(f2p):
        problems.append(f"{len(f2p) - row['base_failing']} FAIL_TO_PASS test(s) already pass on the base")
    if row["gold_f2p_passing"] < len(f2p):
        problems.append(f"{len(f2p) - row['gold_f2p_passing']} FAIL_TO_PASS test(s) still fail with the gold patch")
    if row["gold_p2p_passing"] < len(p2p):
        problems.append(f"{len(p2p) - row['gold_p2p_passing']} PASS_TO_PASS test(s) fail with the gold patch")
    if not row["reset_ok"]:
        problems.append("reset does not bring the base results back")
    return Validation(**row, problem="; ".join(problems))


def _cannot_run(error: str) -> str:
    """The problem of a task whose eval could not run: the eval's error, its first line."""
    return f"cannot run here: {error.strip().splitlines()[0][:300]}"


def _validate_spec(spec: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return asdict(validate_task(*spec))


def validate_tasks(paths: list[str], jobs: int = 1, make_options: dict[str, Any] | None = None) -> list[Validation]:
    """Validate many task folders, `jobs` at a time (worker processes), in the order given."""
    specs = [(str(path), dict(make_options or {})) for path in paths]
    if jobs <= 1 or len(specs) <= 1:
        return [validate_task(*spec) for spec in specs]
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(min(jobs, len(specs))) as pool:
        return [Validation(**row) for row in pool.map(_validate_spec, specs)]


def format_validations(rows: list[Validation]) -> str:
    """A table: per task, the FAIL_TO_PASS failing on the base, passing with the gold patch, PASS_TO_PASS
    passing with it, and reset; the problems under it; a total."""
    width = max([len(r.task) for r in rows] + [4])
    lines = [f"{'task':<{width}}  base F2P fail  gold F2P pass  gold P2P pass  reset  verdict"]
    for r in rows:
        lines.append(f"{r.task:<{width}}  {f'{r.base_failing}/{r.fail_to_pass}':>13}  "
                     f"{f'{r.gold_f2p_passing}/{r.fail_to_pass}':>13}  {f'{r.gold_p2p_passing}/{r.pass_to_pass}':>13}  "
                     f"{'ok' if r.reset_ok else '-':<5}  {'valid' if r.ok else 'INVALID'}")
        if r.problem:
            lines.append(f"  {r.problem}")
    lines.append(f"{sum(r.ok for r in rows)}/{len(rows)} tasks valid")
    return "\n".join(lines)
