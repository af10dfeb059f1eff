"""`minidebug synth`: task folders from procedural bugs in a repository with a pytest suite.

The venv is the one a `[source]` task at the commit gets (the environment recipe of `repository`, when one is
bundled or given, else pytest alone). The suite runs twice on the commit in a scratch tree, once traced (the
coverage map), and once as an episode's eval; the tests that pass in all three are the ones a bug can break. Every
mutation of the project's files that some of those tests reach is a candidate; the candidates are shuffled by the
seed (each modifier's in turn, so that every modifier gets its share) and tried in that order, `jobs` at a time,
each by the tests that reach its function and, when one of those fails as a bug worth debugging should (see
validate.judge), by the rest of the suite: each kept task's tests run once in full, which fixes FAIL_TO_PASS and
PASS_TO_PASS. Outcomes are taken in candidate order, so a seed gives the same tasks whatever the timing (timeouts
aside); a candidate whose failing tests, from the same function, are those of a task already kept is dropped.
Each verdict is recorded in the out folder as it comes (journal.py), so a run started again there takes the
verdicts and the baseline from it and goes on; candidates are judged in this process's threads, or by Ray actors.
"""

from __future__ import annotations

import configparser
import difflib
import fnmatch
import hashlib
import json
import queue
import random
import re
import shlex
import subprocess
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import TaskError, UsageError
from ..sandbox.choose import resolve
from ..tasks.history import TEST_FOLDERS, is_test_file, repository_version
from ..tasks.importers.common import toml_string
from .coverage import CoverageMap
from .journal import Journal, candidate_key, outcome_entry, outcomes_of
from .statement import StatementModel, Written, model_statement, problem_statement, source_of_test
from .validate import NAME_ERRORS, Scratch, SynthError, TestOutcome, judge

if TYPE_CHECKING:  # libcst is imported only when synth runs
    from .modifiers import Mutation, Site

DEFAULT_TEST = "python -m pytest -rA"


@dataclass(frozen=True)
class _Candidate:
    index: int
    mutation: Mutation
    original: str
    tests: frozenset[str]


@dataclass(frozen=True)
class _Outcome:
    candidate: _Candidate
    reason: str = ""
    failing: dict[str, TestOutcome] = field(default_factory=dict)
    passing: frozenset[str] = frozenset()
    seconds: float = 0.0


@dataclass
class SynthReport:
    """What `synthesize` tried, kept and dropped (by reason), and how long it took."""

    candidates: int = 0
    unreached: int = 0  # mutations that no passing test reaches: never tried
    tried: int = 0
    reachable: int = 0  # candidates that some passing test reaches, in the order they are tried
    resumed: int = 0  # of those tried, the ones judged by an earlier run with the same folder
    kept: list[Path] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    baseline_tests: int = 0
    # What the benchmark needs to try the same candidates another way: the venv, the eval's pytest arguments,
    # the tests counted (those passing in every baseline run) and the baseline's collection errors, and each
    # candidate tried, in order, with why it was dropped ("" when kept) and its seconds.
    venv: Path | None = None
    pytest_args: list[str] = field(default_factory=list)
    counted: frozenset[str] = frozenset()
    baseline_errors: frozenset[str] = frozenset()
    trials: list[tuple[Mutation, str, float]] = field(default_factory=list)

    def summary(self, out: Path) -> str:
        rows = [("candidates", str(self.candidates)), ("  reached by no passing test", str(self.unreached)),
                ("tried", str(self.tried))]
        rows += [("  judged by an earlier run", str(self.resumed))] if self.resumed else []
        rows += [("kept", str(len(self.kept)))]
        rows += [(f"  dropped: {reason}", str(count)) for reason, count in self.dropped.most_common()]
        ratio = f"{len(self.kept) / self.tried:.0%}" if self.tried else "-"
        per_task = f"{self.seconds / len(self.kept):.1f}" if self.kept else "-"
        rows += [("kept / tried", ratio), ("seconds", f"{self.seconds:.1f}"), ("seconds per kept task", per_task)]
        width = max(len(name) for name, _ in rows)
        return "\n".join([f"{name.ljust(width)}  {value}" for name, value in rows]
                         + [f"{len(self.kept)} task(s) written to {out}"])


def synthesize(clone: Path, out: Path, max_tasks: int, commit: str = "HEAD", seed: int = 0,
               modifiers: Sequence[str] | None = None, repository: str | None = None, jobs: int = 1,
               keep_name_errors: bool = False, timeout: float | None = None, cache_dir: Path | None = None,
               sandbox: str | None = None, progress: Callable[[str], None] | None = None,
               model: StatementModel | None = None, backend: str = "process", ray_address: str | None = None,
               on_trial: Callable[[SynthReport], None] | None = None) -> SynthReport:
    """Write up to `max_tasks` task folders under `out` from procedural bugs of `clone` at `commit`; every test
    run is confined in `sandbox` (as `make()` takes it: None runs them unconfined). With `model`, that chat
    model writes each problem statement (see statement.model_statement). `backend` "ray" judges the candidates
    as tasks of Ray actors (a local Ray of `jobs` CPUs, or the cluster at `ray_address`), "process" in this
    process's threads. `on_trial` is called with the report once the candidates are known and after each
    candidate. A folder `out` that an earlier run with the same clone, commit, seed, modifiers, repository and
    name-error choice wrote into is gone on with (see journal.py): its tasks count toward `max_tasks` and its
    judged candidates are not run again.

    Raises:
        SynthError: the clone or commit is not there, the suite does not run at the commit, or `out` holds
            tasks made otherwise.
        MinidebugError: libcst is missing (the `synth` extra), a modifier is unknown, the venv cannot be built,
            Ray is asked for and missing.
    """
    from .modifiers import CLASS_MODIFIERS, MODIFIERS, sites

    if backend not in ("process", "ray"):
        raise UsageError(f"unknown backend {backend!r}; choose 'process' or 'ray'")
    started = time.monotonic()
    say = progress or (lambda line: None)
    told = on_trial or (lambda report: None)
    clone = Path(clone).resolve()
    sha = _commit(clone, commit)
    unknown = sorted(set(modifiers or ()) - set(MODIFIERS))
    if unknown:
        raise UsageError(f"unknown modifier(s) {', '.join(unknown)}; known: {', '.join(sorted(MODIFIERS))}")
    journal = Journal(Path(out), {"clone": str(clone), "commit": sha, "seed": seed,
                                  "modifiers": sorted(set(modifiers)) if modifiers else sorted(MODIFIERS),
                                  "repository": repository, "keep_name_errors": keep_name_errors})
    try:
        return _synthesize(clone, sha, Path(out), journal, max_tasks, seed, modifiers, repository, jobs,
                           keep_name_errors, timeout, cache_dir, sandbox, say, told, model, backend, ray_address,
                           started, sites, CLASS_MODIFIERS)
    finally:
        journal.close()


def _synthesize(clone: Path, sha: str, out: Path, journal: Journal, max_tasks: int, seed: int,
                modifiers: Sequence[str] | None, repository: str | None, jobs: int, keep_name_errors: bool,
                timeout: float | None, cache_dir: Path | None, sandbox: str | None, say: Callable[[str], None],
                told: Callable[[SynthReport], None], model: StatementModel | None, backend: str,
                ray_address: str | None, started: float, sites: Callable[..., Iterable[Site]],
                class_modifiers: frozenset[str] | set[str]) -> SynthReport:
    writer = _Writer(clone, sha, model.client() if model is not None else None)
    files = [f for f in _git(clone, "ls-tree", "-r", "--name-only", "-z", sha).split("\0") if f]
    test_files = sorted(f for f in files if is_test_file(f))
    run_paths = _declared_test_paths(clone, sha, files) or _test_paths(test_files)
    if not run_paths:
        raise SynthError(f"{clone} has no test files at {sha[:12]} (test_*.py, *_test.py, or under tests/)")
    kind = resolve(sandbox)  # the candidates' runs are confined as an episode's programs are
    measured = journal.baseline()
    venv, test_command, environment, in_episodes = _environment(clone, sha, repository, run_paths, cache_dir,
                                                                 sandbox, measure=measured is None)
    pytest_args = _pytest_args(test_command) + run_paths
    say(f"venv: {venv}")
    report = SynthReport(venv=venv, pytest_args=pytest_args)

    first = Scratch(clone, sha, venv, pytest_args, sandbox=kind)
    made = [first]
    try:
        if measured is None:
            stable, baseline_errors, suite_seconds, cover = _baseline(first, sha, in_episodes)
            journal.save_baseline(_baseline_data(stable, baseline_errors, suite_seconds, cover))
        else:
            stable, baseline_errors, suite_seconds, cover = _baseline_of(measured)
            say(f"baseline of {sha[:12]} from {out}")
        report.baseline_tests = len(stable)
        report.counted, report.baseline_errors = frozenset(stable), frozenset(baseline_errors)
        limit = timeout if timeout is not None else max(10.0, 3 * suite_seconds + 10)
        plan = _Plan(frozenset(stable), frozenset(baseline_errors), limit, max(limit, 3 * suite_seconds + 10),
                     keep_name_errors, dict(Counter(test.split("::", 1)[0] for test in stable)))
        say(f"{len(stable)} test(s) pass at {sha[:12]} ({suite_seconds:.1f} s); candidate timeout {limit:g} s")

        by_modifier: dict[str, list[tuple[Site, str, frozenset[str]]]] = {}
        for path in cover.files():
            if not path.endswith(".py") or is_test_file(path) or path not in files:
                continue
            original = first.read(path)
            if installs_import_hooks(original):
                say(f"{path}: no candidates (it installs an import hook; an eval flags any fix of it)")
                continue
            for site in sites(path, original, modifiers):
                report.candidates += 1
                tests = cover.tests_reaching(path, None if site.modifier in class_modifiers else site.scope)
                if not tests:
                    report.unreached += 1
                    continue
                by_modifier.setdefault(site.modifier, []).append((site, original, frozenset(tests)))
        ordered = _interleave(by_modifier, seed)
        report.reachable = len(ordered)
        say(f"{report.candidates} candidate(s), {len(ordered)} reached by passing tests")
        if journal.verdicts:
            say(f"{len(journal.verdicts)} candidate(s) judged by an earlier run into {out}")
        told(report)

        judges: _LocalJudges | _RayJudges
        if backend == "ray":
            judges = _RayJudges(clone, sha, venv, pytest_args, kind, plan, jobs, ray_address)
        else:
            for _ in range(max(1, jobs) - 1):
                made.append(Scratch(clone, sha, venv, pytest_args, sandbox=kind))
            judges = _LocalJudges(made, plan)

        def attempt(candidate: _Candidate) -> _Outcome:
            outcome = judges.attempt(candidate)
            journal.record(_key(candidate), _entry(outcome, plan.counted))
            return outcome

        def recorded(candidate: _Candidate) -> _Outcome | None:
            entry = journal.verdicts.get(_key(candidate))
            return None if entry is None else _outcome_of(candidate, entry, plan.counted)

        kept_keys: set[tuple[str, str, frozenset[str]]] = set()
        try:
            for outcome, again in _in_order(_made(ordered), attempt, jobs, lambda: len(report.kept) >= max_tasks,
                                            recorded):
                report.tried += 1
                report.resumed += again
                mutation = outcome.candidate.mutation
                reason = outcome.reason
                key = (mutation.path, mutation.function, frozenset(outcome.failing))
                if not reason and key in kept_keys:
                    reason = "same failing tests as a kept task of its function"
                report.trials.append((mutation, reason, outcome.seconds))
                if reason:
                    report.dropped[reason] += 1
                    say(f"dropped {_where(mutation)}: {reason}")
                    told(report)
                    continue
                kept_keys.add(key)
                task = _write_task(out, outcome, clone, sha, repository, environment, test_command, run_paths,
                                   test_files, seed, writer)
                report.kept.append(task)
                say(f"kept {task.name}: {_where(mutation)}, {len(outcome.failing)} failing test(s) "
                    f"({outcome.seconds:.1f} s{', from an earlier run' if again else ''})")
                told(report)
        finally:
            judges.close()
    except KeyboardInterrupt:
        report.seconds = time.monotonic() - started
        _write_summary(out, report, clone, sha, repository, seed)
        raise
    finally:
        for scratch in made:
            scratch.close()
    report.seconds = time.monotonic() - started
    _write_summary(out, report, clone, sha, repository, seed)
    return report


def _baseline(first: Scratch, sha: str, in_episodes: set[str] | None
              ) -> tuple[set[str], set[str], float, CoverageMap]:
    """The suite at the commit, plain and traced: the tests that pass in both and in an episode's eval, the
    collection errors, the plain run's seconds and the coverage map."""
    plain = first.run(timeout=1800)
    traced = first.run(timeout=3600, trace=True)
    first.reset()
    for name, run in (("the suite", plain), ("the traced suite", traced)):
        if run.timed_out or run.exitstatus is None:
            raise SynthError(f"{name} did not run at {sha[:12]}: {run.output.strip()[-500:]}")
    # Tests that pass in plain runs but not in an episode's eval (its integrity checks) cannot count.
    stable = plain.passing() & traced.passing() & (in_episodes or set())
    if not stable:
        raise SynthError(f"no test passes at {sha[:12]}: {plain.output.strip()[-500:]}")
    baseline_errors = set(plain.collect_errors) | set(traced.collect_errors)
    return stable, baseline_errors, plain.seconds, CoverageMap.from_run(traced, stable)


def _baseline_data(stable: set[str], baseline_errors: set[str], seconds: float, cover: CoverageMap) -> dict[str, Any]:
    counted = sorted(stable)
    index = {test: i for i, test in enumerate(counted)}
    coverage = {path: {str(line): sorted(index[test] for test in tests) for line, tests in sorted(lines.items())}
                for path, lines in cover.by_file.items()}
    return {"counted": counted, "baseline_errors": sorted(baseline_errors), "suite_seconds": seconds,
            "coverage": coverage}


def _baseline_of(data: dict[str, Any]) -> tuple[set[str], set[str], float, CoverageMap]:
    counted = list(data["counted"])
    cover = CoverageMap({path: {int(line): {counted[i] for i in tests} for line, tests in lines.items()}
                         for path, lines in data["coverage"].items()})
    return set(counted), set(data["baseline_errors"]), float(data["suite_seconds"]), cover


@dataclass(frozen=True)
class _Plan:
    """What judging a candidate needs beyond its scratch tree (sent to each Ray actor): the counted tests, the
    baseline's collection errors, the timeouts of a candidate's own tests and of a whole-suite run, whether
    name errors are kept, and how many counted tests each test file has."""

    counted: frozenset[str]
    baseline_errors: frozenset[str]
    limit: float
    full_limit: float
    keep_name_errors: bool
    per_file: dict[str, int]

    def arguments(self, tests: Iterable[str]) -> list[str]:
        """What pytest is given to run `tests` (counted ones): a file whose counted tests are all asked for,
        by its path; the others by node id. Collecting by node id is the slower: on marshmallow, its 1229
        counted tests took 10.1 and 12.6 s by id against 8.2 and 10.5 s for its tests folder."""
        by_file: dict[str, list[str]] = {}
        for test in tests:
            by_file.setdefault(test.split("::", 1)[0], []).append(test)
        arguments = []
        for path, found in sorted(by_file.items()):
            arguments += [path] if len(set(found)) >= self.per_file.get(path, 0) > 0 else sorted(found)
        return arguments


def judge_candidate(scratch: Scratch, candidate: _Candidate, plan: _Plan) -> _Outcome:
    """Run a candidate's tests in `scratch` and, if a bug worth debugging shows, the rest of the suite; the tree
    is reset after."""
    began = time.monotonic()
    try:
        mutation = candidate.mutation
        scratch.write(mutation.path, mutation.source)
        # Tests that reach the candidate (a file whose counted tests all do, by its path, the others by node id:
        # see _Plan.arguments); where they lie in half the counted tests' files or more, the whole suite at once:
        # collecting (importing the test modules, and with them the project) is most of a run, and a kept
        # candidate's rest of the suite would collect those files again.
        whole = 2 * len(_files(candidate.tests)) >= len(plan.per_file)
        expected = set(plan.counted) if whole else set(candidate.tests)
        screen = scratch.run(None if whole else plan.arguments(candidate.tests),
                             plan.full_limit if whole else plan.limit)
        verdict = judge(screen, expected, set(plan.baseline_errors), plan.keep_name_errors)
        if verdict.reason:
            return _Outcome(candidate, verdict.reason, seconds=time.monotonic() - began)
        # The rest of the suite, so that each kept task's tests run once in full.
        rest = sorted(plan.counted - expected)
        failing, passing = dict(verdict.failing), screen.passing() & expected
        if rest:
            others = scratch.run(plan.arguments(rest), plan.full_limit)
            verdict = judge(others, set(rest), set(plan.baseline_errors), keep_name_errors=True)
            if verdict.reason and verdict.reason != "no test fails":
                return _Outcome(candidate, f"{verdict.reason} (rest of the suite)", seconds=time.monotonic() - began)
            failing.update(verdict.failing)
            passing |= others.passing() & set(rest)
        return _Outcome(candidate, "", failing, frozenset(passing), time.monotonic() - began)
    finally:
        scratch.reset()


class _LocalJudges:
    """The candidates judged in this process, each in one of `scratches` not in use."""

    def __init__(self, scratches: list[Scratch], plan: _Plan):
        self.plan = plan
        self.free: queue.Queue[Scratch] = queue.Queue()
        for scratch in scratches:
            self.free.put(scratch)

    def attempt(self, candidate: _Candidate) -> _Outcome:
        scratch = self.free.get()
        try:
            return judge_candidate(scratch, candidate, self.plan)
        finally:
            self.free.put(scratch)

    def close(self) -> None:
        pass  # the scratches are the caller's


class RemoteJudge:
    """A Ray actor's state: a scratch tree of its own, in which it judges one candidate at a time."""

    def __init__(self, clone: Path, sha: str, venv: Path, pytest_args: list[str], sandbox: str | None, plan: _Plan):
        self.scratch = Scratch(clone, sha, venv, pytest_args, sandbox=sandbox)
        self.plan = plan

    def attempt(self, candidate: _Candidate) -> _Outcome:
        return judge_candidate(self.scratch, candidate, self.plan)

    def close(self) -> None:
        self.scratch.close()


class _RayJudges:
    """`jobs` Ray actors (RemoteJudge), each on a CPU of a local Ray started here or of the cluster at
    `address`; there the clone, the venv and the cache must be at the same paths as here."""

    def __init__(self, clone: Path, sha: str, venv: Path, pytest_args: list[str], sandbox: str | None, plan: _Plan,
                 jobs: int, address: str | None):
        try:
            import ray
        except ImportError:
            raise UsageError("the ray backend needs Ray: pip install 'minidebug[ray]'") from None
        self.ray = ray
        self.started_here = not ray.is_initialized()
        if self.started_here:
            ray.init(address=address, num_cpus=None if address else max(1, jobs), include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        actor: Any = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(RemoteJudge)
        self.actors: list[Any] = [actor.remote(clone, sha, venv, pytest_args, sandbox, plan)
                                  for _ in range(max(1, jobs))]
        self.free: queue.Queue[Any] = queue.Queue()
        for handle in self.actors:
            self.free.put(handle)

    def attempt(self, candidate: _Candidate) -> _Outcome:
        handle = self.free.get()
        try:
            outcome: _Outcome = self.ray.get(handle.attempt.remote(candidate))
            return outcome
        finally:
            self.free.put(handle)

    def close(self) -> None:
        try:
            self.ray.get([handle.close.remote() for handle in self.actors], timeout=120)  # their scratch trees
        except Exception:  # an actor that died took its tree's removal with it: `minidebug gc` finds the rest
            pass
        finally:
            for handle in self.actors:
                self.ray.kill(handle)
            if self.started_here:
                self.ray.shutdown()


def _key(candidate: _Candidate) -> str:
    return candidate_key(candidate.mutation.path, candidate.mutation.source)


def _entry(outcome: _Outcome, counted: frozenset[str]) -> dict[str, Any]:
    """A verdict's journal line; for a kept candidate, the passing tests are written out only where they are not
    all the counted tests but the failing ones (as they are whenever every counted test ran: 100 kB a line on
    marshmallow otherwise)."""
    mutation = outcome.candidate.mutation
    entry: dict[str, Any] = {"candidate": outcome.candidate.index, "where": _where(mutation),
                             "reason": outcome.reason, "seconds": round(outcome.seconds, 3),
                             "failing": outcome_entry(outcome.failing)}
    if not outcome.reason:
        rest = outcome.passing == counted - set(outcome.failing)
        entry["passing"] = "the other counted tests" if rest else sorted(outcome.passing)
    return entry


def _outcome_of(candidate: _Candidate, entry: dict[str, Any], counted: frozenset[str]) -> _Outcome:
    failing = outcomes_of(entry.get("failing", {}))
    passing = entry.get("passing", ())
    return _Outcome(candidate, entry["reason"], failing,
                    counted - set(failing) if isinstance(passing, str) else frozenset(passing),
                    float(entry.get("seconds", 0.0)))


def _write_summary(out: Path, report: SynthReport, clone: Path, sha: str, repository: str | None, seed: int) -> None:
    """.synth-summary.json beside the task folders (a dot file, so that `OUT/*` globs the tasks alone): where
    they come from, what was tried, kept and dropped."""
    out.mkdir(parents=True, exist_ok=True)
    summary = {"clone": str(clone), "repository": repository, "commit": sha, "seed": seed,
               "counted_tests": report.baseline_tests, "candidates": report.candidates,
               "unreached": report.unreached, "tried": report.tried, "kept": [task.name for task in report.kept],
               "dropped": dict(report.dropped.most_common()), "seconds": round(report.seconds, 1)}
    (out / ".synth-summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


# An eval takes an import hook (a finder on sys.meta_path, a path hook, builtins.__import__) installed by a file
# the agent changed for a reach into the test runner, so a bug in such a file could not be fixed for a reward
# (toolz's tlz/_build_tlz.py puts its loader on sys.meta_path).
_IMPORT_HOOKS = re.compile(r"\bsys\.(meta_path|path_hooks)\b|\bbuiltins\.__import__\s*=(?!=)")


def installs_import_hooks(source: str) -> bool:
    """Whether a module's text touches sys.meta_path or sys.path_hooks or assigns `builtins.__import__`: synth
    makes no candidates in it."""
    return bool(_IMPORT_HOOKS.search(source))


def _files(tests: Iterable[str]) -> set[str]:
    """The test files of pytest node ids."""
    return {test.split("::", 1)[0] for test in tests}


def _where(mutation: Mutation) -> str:
    return f"{mutation.modifier} in {mutation.function} ({mutation.path}:{mutation.lines[0]})"


def _interleave(by_modifier: dict[str, list[tuple[Site, str, frozenset[str]]]],
                seed: int) -> list[tuple[Site, str, frozenset[str]]]:
    """Each modifier's sites shuffled by the seed, then taken in turn, one from each modifier."""
    rng = random.Random(seed)
    queues = []
    for name in sorted(by_modifier):
        found = list(by_modifier[name])
        rng.shuffle(found)
        queues.append(deque(found))
    ordered = []
    while any(queues):
        for waiting in queues:
            if waiting:
                ordered.append(waiting.popleft())
    return ordered


def _made(ordered: list[tuple[Site, str, frozenset[str]]]) -> Iterator[_Candidate]:
    """The candidates of the ordered sites, each mutation made when it is about to be tried; a mutation that
    changes nothing, does not compile or repeats an earlier one's text is skipped."""
    seen: set[tuple[str, str]] = set()
    for site, original, tests in ordered:
        mutation = site.mutate()
        if mutation is None or (mutation.path, mutation.source) in seen:
            continue
        seen.add((mutation.path, mutation.source))
        yield _Candidate(len(seen) - 1, mutation, original, tests)


def _in_order(candidates: Iterator[_Candidate], attempt: Callable[[_Candidate], _Outcome], jobs: int,
              done: Callable[[], bool], recorded: Callable[[_Candidate], _Outcome | None] = lambda c: None,
              ) -> Iterator[tuple[_Outcome, bool]]:
    """The outcomes of `attempt` over `candidates`, `jobs` at a time but yielded in candidate order, until
    `done()` says enough, each with whether it was `recorded` already (then it is not attempted); what was
    started beyond that is finished and not yielded, what was not started is not."""
    jobs = max(1, jobs)
    waiting: deque[tuple[Future[_Outcome], bool]] = deque()
    remaining = iter(candidates)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="minidebug-synth") as pool:
        def fill() -> None:
            while sum(not again for _, again in waiting) < 2 * jobs:
                candidate = next(remaining, None)
                if candidate is None:
                    return
                known = recorded(candidate)
                if known is None:
                    waiting.append((pool.submit(attempt, candidate), False))
                else:
                    future: Future[_Outcome] = Future()
                    future.set_result(known)
                    waiting.append((future, True))
        try:
            fill()
            while waiting and not done():
                future, again = waiting.popleft()
                yield future.result(), again
                if not done():
                    fill()
        finally:
            for future, _ in waiting:
                future.cancel()


def _write_task(out: Path, outcome: _Outcome, clone: Path, sha: str, repository: str | None,
                environment: list[str], test_command: str, run_paths: list[str], test_files: list[str],
                seed: int, writer: _Writer) -> Path:
    mutation = outcome.candidate.mutation
    path, original = mutation.path, outcome.candidate.original
    bug = unified_diff(path, original, mutation.source)
    digest = hashlib.sha256(bug.encode()).hexdigest()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", (repository or clone.name).rpartition("/")[2]) + f"-synth-{digest[:10]}"
    task = Path(out) / name
    if (task / "synth.json").is_file():  # written by an earlier run with this folder (synth.json comes last)
        return task
    task.mkdir(parents=True, exist_ok=True)
    (task / "bug.patch").write_text(bug, encoding="utf-8")
    (task / "solution.patch").write_text(unified_diff(path, mutation.source, original), encoding="utf-8")
    old_lines, new_lines = original.splitlines(), mutation.source.splitlines()
    first, last = mutation.lines
    buggy_first, buggy_last = mutation.buggy_lines
    forbidden = [line for line in old_lines[first - 1:last] + new_lines[buggy_first - 1:buggy_last] if line.strip()]
    statement = writer.write(outcome.failing, forbidden, [path, PurePosixPath(path).name, mutation.modifier], digest)
    description = statement.text
    reaches = any(frame_path == path and buggy_first <= line <= buggy_last
                  for result in outcome.failing.values() for frame_path, line in result.frames)
    lines = [
        f"description = {toml_string(description)}",
        f"eval = {toml_string(test_command + ' ' + ' '.join(shlex.quote(p) for p in run_paths))}",
        # pdb runs the failing tests alone: the eval narrowed to them would still run its other test paths first.
        f"entrypoint = {toml_string(test_command + ' ' + ' '.join(shlex.quote(t) for t in sorted(outcome.failing)))}",
        f"readonly = [{', '.join(toml_string(f) for f in test_files)}]",
        f"fail_to_pass = [{', '.join(toml_string(t) for t in sorted(outcome.failing))}]",
        f"pass_to_pass = [{', '.join(toml_string(t) for t in sorted(outcome.passing))}]",
        'tags = ["synth"]',
        "",
        "[source]",
        f"git = {toml_string(str(clone))}",
        f"commit = {toml_string(sha)}",
        'test_patch = "bug.patch"  # the bug, applied at the commit',
        *environment,
    ]
    (task / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    kinds = Counter(result.type or result.outcome for result in outcome.failing.values())
    meta = {
        "modifier": mutation.modifier,
        "path": path,
        "function": mutation.function,
        "lines": list(mutation.lines),
        "buggy_lines": list(mutation.buggy_lines),
        "failing_tests": len(outcome.failing),
        "failure_kinds": dict(sorted(kinds.items())),
        "only_name_errors": all(result.type in NAME_ERRORS for result in outcome.failing.values()),
        "traceback_reaches_change": reaches,
        "needs_runtime_information": not reaches,
        "commit": sha,
        "seed": seed,
        "candidate": outcome.candidate.index,
        "seconds": round(outcome.seconds, 2),
        "statement": statement.by,
    }
    (task / "synth.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return task


class _Writer:
    """Writes the problem statements: from the failing tests alone, or by a chat model's client shown the
    failing tests' source at the commit too."""

    def __init__(self, clone: Path, sha: str, client: object | None):
        self.clone, self.sha, self.client = clone, sha, client
        self.modules: dict[str, str] = {}

    def write(self, failing: dict[str, TestOutcome], forbidden: list[str], banned: list[str], key: str) -> Written:
        if self.client is None:
            return Written(problem_statement(failing, forbidden, key), "template")
        sources = {test: source_of_test(self._module(test.split("::", 1)[0]), test) for test in sorted(failing)[:10]}
        return model_statement(self.client, failing, forbidden, banned, key, sources)

    def _module(self, path: str) -> str:
        if path not in self.modules:
            try:
                self.modules[path] = _git(self.clone, "show", f"{self.sha}:{path}")
            except SynthError:
                self.modules[path] = ""
        return self.modules[path]


def unified_diff(path: str, before: str, after: str) -> str:
    """A `git apply` patch of one file's change from `before` to `after`."""
    diff = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}", n=3)
    text = [f"diff --git a/{path} b/{path}\n"]
    for line in diff:
        text.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(text)


def _test_paths(test_files: list[str]) -> list[str]:
    """What eval runs: each top test folder, and test modules outside such folders."""
    paths = set()
    for rel in test_files:
        parts = PurePosixPath(rel).parts
        folder = next((i for i, part in enumerate(parts[:-1]) if part in TEST_FOLDERS), None)
        if folder is not None:
            paths.add("/".join(parts[:folder + 1]))
        elif parts[-1] != "conftest.py" and rel.endswith(".py"):
            paths.add(rel)
    return sorted(p for p in paths if not any(p.startswith(q + "/") for q in paths))


def _declared_test_paths(clone: Path, sha: str, files: list[str]) -> list[str]:
    """The `testpaths` the project's pytest configuration declares (the first configuration file pytest would
    read: pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg), those that name files at the commit
    (globs too); [] when none is declared. A plain `pytest` in the project runs these, not every file named like
    a test (toolz's bench/test_*.py are benchmarks, one of which fetches a book at import)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    declared: list[str] | None = None
    for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        if name not in files:
            continue
        text = _git(clone, "show", f"{sha}:{name}")
        if name == "pyproject.toml":
            try:
                tool = tomllib.loads(text).get("tool", {})
            except tomllib.TOMLDecodeError:
                continue
            options = tool.get("pytest", {})
            options = options.get("ini_options", options) if isinstance(options, dict) else {}
            if not options:
                continue
            value = options.get("testpaths")
            declared = [value] if isinstance(value, str) else list(value or [])
        else:
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read_string(text)
            except configparser.Error:
                continue
            section = "tool:pytest" if name == "setup.cfg" else "pytest"
            if not parser.has_section(section):
                continue
            declared = parser.get(section, "testpaths", fallback="").split()
        break  # pytest reads the first file that configures it, and no other
    found = []
    for path in declared or []:
        path = path.strip().strip("/")
        if path.startswith("./"):
            path = path[2:]
        if any(f == path or f.startswith(path + "/") or fnmatch.fnmatch(f, path) or
               fnmatch.fnmatch(f, path + "/*") for f in files):
            found.append(path)
    return found


def _pytest_args(command: str) -> list[str]:
    argv = shlex.split(command)
    if "pytest" not in argv:
        raise SynthError(f"the test command {command!r} does not run `python -m pytest`")
    return argv[argv.index("pytest") + 1:]


def _environment(clone: Path, sha: str, repository: str | None, run_paths: list[str], cache_dir: Path | None,
                 sandbox: str | None, measure: bool = True) -> tuple[Path, str, list[str], set[str] | None]:
    """The venv of a `[source]` task at the commit, its test command, the `[environment]` lines of
    task.toml (none when no recipe names the repository), and (when `measure`, else None) the tests that pass
    in an episode's eval of it."""
    from ..core.make import make
    from ..store.cache import prepare
    from ..tasks.recipes import find_recipe
    from ..tasks.task import load_task

    environment: list[str] = []
    test_command = DEFAULT_TEST
    if repository:
        version = repository_version(clone, sha)
        try:
            recipe = find_recipe(repository, version or None)
        except TaskError:
            recipe = None
        if recipe is not None:
            test_command = recipe.test or DEFAULT_TEST
            environment = ["", "[environment]", f"recipe = {toml_string(repository)}"]
            environment += [f"version = {toml_string(version)}"] if version else []
    with tempfile.TemporaryDirectory(prefix="minidebug-synth-base-") as folder:
        base = Path(folder) / "synth-base"
        base.mkdir()
        (base / "task.toml").write_text("\n".join([
            'description = "The repository at the commit, for its venv."',
            f"eval = {toml_string(test_command + ' ' + ' '.join(shlex.quote(p) for p in run_paths))}",
            "", "[source]", f"git = {toml_string(str(clone))}", f"commit = {toml_string(sha)}", *environment,
        ]) + "\n", encoding="utf-8")
        task = load_task(base)
        prepared = prepare(task, cache_dir)
        if not measure:
            return prepared.venv, test_command, environment, None
        with make(task, cache_dir=cache_dir, sandbox=sandbox, eval_timeout=1800, terminate_on_success=False,
                  max_steps=10_000) as env:
            env.reset()
            result = env.evaluate()
    passing = {test for test, outcome in result.tests.items() if outcome == "passed"}
    return prepared.venv, test_command, environment, passing


def _commit(clone: Path, commit: str) -> str:
    if not clone.is_dir():
        raise SynthError(f"{clone}: no such folder")
    try:
        return _git(clone, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
    except SynthError:
        raise SynthError(f"{commit!r} is not a commit of {clone} (or it is not a git repository)") from None


def _git(clone: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True, errors="surrogateescape",
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SynthError(f"git {' '.join(args[:2])} in {clone} failed: {done.stderr.strip()[:300]}")
    return done.stdout
