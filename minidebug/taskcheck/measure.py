"""FAIL_TO_PASS and PASS_TO_PASS of an instance, measured here, and instances made from fix commits.

The instance is imported as a task (see minidebug.tasks.importers.swebench) that counts every test passing
with its gold patch; the gold-patch routine (see gold.py) evals it on the base commit with the test patch,
with the fix applied through `edit`, and on the base again after a reset. A test that passes with the fix
and fails in both base evals is FAIL_TO_PASS; one that passes in all three is PASS_TO_PASS; one whose two
base outcomes differ is flaky and left out. A test whose id names a path of this machine (a temporary
folder among its parameters: it changes from run to run, so no later run gives that id) is left out too, as
the importer leaves such ids out (see minidebug.tasks.importers.swebench.portable). An instance with no
FAIL_TO_PASS test is rejected, saying why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tasks.history import HistoryError, check_source, instance_from_commit
from ..tasks.importers.swebench import import_swebench, portable
from ..tasks.patch import parse_patch
from ..tasks.task import Task, load_task
from .gold import gold_run

# The importer needs a FAIL_TO_PASS id; the measuring task forgets it, so that every passing test counts.
_STAND_IN = "minidebug-measures-this"


@dataclass(frozen=True)
class Measured:
    """An instance with its FAIL_TO_PASS and PASS_TO_PASS measured, or `problem`: why it is rejected."""

    instance: dict[str, Any]
    problem: str = ""
    flaky: tuple[str, ...] = ()  # tests whose outcome on the base differed between its two evals
    machine_bound: tuple[str, ...] = ()  # tests whose ids name a path of this machine
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problem


@dataclass
class HistoryReport:
    """What `instances_from_history` kept and rejected, by commit as given."""

    kept: list[Measured] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)

    def summary(self, out: Path) -> str:
        lines = [f"{m.instance['instance_id']}: {len(m.instance['FAIL_TO_PASS'])} FAIL_TO_PASS, "
                 f"{len(m.instance['PASS_TO_PASS'])} PASS_TO_PASS ({m.seconds:.1f} s"
                 f"{f'; {len(m.flaky)} flaky left out' if m.flaky else ''}"
                 f"{f'; {len(m.machine_bound)} left out naming a path of this machine' if m.machine_bound else ''})"
                 for m in self.kept]
        lines += [f"rejected {commit}: {reason}" for commit, reason in self.rejected.items()]
        lines.append(f"{len(self.kept)} instance(s) written to {out}")
        return "\n".join(lines)


def measure_instance(instance: dict[str, Any], clone: Path, make_options: dict[str, Any] | None = None) -> Measured:
    """`instance` (its tests' lists ignored) with FAIL_TO_PASS and PASS_TO_PASS measured in episodes of
    minidebug, its repository cloned from `clone`; every failure is the result's `problem`, never raised."""
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="minidebug-measure-"))
    try:
        problem, outcome = _measure(instance, clone, work, make_options or {})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = round(time.monotonic() - started, 1)
    if problem:
        return Measured(instance, problem, seconds=seconds)
    fail_to_pass, pass_to_pass, flaky, machine_bound = outcome
    return Measured({**instance, "FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass}, "", flaky,
                    machine_bound, seconds)


def _measure(instance: dict[str, Any], clone: Path, work: Path, make_options: dict[str, Any]):
    from ..core.make import make

    try:
        test_files = sorted({p.new_path for p in parse_patch(instance.get("test_patch") or "") if p.new_path})
    except ValueError as exc:
        return f"the test patch does not parse: {exc}", None
    if not test_files:
        return "the test patch adds or changes no file", None
    repos, out = work / "repos", work / "tasks"
    repos.mkdir()
    (repos / str(instance["repo"]).replace("/", "__")).symlink_to(Path(clone).resolve())
    stand_in = {**instance, "FAIL_TO_PASS": [f"{test_files[0]}::{_STAND_IN}"], "PASS_TO_PASS": []}
    (work / "instance.json").write_text(json.dumps([stand_in]), encoding="utf-8")
    report = import_swebench(work / "instance.json", out, repos)
    if not report.made:
        return "cannot import: " + "; ".join({**report.skipped, **report.failed}.values()), None
    loaded = load_task(report.made[0])
    task = Task(loaded.root, loaded.spec.model_copy(update={"fail_to_pass": [], "pass_to_pass": []}), repo=None)
    options = {"eval_timeout": 300, **make_options, "terminate_on_success": False, "max_steps": 10_000}
    try:
        with make(task, **options) as env:
            run = gold_run(env)
    except Exception as exc:  # the task cannot be built here: a row, not a traceback
        return f"cannot run here: {type(exc).__name__}: {_reason(str(exc), work) or type(exc).__name__}", None
    for phase, result in (("base", run.base), ("gold", run.gold), ("base after reset", run.after_reset)):
        if result is None:
            return f"the fix's edit failed: {run.edit_error}", None
        if result.error:
            return f"cannot run the tests ({phase}): {_reason(result.error, work)}", None
    assert run.gold is not None  # the loop returned where it is None
    passing = [test for test, outcome in run.gold.tests.items() if outcome == "passed"]
    machine = (str(work), os.path.join(tempfile.gettempdir(), ""))
    machine_bound = tuple(sorted(test for test in passing if not portable(test, machine)))
    passing = [test for test in passing if test not in machine_bound]
    base = [test for test in passing if run.base.tests.get(test) == "passed"]
    again = [test for test in passing if run.after_reset.tests.get(test) == "passed"]
    flaky = tuple(sorted(set(base) ^ set(again)))
    fail_to_pass = sorted(set(passing) - set(base) - set(again))
    pass_to_pass = sorted(set(base) & set(again))
    if not fail_to_pass:
        return (f"no FAIL_TO_PASS test: of the {len(passing)} test(s) passing with the fix, "
                f"{len(pass_to_pass)} pass without it too" + (f" and {len(flaky)} are flaky" if flaky else "")
                + (f"; {len(machine_bound)} more left out: their ids name a path of this machine"
                   if machine_bound else "")), None
    return "", (fail_to_pass, pass_to_pass, flaky, machine_bound)


def _reason(error: str, work: Path) -> str:
    """An error's first line and the last line of what it quotes that states an exception (`...Error: why`),
    without the paths of the measuring task."""
    lines = [line.strip() for line in error.replace(f"{work}/tasks/", "").splitlines() if line.strip()]
    if not lines:
        return ""
    cause = next((line for line in reversed(lines[1:]) if re.search(r"\b[A-Z]\w*(Error|Exception): ", line)), "")
    return lines[0][:300] + (f" ({cause[:200]})" if cause else "")


def instances_from_history(clone: Path, commits: list[str], repository: str, out: Path,
                           make_options: dict[str, Any] | None = None,
                           progress: Callable[[str], None] | None = None) -> HistoryReport:
    """Make an instance of each fix commit of `clone` and measure it; write those kept to `out` (JSON lines).

    Raises:
        HistoryError: `clone` is no git repository, or `repository` is no owner/name.
    """
    check_source(clone, repository)
    report = HistoryReport()
    for commit in commits:
        try:
            measured = measure_instance(instance_from_commit(clone, commit, repository), clone, make_options)
        except HistoryError as exc:
            measured = Measured({}, str(exc))
        if measured.ok:
            report.kept.append(measured)
        else:
            report.rejected[commit] = measured.problem
        if progress is not None:
            progress(f"{commit}: {'kept' if measured.ok else 'rejected: ' + measured.problem}")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("".join(json.dumps(m.instance) + "\n" for m in report.kept), encoding="utf-8")
    return report
