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
from typing import TYPE_CHECKING

from ..errors import TaskError
from ..sandbox.choose import resolve
from ..tasks.history import TEST_FOLDERS, is_test_file, repository_version
from ..tasks.importers.common import toml_string
from .coverage import CoverageMap
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
                ("tried", str(self.tried)), ("kept", str(len(self.kept)))]
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
               model: StatementModel | None = None) -> SynthReport:
    """Write up to `max_tasks` task folders under `out` from procedural bugs of `clone` at `commit`; every test
    run is confined in `sandbox` (as `make()` takes it: None runs them unconfined). With `model`, that chat
    model writes each problem statement (see statement.model_statement).

    Raises:
        SynthError: the clone or commit is not there, or the suite does not run at the commit.
        MinidebugError: libcst is missing (the `synth` extra), a modifier is unknown, the venv cannot be built.
    """
    from .modifiers import CLASS_MODIFIERS, sites

    started = time.monotonic()
    say = progress or (lambda line: None)
    clone = Path(clone).resolve()
    sha = _commit(clone, commit)
    writer = _Writer(clone, sha, model.client() if model is not None else None)
    files = [f for f in _git(clone, "ls-tree", "-r", "--name-only", "-z", sha).split("\0") if f]
    test_files = sorted(f for f in files if is_test_file(f))
    run_paths = _declared_test_paths(clone, sha, files) or _test_paths(test_files)
    if not run_paths:
        raise SynthError(f"{clone} has no test files at {sha[:12]} (test_*.py, *_test.py, or under tests/)")
    kind = resolve(sandbox)  # the candidates' runs are confined as an episode's programs are
    venv, test_command, environment, in_episodes = _environment(clone, sha, repository, run_paths, cache_dir, sandbox)
    pytest_args = _pytest_args(test_command) + run_paths
    say(f"venv: {venv}")
    report = SynthReport(venv=venv, pytest_args=pytest_args)

    scratches: queue.Queue[Scratch] = queue.Queue()
    made: list[Scratch] = []
    try:
        for _ in range(max(1, jobs)):
            made.append(Scratch(clone, sha, venv, pytest_args, sandbox=kind))
            scratches.put(made[-1])
        first = made[0]
        plain = first.run(timeout=1800)
        traced = first.run(timeout=3600, trace=True)
        first.reset()
        for name, run in (("the suite", plain), ("the traced suite", traced)):
            if run.timed_out or run.exitstatus is None:
                raise SynthError(f"{name} did not run at {sha[:12]}: {run.output.strip()[-500:]}")
        # Tests that pass in plain runs but not in an episode's eval (its integrity checks) cannot count.
        stable = plain.passing() & traced.passing() & in_episodes
        if not stable:
            raise SynthError(f"no test passes at {sha[:12]}: {plain.output.strip()[-500:]}")
        report.baseline_tests = len(stable)
        baseline_errors = set(plain.collect_errors) | set(traced.collect_errors)
        report.counted, report.baseline_errors = frozenset(stable), frozenset(baseline_errors)
        limit = timeout if timeout is not None else max(10.0, 3 * plain.seconds + 10)
        full_limit = max(limit, 3 * plain.seconds + 10)
        say(f"{len(stable)} test(s) pass at {sha[:12]} ({plain.seconds:.1f} s); candidate timeout {limit:g} s")
        cover = CoverageMap.from_run(traced, stable)
        all_files = _files(stable)

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
                tests = cover.tests_reaching(path, None if site.modifier in CLASS_MODIFIERS else site.scope)
                if not tests:
                    report.unreached += 1
                    continue
                by_modifier.setdefault(site.modifier, []).append((site, original, frozenset(tests)))
        ordered = _interleave(by_modifier, seed)
        say(f"{report.candidates} candidate(s), {len(ordered)} reached by passing tests")

        def attempt(candidate: _Candidate) -> _Outcome:
            scratch = scratches.get()
            began = time.monotonic()
            try:
                mutation = candidate.mutation
                scratch.write(mutation.path, mutation.source)
                # Tests that reach the candidate, by node id; where they lie in half the counted tests' files or
                # more, the whole suite at once: collecting (importing the test modules, and with them the
                # project) is most of a run, and a kept candidate's rest of the suite would collect those
                # files again.
                whole = 2 * len(_files(candidate.tests)) >= len(all_files)
                expected = stable if whole else set(candidate.tests)
                screen = scratch.run(None if whole else sorted(candidate.tests), full_limit if whole else limit)
                verdict = judge(screen, expected, baseline_errors, keep_name_errors)
                if verdict.reason:
                    return _Outcome(candidate, verdict.reason, seconds=time.monotonic() - began)
                # The rest of the suite, so that each kept task's tests run once in full.
                rest = sorted(stable - expected)
                failing, passing = dict(verdict.failing), screen.passing() & expected
                if rest:
                    others = scratch.run(rest, full_limit)
                    verdict = judge(others, set(rest), baseline_errors, keep_name_errors=True)
                    if verdict.reason and verdict.reason != "no test fails":
                        return _Outcome(candidate, f"{verdict.reason} (rest of the suite)",
                                        seconds=time.monotonic() - began)
                    failing.update(verdict.failing)
                    passing |= others.passing() & set(rest)
                return _Outcome(candidate, "", failing, frozenset(passing), time.monotonic() - began)
            finally:
                scratch.reset()
                scratches.put(scratch)

        kept_keys: set[tuple[str, str, frozenset[str]]] = set()
        for outcome in _in_order(_made(ordered), attempt, jobs, lambda: len(report.kept) >= max_tasks):
            report.tried += 1
            mutation = outcome.candidate.mutation
            reason = outcome.reason
            key = (mutation.path, mutation.function, frozenset(outcome.failing))
            if not reason and key in kept_keys:
                reason = "same failing tests as a kept task of its function"
            report.trials.append((mutation, reason, outcome.seconds))
            if reason:
                report.dropped[reason] += 1
                say(f"dropped {_where(mutation)}: {reason}")
                continue
            kept_keys.add(key)
            task = _write_task(out, outcome, clone, sha, repository, environment, test_command, run_paths,
                               test_files, seed, writer)
            report.kept.append(task)
            say(f"kept {task.name}: {_where(mutation)}, {len(outcome.failing)} failing test(s) "
                f"({outcome.seconds:.1f} s)")
    finally:
        for scratch in made:
            scratch.close()
    report.seconds = time.monotonic() - started
    _write_summary(Path(out), report, clone, sha, repository, seed)
    return report


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
              done: Callable[[], bool]) -> Iterator[_Outcome]:
    """The outcomes of `attempt` over `candidates`, `jobs` at a time but yielded in candidate order, until
    `done()` says enough; what was started beyond that is finished and not yielded."""
    jobs = max(1, jobs)
    waiting: deque[Future[_Outcome]] = deque()
    remaining = iter(candidates)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="minidebug-synth") as pool:
        def fill() -> None:
            while len(waiting) < 2 * jobs:
                candidate = next(remaining, None)
                if candidate is None:
                    return
                waiting.append(pool.submit(attempt, candidate))
        fill()
        while waiting and not done():
            yield waiting.popleft().result()
            if not done():
                fill()
        for future in waiting:
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
                 sandbox: str | None) -> tuple[Path, str, list[str], set[str]]:
    """The venv of a `[source]` task at the commit, its test command, the `[environment]` lines of
    task.toml (none when no recipe names the repository), and the tests that pass in an episode's eval of it."""
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
