"""`minidebug validate`: prove SWE-bench-style tasks runnable here, one row per task, several at once.

For a task with FAIL_TO_PASS / PASS_TO_PASS lists: on the base commit the FAIL_TO_PASS tests fail and the
PASS_TO_PASS ones pass; with the gold patch applied through `edit`, all of them pass; a reset brings the base
back. A task that cannot even be built here (its setup needs a compiler or a system library that is missing,
an interpreter that is not installed) gets a row saying so, instead of stopping the run.

Each row explains itself: the recipe and the interpreter its venv was built with, how long the build took,
the collection errors of each eval (a test module or conftest that could not be imported), and each test that
did not behave, with the first error line pytest printed for it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .gold import Eval, gold_run, one_line
from .pytest_output import PytestOutput

SHOWN = 10  # tests that did not behave, listed per task in the table (--json lists them all)

# Where SWE-bench's own runs of a repository's tests differ from the eval here in a way that makes a test its
# log recorded as failing on the base pass here: said beside "already pass on the base".
SWEBENCH_RAN = {
    "sympy/sympy": "SWE-bench ran `bin/test -C`: sympy's cache off and a random hash seed, under which tests of "
                   "old versions fail with a RecursionError or not by the seed (sympy__sympy-13177's test_mod_inverse "
                   "fails on its base with SYMPY_USE_CACHE=no PYTHONHASHSEED=2, passes with 0 or 1); eval runs pytest "
                   "with the cache on, where they pass",
}


@dataclass(frozen=True)
class Trouble:
    """A test that did not behave in one eval (`phase`: base or gold), or a collection error (`outcome`
    "collection error", `test` naming the module or conftest), with the first error line pytest printed."""

    phase: str
    test: str
    outcome: str
    expected: str = ""
    first_line: str = ""

    def describe(self) -> str:
        what = f"{self.outcome}, expected to {self.expected}" if self.expected else self.outcome
        return f"{self.phase}: {self.test} ({what}){': ' + self.first_line if self.first_line else ''}"


@dataclass(frozen=True)
class Validation:
    """One task's row: counts per phase, what is wrong (empty when valid), and why."""

    task: str
    fail_to_pass: int = 0
    pass_to_pass: int = 0
    base_failing: int = 0  # FAIL_TO_PASS tests that fail on the base (all of them, for a valid task)
    base_p2p_passing: int = 0
    gold_f2p_passing: int = 0
    gold_p2p_passing: int = 0
    reset_ok: bool = False
    problem: str = ""
    base_collect_errors: int = 0
    gold_collect_errors: int = 0
    troubles: tuple[Trouble, ...] = ()
    recipe: str = ""  # what the venv is built from
    python: str = ""  # the interpreter it runs on: version and resolved path
    build_seconds: float = 0.0  # making the episode: repository, venv (cached or built) and worktree

    @property
    def ok(self) -> bool:
        return not self.problem

    def to_json(self) -> str:
        """The row as one line of JSON (`ok` included)."""
        return json.dumps({**asdict(self), "ok": self.ok})


def validate_task(task_path: str, make_options: dict[str, Any] | None = None) -> Validation:
    """Validate one task folder; every failure becomes the row's `problem`, never an exception."""
    from ..core.make import make
    from ..tasks.task import load_task

    try:
        task = load_task(task_path)
    except Exception as exc:  # a broken task is a row, not a traceback
        return Validation(Path(task_path).name, problem=f"cannot load: {exc}")
    f2p, p2p = list(task.spec.fail_to_pass), list(task.spec.pass_to_pass)
    row: dict[str, Any] = {"task": task.name, "fail_to_pass": len(f2p), "pass_to_pass": len(p2p),
                           "recipe": describe_recipe(task.spec)}
    if not f2p:
        return Validation(**row, problem="no fail_to_pass tests: use `minidebug check` for this task")
    if task.solution is None:
        return Validation(**row, problem="no solution.patch")
    started = time.monotonic()
    try:
        with make(task, terminate_on_success=False, max_steps=10_000, **(make_options or {})) as env:
            env.reset()  # the build, timed apart from the evals
            assert env.workspace is not None, "reset() starts the episode's workspace"
            row.update(build_seconds=round(time.monotonic() - started, 2), python=describe_python(env.workspace.venv))
            run = gold_run(env)
    except Exception as exc:
        row.setdefault("build_seconds", round(time.monotonic() - started, 2))
        return Validation(**row, problem=f"cannot run here: {one_line(exc)}")
    if run.base.error:
        return Validation(**row, problem=_cannot_run(run.base.error))
    base = _explained("base", run.base, {t: "fail" for t in f2p})
    row.update(base_failing=len(f2p) - run.base.passed(f2p), base_p2p_passing=run.base.passed(p2p),
               base_collect_errors=base[0], troubles=base[1])
    if run.gold is None:
        return Validation(**row, problem=f"the gold patch's edit failed: {run.edit_error}")
    if run.gold.error:
        return Validation(**row, problem=_cannot_run(run.gold.error))
    gold = _explained("gold", run.gold, {t: "pass" for t in f2p + p2p})
    row.update(gold_f2p_passing=run.gold.passed(f2p), gold_p2p_passing=run.gold.passed(p2p),
               gold_collect_errors=gold[0], troubles=base[1] + gold[1])
    if run.after_reset.error:
        return Validation(**row, problem=_cannot_run(run.after_reset.error))
    again = run.after_reset
    row["reset_ok"] = (len(f2p) - again.passed(f2p), again.passed(p2p)) == \
        (row["base_failing"], row["base_p2p_passing"])
    problems = [f"the {phase} eval timed out after {limit} s (the task's eval_timeout: `--eval-timeout` or the "
                f"task's [limits] raise it)" for phase, limit in (("base", _timed_out(run.base)),
                                                                  ("gold", _timed_out(run.gold))) if limit]
    problems += [f"no test ran in the {phase} eval: {why}" for phase, why in
                 (("base", _nothing_ran(run.base, base[0])), ("gold", _nothing_ran(run.gold, gold[0]))) if why]
    offline = [trouble for trouble in gold[1] if needs_network(trouble.first_line)]
    if offline:
        example = offline[0]
        problems.append(f"needs the network: not runnable in a sandbox without one ({len(offline)} test(s) "
                        f"reached for it, e.g. {example.test}: {example.first_line[:160]})")
    if row["base_failing"] < len(f2p):
        problems.append(already_passing(len(f2p) - row["base_failing"],
                                        task.spec.environment.recipe if task.spec.environment is not None else None,
                                        internal_error=_INTERNAL_ERROR in run.base.output))
    if row["gold_f2p_passing"] < len(f2p):
        problems.append(f"{len(f2p) - row['gold_f2p_passing']} FAIL_TO_PASS test(s) still fail with the gold patch")
    if row["gold_p2p_passing"] < len(p2p):
        failing = [test for test in p2p if run.gold.tests.get(test) != "passed"]
        on_base = sum(run.base.tests.get(test) != "passed" for test in failing)
        also = f" ({on_base} of them on the base too: not the gold patch's doing)" if on_base else ""
        problems.append(f"{len(failing)} PASS_TO_PASS test(s) fail with the gold patch{also}")
    if not row["reset_ok"]:
        problems.append("reset does not bring the base results back")
    return Validation(**row, problem="; ".join(problems))


# What a test that reached for the network prints where there is none: a sandbox without a network (bwrap's
# own network namespace, Landlock's refusal of sockets) or a machine offline.
_OFFLINE = re.compile(r"Temporary failure in name resolution|Name or service not known|nodename nor servname"
                      r"|Network is unreachable|No route to host|gaierror|Failed to establish a new connection"
                      r"|Max retries exceeded with url|ConnectionError|URLError|ConnectTimeout"
                      r"|socket\.socket\(\) refused|\[Errno 1\] Operation not permitted.*socket")


_INTERNAL_ERROR = "\nINTERNALERROR> "  # how pytest prints an error of its own, which ends the run


def already_passing(count: int, recipe: str | None, internal_error: bool = False) -> str:
    """The problem of FAIL_TO_PASS tests that pass on the base, with what is known of why: for the recipe's
    repository (see SWEBENCH_RAN), and where the base's run ended in an error of pytest's own (`internal_error`)."""
    why = [SWEBENCH_RAN[recipe]] if recipe in SWEBENCH_RAN else []
    if internal_error:
        why.append("the base's run ends in pytest's INTERNALERROR, after which pytest prints no summary of the "
                   "tests that passed before it: SWE-bench's log, read from that summary, records them as failing; "
                   "here each test's outcome is recorded as it ends")
    said = f" ({'; '.join(why)})" if why else ""
    return f"{count} FAIL_TO_PASS test(s) already pass on the base{said}"


def _timed_out(result: Eval | None) -> str:
    """The limit an eval was killed at (its output's last line says so), or "" when it was not."""
    match = re.search(r"\[timed out after ([\d.]+) s", result.output) if result is not None else None
    return match.group(1) if match else ""


def _nothing_ran(result: Eval, collect_errors: int) -> str:
    """Why an eval ran no test at all when neither a timeout nor a collection error says so (the runner
    stopped before its first test: a crash, a usage error): the last line of its output that states an
    exception, else its last line. "" when a test ran or the eval's troubles already say why."""
    if collect_errors or _timed_out(result) or any(outcome != "did not run" for outcome in result.tests.values()):
        return ""
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    cause = next((line for line in reversed(lines) if re.search(r"\b[A-Z]\w*(Error|Exception)\b", line)), "")
    return (cause or (lines[-1] if lines else "it printed nothing"))[:300]


def needs_network(first_line: str) -> bool:
    """Whether a test's first error line says it reached for the network and found none."""
    return bool(_OFFLINE.search(first_line))


def _explained(phase: str, result: Eval, expected: dict[str, str]) -> tuple[int, tuple[Trouble, ...]]:
    """An eval's collection errors (counted, including a conftest that stopped pytest before it collected
    anything) and the troubles it shows: each collection error, and each test whose outcome is not the one
    `expected` ("pass" or "fail"), with the first error line pytest printed for it."""
    output = PytestOutput.read(result.output)
    collection = output.collection_errors()
    if not result.collect_errors and any(outcome != "did not run" for outcome in result.tests.values()):
        collection = []  # what it printed of any came from the tests' own runs of pytest (pytester's), captured:
        # a module the run itself could not collect is reported, and a conftest's import error runs no test
    troubles = [Trouble(phase, what, "collection error", first_line=line) for what, line in collection]
    for test, wanted in expected.items():
        outcome = result.tests.get(test, "did not run")
        if (outcome == "passed") != (wanted == "pass"):
            troubles.append(Trouble(phase, test, outcome, wanted, output.first_line(test)))
    return max(result.collect_errors, len(collection)), tuple(troubles)


def describe_recipe(spec) -> str:
    """What a task's venv is built from, in a few words."""
    from ..tasks.recipes import task_environment

    if spec.source is None:
        parts = [f"python {spec.python}" if spec.python else "", "requirements: " + ", ".join(spec.requirements)
                 if spec.requirements else ""]
        return "; ".join(filter(None, parts)) or "the task's own (pytest only)"
    environment = spec.environment
    try:
        recipe, commit = task_environment(spec)
    except Exception as exc:  # the build reports it too; the row says which recipe it was
        return f"{environment.recipe if environment else '?'}: {str(exc).splitlines()[0][:200]}"
    name = (f"recipe {environment.recipe}{' ' + environment.version if environment.version else ''}"
            if environment is not None and environment.recipe else "the task's own")
    details = [f"python {recipe.python}" if recipe.python else "",
               "install: " + "; ".join(recipe.install) if recipe.install else "pytest only", f"at {commit[:12]}"]
    lacking = recipe.lacking()
    return f"{name} ({', '.join(filter(None, details))}){'; ' + lacking if lacking else ''}"


def describe_python(venv: Path) -> str:
    """The interpreter of a venv: its version and resolved path."""
    version = ""
    try:
        for line in (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info") and not version:
                version = ".".join(value.strip().split(".")[:3])
    except OSError:
        pass
    return f"{version or '?'} {(venv / 'bin' / 'python').resolve()}"


def _cannot_run(error: str) -> str:
    """The problem of a task whose eval could not run: the eval's error, its first line."""
    return f"cannot run here: {error.strip().splitlines()[0][:300]}"


def _validate_spec(spec: tuple[str, dict[str, Any]]) -> Validation:
    return validate_task(*spec)


def validate_tasks(paths: list[str], jobs: int = 1, make_options: dict[str, Any] | None = None) -> list[Validation]:
    """Validate many task folders, `jobs` at a time (worker processes), in the order given."""
    return list(iter_validations(paths, jobs, make_options))


def iter_validations(paths: list[str], jobs: int = 1,
                     make_options: dict[str, Any] | None = None) -> Iterator[Validation]:
    """Each task folder's row as soon as it and those before it are done, `jobs` tasks at a time, in the
    order given (a long run shows its rows as it goes)."""
    specs = [(str(path), dict(make_options or {})) for path in paths]
    if jobs <= 1 or len(specs) <= 1:
        yield from (validate_task(*spec) for spec in specs)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(min(jobs, len(specs))) as pool:
        yield from pool.imap(_validate_spec, specs)


def format_validations(rows: list[Validation]) -> str:
    """A table: per task, the FAIL_TO_PASS failing on the base, passing with the gold patch, PASS_TO_PASS
    passing with it, the collection errors of the base and gold evals, and reset; under it, the interpreter,
    recipe and build time, the problems, and the tests that did not behave; a total."""
    width = max([len(r.task) for r in rows] + [4])
    lines = [f"{'task':<{width}}  base F2P fail  gold F2P pass  gold P2P pass  collect errors  reset  verdict"]
    for r in rows:
        collect = f"base {r.base_collect_errors} gold {r.gold_collect_errors}" \
            if r.base_collect_errors or r.gold_collect_errors else "-"
        lines.append(f"{r.task:<{width}}  {f'{r.base_failing}/{r.fail_to_pass}':>13}  "
                     f"{f'{r.gold_f2p_passing}/{r.fail_to_pass}':>13}  {f'{r.gold_p2p_passing}/{r.pass_to_pass}':>13}  "
                     f"{collect:>14}  {'ok' if r.reset_ok else '-':<5}  {'valid' if r.ok else 'INVALID'}")
        built = f"built in {r.build_seconds:.2f} s" if r.build_seconds else ""
        lines.append("  " + "; ".join(filter(None, [f"python {r.python}" if r.python else "", r.recipe, built])))
        if r.problem:
            lines.append(f"  {r.problem}")
        lines += [f"  {trouble.describe()}" for trouble in r.troubles[:SHOWN]]
        if len(r.troubles) > SHOWN:
            lines.append(f"  ... and {len(r.troubles) - SHOWN} more (--json lists them all)")
    lines.append(f"{sum(r.ok for r in rows)}/{len(rows)} tasks valid")
    return "\n".join(lines)
