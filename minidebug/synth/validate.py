"""Running a project's tests on a candidate bug: scratch trees, one pytest run, and the verdict on a candidate.

A scratch tree is a shared clone of the repository at the commit (the venv's build products laid in, as
episodes have them), reset by git after each candidate. A run is a pytest process in the venv's interpreter
(the worktree and its src/ first on PYTHONPATH, no bytecode written, own session killed whole at its timeout),
confined as an episode's programs are (`Confinement`: the sandbox asked for, resource limits, the environment
allowlist; only the tree, HOME, TMPDIR and the report's folder writable), with the `minidebug_synth` plugin
(see minidebug/drivers), which reports each test's outcome, exception and traceback frames, and, for the
coverage run, the functions each test reached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import MinidebugError
from ..sandbox.confinement import Confinement
from ..sandbox.process import episode_environ
from ..sandbox.reaper import owned_temp_dir
from ..store.cache import DRIVER_SOURCES
from ..store.venv import lay_build_products
from ..tasks.spec import Limits

DRIVER = "minidebug_synth"
# Failures that say only that a name is missing: removing a method or an assignment often gives them, and
# their traceback points at the line at once, so such a candidate is not worth debugging (unless asked for).
NAME_ERRORS = {"AttributeError", "NameError", "UnboundLocalError"}
# pytest's own report is not read (the plugin writes what a verdict needs), and formatting a traceback per
# failing test is most of the time of a run where hundreds fail: none, after the eval's options (`-rA`).
QUIET = ["--tb=no", "-rN"]
CPU_SECONDS = 3600  # a run's CPU limit: the wall-clock timeouts bound candidate runs; the traced suite may be long


class SynthError(MinidebugError):
    """The repository cannot give tasks: not a clone, no commit, tests that cannot run."""


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome in a run; `frames` are (path, line) of the traceback within the project."""

    outcome: str  # passed, failed, error, skipped
    type: str = ""
    message: str = ""
    frames: tuple[tuple[str, int], ...] = ()


@dataclass
class RunReport:
    """What one pytest run reported."""

    tests: dict[str, TestOutcome] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)
    reached: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    timed_out: bool = False
    exitstatus: int | None = None
    seconds: float = 0.0
    output: str = ""

    def passing(self) -> set[str]:
        return {test for test, result in self.tests.items() if result.outcome == "passed"}

    def failing(self) -> dict[str, TestOutcome]:
        return {test: result for test, result in self.tests.items() if result.outcome in ("failed", "error")}


SCRATCH_PREFIX = "minidebug-synth-"


class Scratch:
    """A throwaway tree of the repository at a commit, for one worker's runs, confined in `sandbox` ("bwrap",
    "landlock" or None, as `sandbox.choose.resolve` gives it) with an episode's default limits."""

    def __init__(self, clone: Path, commit: str, venv: Path, pytest_args: list[str], where: Path | None = None,
                 sandbox: str | None = None):
        self.dir = owned_temp_dir(SCRATCH_PREFIX, where)  # named with its maker: `minidebug gc` removes it after a kill
        self.tree = self.dir / "tree"
        self.venv, self.pytest_args = venv, pytest_args
        self.plugins = self.dir / "plugins"
        self.plugins.mkdir()
        shutil.copy2(DRIVER_SOURCES / f"{DRIVER}.py", self.plugins / f"{DRIVER}.py")
        self.home, self.tmp, self.out = self.dir / "home", self.dir / "tmp", self.dir / "out"
        for folder in (self.home, self.tmp, self.out):
            folder.mkdir()
        limits = Limits()
        self.confinement = Confinement(limits.memory_mb, CPU_SECONDS, limits.file_size_mb, limits.processes,
                                       sandbox, venv, (self.plugins,))
        try:
            _git(self.dir, "clone", "--quiet", "--shared", "--no-checkout", str(Path(clone).resolve()),
                 str(self.tree))
            _git(self.tree, "checkout", "--quiet", "--detach", commit)
            lay_build_products(venv, self.tree)
        except BaseException:
            self.close()
            raise

    def read(self, path: str) -> str:
        return (self.tree / path).read_text(encoding="utf-8")

    def write(self, path: str, text: str) -> None:
        (self.tree / path).write_text(text, encoding="utf-8")

    def reset(self) -> None:
        """Back to the commit: tracked files restored, files the run added (not ignored ones) removed."""
        _git(self.tree, "reset", "--quiet", "--hard")
        _git(self.tree, "clean", "-fdq")

    def run(self, tests: list[str] | None = None, timeout: float = 60, trace: bool = False) -> RunReport:
        """Run the eval's pytest arguments (or just `tests`: node ids and files) with the plugin, no traceback
        printed."""
        out = self.out / "report.json"
        out.unlink(missing_ok=True)
        paths = [str(self.tree / "src"), str(self.tree)] if (self.tree / "src").is_dir() else [str(self.tree)]
        env = episode_environ(self.venv, self.home, self.tmp, {
            "PYTHONPATH": os.pathsep.join([*paths, str(self.plugins)]),
            "MINIDEBUG_SYNTH": json.dumps({"root": str(self.tree), "out": str(out), "trace": trace}),
        })
        argv = [str(self.venv / "bin" / "python"), "-m", "pytest", "-p", DRIVER, "-q",
                *(self.pytest_args if tests is None else tests), *QUIET]
        done, output = self.confinement.run(argv, cwd=self.tree, env=env, timeout=timeout,
                                            writable=[self.tree, self.home, self.tmp, self.out])
        report = RunReport(timed_out=done.timed_out, seconds=done.seconds, output=output[-2000:])
        if out.is_file():
            data = json.loads(out.read_text(encoding="utf-8"))
            report.tests = {test: TestOutcome(entry["outcome"], entry.get("type", ""), entry.get("message", ""),
                                              tuple((path, line) for path, line in entry.get("frames", [])))
                            for test, entry in data["tests"].items()}
            report.collect_errors = [f"{node}: {' '.join(lines)}" for node, lines in data["collect_errors"]]
            report.reached = {test: [(path, line) for path, line in found] for test, found in data["reached"].items()}
            report.exitstatus = data["exitstatus"]
        return report

    def close(self) -> None:
        self.confinement.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass(frozen=True)
class Verdict:
    """A candidate's screening: `reason` is why it is dropped ("" when it is kept)."""

    reason: str
    failing: dict[str, TestOutcome] = field(default_factory=dict)
    seconds: float = 0.0


def judge(report: RunReport, expected: set[str], baseline_errors: set[str], keep_name_errors: bool) -> Verdict:
    """Whether a run of the tests `expected` to pass shows a bug worth debugging, and if not why."""
    if report.timed_out:
        return Verdict("timeout", seconds=report.seconds)
    if set(report.collect_errors) - baseline_errors or report.exitstatus is None or (
            report.exitstatus not in (0, 1) and not report.tests):
        return Verdict("collection error", seconds=report.seconds)
    failing = {test: result for test, result in report.tests.items() if test in expected and result.outcome != "passed"}
    missing = expected - set(report.tests)
    if missing:  # a test that was collected before and is not now: its module no longer imports
        return Verdict("collection error", seconds=report.seconds)
    if not failing:
        return Verdict("no test fails", seconds=report.seconds)
    if not keep_name_errors and all(result.type in NAME_ERRORS for result in failing.values()):
        return Verdict("only AttributeError/NameError", failing, report.seconds)
    return Verdict("", failing, report.seconds)


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", *args],
                          cwd=cwd, capture_output=True, text=True, errors="replace", env=env, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SynthError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()[:300]}")
    return done.stdout
