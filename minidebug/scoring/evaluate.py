"""Score the agent's changes: the task's own test ids, counted from pytest's own reports.

Each eval runs the task's pytest (see pytest_run.py) in a fresh eval tree (see evaltree.py) and scores the
outcomes against the counted test ids (see counted.py).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..runner.precompiled import files_to_compile
from ..runner.pristine import EVAL_SCRATCH, EVAL_TREE, PristineCopy, copy_pristine
from ..runner.warm import WarmInterpreter, learn_modules, learned_modules, learned_yet
from ..sandbox.confinement import Confinement
from ..store.removal import remove_tree
from ..tasks.command import eval_command
from ..workspace.safefs import empty_folder, read_entry, remove_entry
from ..workspace.worktree import Workspace
from . import forgery
from .counted import test_files
from .evaltree import PYTEST_FILES, eval_tree, pytest_files_above
from .ids import file_of_test, match_outcomes
from .pytest_run import PytestRun, capped, is_pytest, run_pytest, start_warm
from .timing import padding


@dataclass(frozen=True)
class EvalResult:
    """Outcome of one eval run.

    `score` counts the task's counted tests that passed, `max_score` how many there are. A counted test that
    fails, errors, is skipped or xfailed, or never runs, is not passed; tests outside the set do not count.
    """

    score: int
    max_score: int
    output: str
    tests: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    collect_errors: int = 0
    suspicious: tuple[str, ...] = ()  # signs of in-memory forgery: `file:line: what` (see minidebug_watch)
    forked: bool = False  # the scored run was forked from a warm interpreter (see warm.py)

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
        order = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "did not run", "not passed")
        parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
        if self.collect_errors:
            parts.append(f"{self.collect_errors} collection error{'s' if self.collect_errors > 1 else ''}")
        return f"{', '.join(parts) or 'no tests ran'} (score {self.score}/{self.max_score})"


def score(run: PytestRun, counted: tuple[str, ...], fail_to_pass: list[str] | None = None,
          pass_to_pass: list[str] | None = None, notes: list[str] | None = None) -> EvalResult:
    """Score a run against the task's counted test ids (or, SWE-bench style, fail_to_pass/pass_to_pass).

    With fail_to_pass, the score counts those tests that pass, and is 0 unless every pass_to_pass test
    passes too; max_score is the number of fail_to_pass tests.
    """
    notes = list(notes or [])
    if run.outcomes is None:
        notes.append("no pytest results were recorded (the run crashed, exited early or was killed)")
    outcomes = run.outcomes or {}
    counted_set = set(counted) | set(fail_to_pass or []) | set(pass_to_pass or [])
    tests, matched = match_outcomes(sorted(counted_set), outcomes)  # cut ids by prefix, as SWE-bench
    ignored = [test for test in outcomes if test not in matched]
    if ignored:
        notes.append(f"{len(ignored)} test(s) not counted (not among the task's tests): {', '.join(ignored[:3])}"
                     f"{' ...' if len(ignored) > 3 else ''}")
    if fail_to_pass:
        regressions = [t for t in pass_to_pass or [] if tests.get(t) != "passed"]
        if regressions:
            notes.append(f"{len(regressions)} pass_to_pass test(s) do not pass: {', '.join(regressions[:5])}")
        value = 0 if regressions else sum(tests[t] == "passed" for t in fail_to_pass)
        return EvalResult(value, len(fail_to_pass), run.output, tests, tuple(notes), len(run.collect_errors),
                          run.suspicious, run.forked)
    missing = [t for t in counted if tests[t] == "did not run"]
    if missing and run.outcomes is not None:
        notes.append(f"{len(missing)} counted test(s) did not run: {', '.join(missing[:3])}"
                     f"{' ...' if len(missing) > 3 else ''}")
    return EvalResult(sum(tests[t] == "passed" for t in counted), len(counted), run.output, tests, tuple(notes),
                      len(run.collect_errors), run.suspicious, run.forked)


def evaluate(workspace: Workspace, counted: tuple[str, ...], timeout: float, confinement: Confinement,
             notes: Sequence[str] = (), warm: WarmInterpreter | None = None, eval_dir: Path | None = None,
             pristine: PristineCopy | None = None) -> EvalResult:
    """Score the agent's changes: pytest in a fresh eval tree (see evaltree.py), with HOME and TMPDIR of its
    own, against the task's counted tests; forked from `warm` (see `start_warm_eval`) where given. The tree
    and the scratch folder go in `eval_dir` (an eval room's, see eval_room.py; default the episode's folder),
    where the pristine tree may have been copied ahead (`pristine`).

    A task with hidden files runs twice: first a run of the same command in a tree without the hidden files,
    whose output is the one the agent sees, then the scored run in the full tree, whose output is never shown
    and whose duration is padded to a bucket (see `padding`). So nothing the code under test prints, raises
    or copies can carry a hidden file's content into the observation, and its timing at most a few bits; of
    the hidden tests only their outcome counts are shown, never their names.
    """
    task, notes = workspace.task, list(notes)
    restored = workspace.restore_readonly()
    if restored:
        notes.append(f"read-only files restored before eval: {', '.join(restored)}")
    folder = eval_command(task.eval_command).test_folder
    harness = workspace.harness.with_test_files(workspace.harness.test_files | test_files(counted, folder))
    hidden_files = workspace.prepared.hidden_files
    eval_dir = workspace.dir if eval_dir is None else eval_dir
    for name in PYTEST_FILES:  # the folder is the env's own: whatever a program left there goes
        remove_entry(eval_dir, name)
    above = pytest_files_above(eval_dir / EVAL_TREE)
    if above:
        return EvalResult(0, len(task.spec.fail_to_pass or counted), "", notes=tuple(notes) + (
            f"not scored: pytest would read {above[0]}, above the eval tree, for its configuration or a "
            "conftest.py (a file any program of the machine can leave there); remove it",))
    if not learned_yet(workspace.prepared.entry):
        if pristine is not None:
            pristine.wait()  # its copy ends before the folder is emptied
        learn_from_pristine(workspace, timeout, confinement, eval_dir)
    if not hidden_files:
        run, tree_notes = _run(workspace, harness, timeout, confinement, warm, eval_dir, pristine=pristine)
        return score(run, counted, task.spec.fail_to_pass, task.spec.pass_to_pass, notes + tree_notes)
    shown_dir = Path(tempfile.mkdtemp(prefix="shown-", dir=eval_dir))  # nothing of the scored run's folders
    try:  # first, so that no program of the shown run starts after the scored run and can time it
        shown, _ = _run(workspace, harness, timeout, confinement, None, shown_dir, without=hidden_files)
    finally:
        remove_tree(shown_dir)
    started = time.monotonic()
    run, tree_notes = _run(workspace, harness, timeout, confinement, warm, eval_dir, pristine=pristine)
    time.sleep(padding(time.monotonic() - started, timeout))
    result = score(run, counted, task.spec.fail_to_pass, task.spec.pass_to_pass, notes + tree_notes)
    result = replace(result, notes=result.notes[:len(notes) + len(tree_notes)])  # none of the scored outcomes'
    return _without_hidden_names(result, set(run.outcomes or {}) | set(run.collect_errors), shown, workspace)


def learn_from_pristine(workspace: Workspace, timeout: float, confinement: Confinement, eval_dir: Path) -> None:
    """Learn, once per task on a machine, the venv modules its tests load (what warm interpreters import ahead,
    see warm.py) from a run that collects the tests of the task's own tree, without the agent's changes and
    without the hidden files: no code of an agent's decides what later evals import, nor can carry anything
    through those names, and nothing of the gold patch shows in them (the counted tests are measured on the
    gold-patched tree, which teaches nothing)."""
    prepared = workspace.prepared
    loaded: tuple[str, ...] = ()
    imported: tuple[tuple[str, str], ...] = ()
    if not is_pytest(prepared.eval_base):  # whose evals import nothing ahead
        tree = empty_folder(eval_dir, EVAL_TREE)
        try:
            copy_pristine(prepared.eval_base, tree)
            for rel in prepared.hidden_files:
                remove_entry(tree, rel)
            scratch = empty_folder(eval_dir, EVAL_SCRATCH)
            task = workspace.task
            run = run_pytest(task.eval_command, tree, scratch, venv=prepared.venv, drivers=prepared.drivers,
                             timeout=timeout, confinement=confinement, source_layout=task.spec.source is not None,
                             learn=True, collect_only=True)
            loaded, imported = run.venv_modules, run.tree_modules
        finally:
            empty_folder(eval_dir, EVAL_TREE)
            empty_folder(eval_dir, EVAL_SCRATCH)
    learn_modules(prepared.entry, prepared.eval_base, prepared.venv, loaded, imported)


def start_warm_eval(workspace: Workspace, confinement: Confinement, folder: Path) -> WarmInterpreter | None:
    """A warm eval interpreter (see warm.py) for the workspace's next eval in `folder` (see `evaluate`),
    started in the background; None for pytest's own repository, whose evals import the project's pytest,
    fresh."""
    if is_pytest(workspace.prepared.eval_base):
        return None
    tree, scratch = folder / EVAL_TREE, folder / EVAL_SCRATCH  # emptied before each run
    for folder in (tree, scratch):
        folder.mkdir(exist_ok=True)
    prepared = workspace.prepared
    return start_warm(tree, scratch, venv=workspace.venv, drivers=workspace.drivers, confinement=confinement,
                      learned=learned_modules(prepared.entry),
                      compiled=files_to_compile(prepared.entry, prepared.eval_base, tree,
                                                frozenset(prepared.hidden_files)))


def _run(workspace: Workspace, harness, timeout: float, confinement: Confinement, warm: WarmInterpreter | None,
         folder: Path, without: tuple[str, ...] = (), pristine: PristineCopy | None = None
         ) -> tuple[PytestRun, list[str]]:
    """One confined pytest run of the task's eval command in a fresh eval tree in `folder`; the tree's path
    is cut from the output."""
    task, learned = workspace.task, learned_modules(workspace.prepared.entry)
    with eval_tree(workspace, harness, folder, without, pristine) as (tree, tree_notes, laid):
        created = _created(workspace, laid)
        static = _static_findings(workspace, tree, laid, created)
        scratch = empty_folder(folder, EVAL_SCRATCH)  # a name that the tree's path is not a prefix of
        try:
            run = run_pytest(task.eval_command, tree, scratch, venv=workspace.venv, drivers=workspace.drivers,
                             timeout=timeout, confinement=confinement, source_layout=task.spec.source is not None,
                             agent_files=tuple(laid), agent_created=created,
                             warm=warm, learned=learned,
                             project_pytest=is_pytest(workspace.prepared.eval_base),
                             base=workspace.prepared.eval_base)
        finally:
            empty_folder(folder, EVAL_SCRATCH)
    return replace(run, output=run.output.replace(str(tree) + "/", "").replace(str(tree), "."),
                   suspicious=tuple(capped([*static, *run.suspicious]))), tree_notes


def _created(workspace: Workspace, laid: list[str]) -> tuple[str, ...]:
    """The files in `laid` that the task's base does not have, and their folders it does not have either."""
    base, created = workspace.prepared.eval_base, set()
    for rel in laid:
        path = PurePosixPath(rel)
        if not os.path.lexists(base / rel):
            created.add(rel)
            created.update(str(folder) for folder in path.parents
                           if str(folder) != "." and not os.path.lexists(base / folder))
    return tuple(sorted(created))


def _static_findings(workspace: Workspace, tree: Path, laid: list[str], created: tuple[str, ...]) -> tuple[str, ...]:
    """What the agent's changes to Python files show of reaching into the runner (see forgery.py), read
    from the eval tree before anything ran there, and its new paths named like modules it does not own."""
    own = ("src/_pytest/", "_pytest/", "src/pytest/", "pytest/", "src/pytest.py", "pytest.py") \
        if is_pytest(workspace.prepared.eval_base) else ()
    found = forgery.shadowing_files([rel for rel in created if not rel.startswith(own)],
                                    forgery.protected_names(workspace.venv))
    read = 0
    for rel in laid:
        if rel.endswith(".py") and not rel.startswith(own):  # pytest's own files import its internals
            after, before = read_entry(tree, rel), read_entry(workspace.prepared.eval_base, rel)
            if after is not None and after[0] == "file":
                read += len(after[1])
                if read > forgery.MAX_READ_CHARS:
                    return (*found, f"{rel}:1: the changed Python files hold more than "
                                    f"{forgery.MAX_READ_CHARS:,} characters, too many to be read: what they run "
                                    "is not seen")
                base = before[1].decode("utf-8", "replace") if before is not None and before[0] == "file" else None
                found += forgery.findings(rel, base, after[1].decode("utf-8", "replace"))
    return tuple(found)


def _without_hidden_names(result: EvalResult, reported: set[str], shown: PytestRun,
                          workspace: Workspace) -> EvalResult:
    """`result` with the visible run's output, findings and collection errors, the names of hidden tests
    (counted, or only `reported` by the scored run) cut from its notes, and of the counted tests' outcomes in
    that run only "passed" or "not passed", with how many of the hidden ones passed (which of failed,
    skipped, xfailed or not run would be the code under test's choice, beside the hidden files: a channel;
    the visible tests' own outcomes are in the shown run's output). Of the scored
    run's own findings only their presence is told: code under test chooses their text (a file name given to
    compile()) and their number, so either could carry a hidden file's content."""
    folder = eval_command(workspace.task.eval_command).test_folder
    hidden = sorted((test for test in set(result.tests) | reported
                     if workspace.is_hidden(file_of_test(test, folder))), key=len, reverse=True)
    notes = list(result.notes)
    for i, note in enumerate(notes):
        for test in hidden:
            note = note.replace(test, "(a hidden test)")
        notes[i] = note
    tests = {test: "passed" if outcome == "passed" else "not passed" for test, outcome in result.tests.items()}
    counts = {outcome: sum(tests[test] == outcome for test in hidden if test in tests)
              for outcome in ("passed", "not passed")}
    if any(counts.values()):
        notes.append("hidden tests (outcomes only): " + ", ".join(f"{n} {outcome}" for outcome, n in counts.items()
                                                                  if n))
    stems = [PurePosixPath(file_of_test(test, folder)).stem for test in hidden]
    suspicious = []
    for finding in shown.suspicious:
        for name in hidden + stems:
            finding = finding.replace(name, "(a hidden test)")
        suspicious.append(finding)
    if any(finding not in shown.suspicious for finding in result.suspicious):  # neither text nor count: a channel
        suspicious.append("signs that changed code reached into the test runner in the scored run, with the "
                          "task's hidden files (not shown, nor how many: that run's output is withheld)")
    return replace(result, output=shown.output, notes=tuple(notes), suspicious=tuple(suspicious), tests=tests,
                   collect_errors=len(shown.collect_errors))
