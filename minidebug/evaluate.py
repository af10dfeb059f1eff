"""Run a task's tests and score them: the task's own test ids, counted from pytest's own reports.

Each eval runs pytest in a fresh eval tree (see evaltree.py) through the `minidebug_eval` driver:
plugin autoloading off (the venv's own plugins are named explicitly), no cache provider, no user site,
no bytecode written, and pytest imported before any folder of the project is on sys.path. The outcomes
come back over a socket, not through a file or the printed output.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import socket
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import TaskError
from .limits import Confinement
from .process import episode_environ
from .safefs import remove_entry
from .venv import pytest_plugins
from .workspace import Workspace

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


@dataclass(frozen=True)
class PytestRun:
    """What one pytest run reported: outcome per test id (None when it wrote no report), and its output."""

    outcomes: dict[str, str] | None
    output: str
    collect_errors: tuple[str, ...] = ()
    collected: tuple[str, ...] = ()


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
        order = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "did not run")
        parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
        if self.collect_errors:
            parts.append(f"{self.collect_errors} collection error{'s' if self.collect_errors > 1 else ''}")
        return f"{', '.join(parts) or 'no tests ran'} (score {self.score}/{self.max_score})"


def pytest_arguments(command: list[str]) -> tuple[list[str], bool]:
    """The pytest arguments of an eval command, and whether it puts the current folder on sys.path
    (`python -m pytest` does, `pytest` does not).

    Raises:
        TaskError: the command does not run pytest.
    """
    name = Path(command[0]).name if command else ""
    if name in ("pytest", "py.test"):
        return list(command[1:]), False
    if _PYTHON.fullmatch(name) and command[1:3] == ["-m", "pytest"]:
        return list(command[3:]), True
    raise TaskError(f"eval must run pytest (`python -m pytest ...` or `pytest ...`); got {shlex.join(command)!r}")


def run_pytest(command: list[str], tree: Path, scratch: Path, *, venv: Path, drivers: Path, timeout: float,
               confinement: Confinement, source_layout: bool = False, extra: tuple[str, ...] = ()) -> PytestRun:
    """Run the eval command's pytest in `tree` (writable, with HOME and TMPDIR in `scratch`), confined."""
    args, cwd_on_path = pytest_arguments(command)
    sys_path = [str(tree), str(tree / "src")] if source_layout else []
    if cwd_on_path and not source_layout:
        sys_path.append(str(tree))
    plugins = [arg for plugin in pytest_plugins(venv) for arg in ("-p", plugin)]
    home, tmp = scratch / "home", scratch / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    env = episode_environ(venv, home, tmp)
    env.update(PYTEST_ADDOPTS="", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    host, child = socket.socketpair()
    nonce = secrets.token_hex(16)
    try:
        env["MINIDEBUG_EVAL_FD"] = str(child.fileno())
        settings = {"nonce": nonce, "sys_path": sys_path,
                    "args": [*args, "-p", "no:cacheprovider", *plugins, *extra]}
        host.sendall(json.dumps(settings).encode() + b"\n")
        received: list[bytes] = []
        reader = threading.Thread(target=_read_all, args=(host, received), daemon=True)
        reader.start()
        argv = [str(venv / "bin" / "python"), "-s", "-B", str(drivers / "minidebug_eval.py")]
        try:
            _, output = confinement.run(argv, cwd=tree, env=env, timeout=timeout, writable=[tree, scratch],
                                        pass_fds=(child.fileno(),))
        except OSError as exc:
            return PytestRun(None, f"could not run {argv[0]}: {exc}")
        finally:
            child.close()
        reader.join(timeout=5)
    finally:
        child.close()
        try:
            host.shutdown(socket.SHUT_RDWR)  # wakes the reader even if a stray process still holds the other end
        except OSError:
            pass
        host.close()
    report = _parse(b"".join(received), nonce.encode())
    if report is None:
        return PytestRun(None, output)
    return PytestRun({str(k): str(v) for k, v in report.get("tests", {}).items()}, output,
                     tuple(map(str, report.get("collect_errors", []))), tuple(map(str, report.get("collected", []))))


def _read_all(sock: socket.socket, into: list[bytes]) -> None:
    try:
        while chunk := sock.recv(1 << 16):
            into.append(chunk)
    except OSError:
        pass


def _parse(data: bytes, nonce: bytes) -> dict | None:
    for line in data.splitlines():
        if line.startswith(nonce):
            try:
                report = json.loads(line[len(nonce):])
            except ValueError:
                return None
            return report if isinstance(report, dict) else None
    return None


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
    tests = {test: outcomes.get(test, "did not run") for test in sorted(counted_set)}
    ignored = [test for test in outcomes if test not in counted_set]
    if ignored:
        notes.append(f"{len(ignored)} test(s) not counted (not among the task's tests): {', '.join(ignored[:3])}"
                     f"{' ...' if len(ignored) > 3 else ''}")
    if fail_to_pass:
        regressions = [t for t in pass_to_pass or [] if tests.get(t) != "passed"]
        if regressions:
            notes.append(f"{len(regressions)} pass_to_pass test(s) do not pass: {', '.join(regressions[:5])}")
        value = 0 if regressions else sum(tests[t] == "passed" for t in fail_to_pass)
        return EvalResult(value, len(fail_to_pass), run.output, tests, tuple(notes), len(run.collect_errors))
    missing = [t for t in counted if tests[t] == "did not run"]
    if missing and run.outcomes is not None:
        notes.append(f"{len(missing)} counted test(s) did not run: {', '.join(missing[:3])}"
                     f"{' ...' if len(missing) > 3 else ''}")
    return EvalResult(sum(tests[t] == "passed" for t in counted), len(counted), run.output, tests, tuple(notes),
                      len(run.collect_errors))


def evaluate(workspace: Workspace, counted: tuple[str, ...], timeout: float, confinement: Confinement,
             notes: list[str] = ()) -> EvalResult:
    """Score the agent's changes: pytest in a fresh eval tree (see evaltree.py), with HOME and TMPDIR of its
    own, against the task's counted tests."""
    from .counted import test_files
    from .evaltree import eval_tree

    task, notes = workspace.task, list(notes)
    restored = workspace.restore_readonly()
    if restored:
        notes.append(f"read-only files restored before eval: {', '.join(restored)}")
    harness = workspace.harness.with_test_files(workspace.harness.test_files | test_files(counted))
    with eval_tree(workspace, harness) as (tree, tree_notes):
        remove_entry(workspace.dir, "eval-scratch")
        scratch = workspace.dir / "eval-scratch"
        scratch.mkdir()
        try:
            run = run_pytest(task.eval_command, tree, scratch, venv=workspace.venv, drivers=workspace.drivers,
                             timeout=timeout, confinement=confinement, source_layout=task.spec.source is not None)
        finally:
            remove_entry(workspace.dir, "eval-scratch")
    run = replace(run, output=run.output.replace(str(tree) + "/", "").replace(str(tree), "."))
    return score(run, counted, task.spec.fail_to_pass, task.spec.pass_to_pass, notes + tree_notes)
