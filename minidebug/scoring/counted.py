"""The test ids a task counts, fixed once per task content and stored beside its cached repo.

In order of precedence: `fail_to_pass` + `pass_to_pass` (SWE-bench style) or `tests` listed in task.toml;
else the tests that pass once the gold patch is applied (so a test the task itself skips or expects to
fail never counts), less those whose id a second collection does not give again (a time or a random value in a
parametrized id: no later run could report that test); else, for a task without solution.patch, every test
collected from the base. Nothing an episode does can change the set: the score is how many of these ids passed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..errors import TaskError
from ..runner.pristine import copy_pristine
from ..runner.warm import learn_modules
from ..sandbox.confinement import Confinement
from ..store import facts
from ..store.cache import PreparedTask
from ..store.gitcmd import git
from ..store.locks import file_lock
from ..tasks.task import Task
from .evaltree import pytest_files_above
from .ids import file_of_test
from .pytest_run import is_pytest, run_pytest

COUNTED_FILE = "counted-tests.json"


def counted_tests(task: Task, prepared: PreparedTask, confinement: Confinement, timeout: float) -> tuple[str, ...]:
    """The task's counted test ids (measured on first use, then read from the cache).

    Raises:
        TaskError: no test passes with the gold patch, or none can be collected.
    """
    spec = task.spec
    if spec.fail_to_pass:
        return tuple(dict.fromkeys(spec.fail_to_pass + spec.pass_to_pass))
    if spec.tests:
        return tuple(spec.tests)
    stored = _stored(prepared)
    if stored is None:
        with file_lock(prepared.entry.with_suffix(".counted.lock")):
            stored = _stored(prepared)
            if stored is None:  # never measured, or the file is not the one the host wrote
                stored = _measure(task, prepared, confinement, timeout)
                facts.write(prepared.entry, COUNTED_FILE, stored)
    return tuple(stored["counted"])


def counted_known(task: Task, prepared: PreparedTask) -> bool:
    """Whether `counted_tests` has its answer without running anything (listed, or measured on this machine)."""
    return bool(task.spec.fail_to_pass or task.spec.tests) or _stored(prepared) is not None


def gold_failures(prepared: PreparedTask) -> list[str]:
    """Tests that failed or errored with the gold patch applied when the counted set was measured."""
    stored = _stored(prepared)
    return list(stored.get("gold_failures", [])) if stored is not None else []


def _stored(prepared: PreparedTask) -> dict | None:
    stored = facts.read(prepared.entry, COUNTED_FILE)
    return stored if isinstance(stored, dict) and isinstance(stored.get("counted"), list) else None


def _measure(task: Task, prepared: PreparedTask, confinement: Confinement, timeout: float) -> dict:
    work = Path(tempfile.mkdtemp(prefix="minidebug-count-"))
    try:
        tree, scratch = work / "tree", work / "scratch"
        above = pytest_files_above(tree)
        if above:
            raise TaskError(f"{task.root}: cannot measure which tests count: pytest would read {above[0]}, above "
                            "the tree, for its configuration or a conftest.py; remove it")
        copy_pristine(prepared.eval_base, tree)
        scratch.mkdir()
        if task.solution is not None:
            git(tree, "apply", str(task.solution), env={"GIT_DIR": str(prepared.bare_repo), "GIT_WORK_TREE": str(tree)})
        # What warm interpreters import ahead is learned from the task's base, never from the gold-patched tree:
        # pdb sessions forked from one would show which modules the fix imports (see learn_from_pristine).
        learn = task.solution is None and not prepared.hidden_files and not is_pytest(prepared.eval_base)
        run = run_pytest(task.eval_command, tree, scratch, venv=prepared.venv, drivers=prepared.drivers,
                         timeout=timeout, confinement=confinement, source_layout=task.spec.source is not None,
                         collect_only=task.solution is None, project_pytest=is_pytest(prepared.eval_base),
                         learn=learn)
        if learn and run.outcomes is not None:  # what warm interpreters import ahead: no separate run for it
            learn_modules(prepared.entry, prepared.eval_base, prepared.venv, run.venv_modules, run.tree_modules)
        again = None
        if task.solution is not None and run.outcomes is not None:  # ids that change from run to run never count
            again = run_pytest(task.eval_command, tree, scratch, venv=prepared.venv, drivers=prepared.drivers,
                               timeout=timeout, confinement=confinement, source_layout=task.spec.source is not None,
                               collect_only=True, project_pytest=is_pytest(prepared.eval_base))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    output = "" if prepared.hidden_files else run.output[-2000:]  # an observation never shows hidden files
    if run.outcomes is None:
        raise TaskError(f"{task.root}: cannot tell which tests count: the eval command wrote no results:\n"
                        f"{output}")
    failures: list[str] = []
    unstable: list[str] = []
    if task.solution is not None:
        ids = [test for test, outcome in run.outcomes.items() if outcome == "passed"]
        if again is not None and again.outcomes is not None and again.collected:
            stable = set(again.collected)  # a time or a random value in a parametrized id: not the same test twice
            unstable = sorted(test for test in ids if test not in stable)
            ids = [test for test in ids if test in stable]
        failures = [test for test, outcome in run.outcomes.items() if outcome in ("failed", "error")]
        failures += list(run.collect_errors)
        what = "no test passes with solution.patch applied"
    else:
        ids = list(run.collected)
        what = "no test could be collected"
    if not ids:
        raise TaskError(f"{task.root}: {what}; list the tests that count in task.toml (`tests = [...]`):\n"
                        f"{output}")
    measured = {"counted": sorted(ids), "gold_failures": sorted(failures)}
    if unstable:
        measured["unstable"] = unstable
    return measured


def test_files(counted: tuple[str, ...], folder: str = "") -> frozenset[str]:
    """The files that hold the counted tests (the part of each id before `::`; a unittest id's module in
    `folder`, see ids.file_of_test)."""
    return frozenset(file_of_test(test, folder) for test in counted)
