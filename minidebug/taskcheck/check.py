"""`minidebug check`: prove a task sound in fresh episodes, the way gymnasium's check_env checks an env."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..scoring.counted import gold_failures
from ..store.cache import ensure_eval_base
from ..tasks.patch import parse_patch, relocated
from ..tasks.task import Task
from .breakable import changed_regions, probe_lines, scopes
from .gold import GoldRun, gold_run, one_line

if TYPE_CHECKING:
    from ..workspace.worktree import Workspace

CHECKS = ("fails", "oracle", "reset", "pdb", "hidden")


@dataclass
class CheckReport:
    task: str
    results: dict[str, str] = field(default_factory=dict)  # check -> "ok" or what went wrong
    probe: str = ""  # the file:line the pdb check stopped at

    @property
    def ok(self) -> bool:
        return all(value == "ok" for value in self.results.values())


MAX_PROBES = 10


def probe_targets(task: Task, root: Path) -> list[tuple[str, int]]:
    """Where the pdb check may stop: in each changed Python file that compiles, per changed region, the line
    that executes nearest to the change (see minidebug.taskcheck.breakable); at most MAX_PROBES, in patch order.

    Raises:
        ValueError: the solution changes no existing Python code.
    """
    if task.solution is None:
        raise ValueError("the task has no solution.patch")
    targets: list[tuple[str, int]] = []
    for file_patch in parse_patch(task.solution.read_text(encoding="utf-8")):
        if file_patch.old_path is None or not file_patch.old_path.endswith(".py"):
            continue
        try:
            source = (root / file_patch.old_path).read_text(encoding="utf-8")
            found = scopes(source, file_patch.old_path)
            regions = changed_regions(relocated(source, file_patch))  # where the hunks really apply
        except (OSError, UnicodeError, SyntaxError, ValueError):
            continue
        targets += [(file_patch.old_path, line) for line in probe_lines(found, regions)]
    if not targets:
        raise ValueError("the solution changes no existing Python code that compiles")
    return targets[:MAX_PROBES]


def leaked_copies(workspace: Any, task: Task) -> list[tuple[str, str]]:
    """The worktree's visible files that hold a hidden file's bytes, or solution.patch's, under any name, as
    (visible file, what it copies). Blank files are no secret and are left out."""
    sources = [(rel, workspace.prepared.eval_base / rel) for rel in workspace.prepared.hidden_files]
    sources += [("solution.patch", task.solution)] if task.solution is not None else []
    secrets: dict[bytes, str] = {}
    for name, path in sources:
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        if data.strip():
            secrets.setdefault(data, name)
    sizes = {len(data) for data in secrets}
    found = []
    for folder, dirs, files in os.walk(workspace.root):
        base = Path(folder).relative_to(workspace.root).as_posix()
        prefix = "" if base == "." else base + "/"
        dirs[:] = sorted(d for d in dirs if not workspace.is_hidden(prefix + d))
        for name in sorted(files):
            path = Path(folder) / name
            if workspace.is_hidden(prefix + name) or path.is_symlink() or path.stat().st_size not in sizes:
                continue
            secret = secrets.get(path.read_bytes())
            if secret is not None:
                found.append((prefix + name, secret))
    return found


def check_task(task: Task, **make_options: Any) -> CheckReport:
    """Run every check on task; each check's failure is recorded, never raised."""
    from ..core.make import make

    report = CheckReport(task.name)

    def run(name: str, body: Callable[[], str]) -> None:
        try:
            report.results[name] = body()
        except Exception as exc:  # a broken task must give a row, not a traceback
            report.results[name] = one_line(exc)

    if task.solution is None:
        report.results = {name: "no solution.patch" for name in CHECKS}
        return report
    with make(task, terminate_on_success=False, max_steps=1000, **make_options) as env:
        outcome: GoldRun | Exception
        try:
            outcome = gold_run(env)
        except Exception as exc:  # fails, oracle and reset each report it
            outcome = exc

        def solved() -> GoldRun:
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        def workspace() -> Workspace:
            assert env.workspace is not None, "a reset that returned (gold_run's, or the check's) started it"
            return env.workspace

        def fails() -> str:
            base = solved().base
            return "ok" if base.reward < 1.0 else f"every test already passes ({base.score}/{base.max_score})"

        def oracle() -> str:
            gold = solved().gold
            if gold is None:
                return f"the gold patch's edit failed: {solved().edit_error}"
            if gold.reward != 1.0:
                detail = f"error: {gold.error}".splitlines()[0] if gold.error else ""
                return f"the gold patch scores {gold.reward:.2f}" + (f" ({detail[:300]})" if detail else "")
            if gold.suspicious:  # an agent's same fix would be flagged too
                return f"the eval flags the gold patch as reaching into the test runner: {gold.suspicious[0][:300]}"
            failing = gold_failures(workspace().prepared)
            return "ok" if not failing else \
                f"the gold patch leaves {len(failing)} test(s) failing (not counted): {', '.join(failing[:5])}"

        def reset() -> str:
            return "ok" if solved().after_reset.reward < 1.0 else "reset did not bring the bug back"

        def pdb() -> str:
            env.reset()
            targets = probe_targets(task, workspace().root)
            for path, line in targets:
                env.step({"name": "pdb", "arguments": {"command": f"b {path}:{line}"}})
            last = env.step({"name": "pdb", "arguments": {"command": "c"}})[0].rstrip().splitlines()[-1]
            reached = [f"{path}:{line}" for path, line in targets if last.startswith(f"[at {path}:{line}]")]
            report.probe = reached[0] if reached else ""
            return "ok" if reached else ("the entrypoint never stops at the lines that run nearest to the gold "
                                         f"patch's changes: {', '.join(f'{p}:{n}' for p, n in targets)}")

        def hidden() -> str:
            env.reset()
            names = [Path(rel).name for rel in workspace().prepared.hidden_files] + ["solution.patch"]
            seen = []
            listing = env.step({"name": "listdir", "arguments": {"depth": 20}})[0]
            for name in names:
                grep = env.step({"name": "grep", "arguments": {"pattern": name}})[0]
                view = env.step({"name": "view", "arguments": {"path": name}})[0]
                if name in listing.split() or not view.startswith("error:") or f"/{name}:" in grep or \
                        grep.startswith(f"{name}:"):
                    seen.append(name)
            if (workspace().root / "solution.patch").exists():
                seen.append("solution.patch (in the worktree)")
            ensure_eval_base(task, workspace().prepared)  # where the hidden files are
            seen += [f"{rel} (a copy of {secret})" for rel, secret in leaked_copies(workspace(), task)]
            return "ok" if not seen else f"visible to the agent: {', '.join(seen)}"

        for name, body in zip(CHECKS, (fails, oracle, reset, pdb, hidden)):
            run(name, body)
    return report


def format_reports(reports: list[CheckReport]) -> str:
    width = max([len(r.task) for r in reports] + [4])
    lines = [f"{'task':<{width}}  " + "  ".join(f"{c:<6}" for c in CHECKS) + "  pdb stopped at"]
    for report in reports:
        marks = "  ".join(f"{'ok' if report.results.get(c) == 'ok' else 'FAIL':<6}" for c in CHECKS)
        lines.append(f"{report.task:<{width}}  {marks}  {report.probe}".rstrip())
        lines += [f"  {c}: {report.results[c]}" for c in CHECKS if report.results.get(c) not in (None, "ok")]
    passed = sum(r.ok for r in reports)
    lines.append(f"{passed}/{len(reports)} tasks pass every check")
    return "\n".join(lines)
