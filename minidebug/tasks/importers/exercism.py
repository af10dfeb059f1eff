"""exercism/python practice exercises as task folders."""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from ...errors import TaskError
from .common import ImportReport, toml_string

VERIFY_TIMEOUT = 120.0


def _text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text if text.endswith("\n") or not text else text + "\n"


def _tests_pass(exercise: Path, files: dict[str, Path], tests: list[str]) -> bool:
    """Whether the tests pass with `files` (name in the exercise -> content to use), run by this interpreter."""
    from ...sandbox.process import run

    with tempfile.TemporaryDirectory(prefix="minidebug-import-") as scratch:
        for rel in tests:
            target = Path(scratch) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(exercise / rel, target)
        for rel, source in files.items():
            target = Path(scratch) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "PYTHONDONTWRITEBYTECODE": "1"}
        completed = run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                        cwd=Path(scratch), env=env, timeout=VERIFY_TIMEOUT)
        return completed.returncode == 0


def import_exercism(track: Path, out: Path, verify: bool = True) -> ImportReport:
    """Convert the practice exercises of a local exercism/python clone into task folders under out.

    Each `exercises/practice/<slug>/` becomes `out/<slug>/`: the stub (files.solution) and the tests
    (files.test, read-only) form repo/; `.docs/instructions.md` (with `introduction.md` before and
    `instructions.append.md` after, when present) is the description; solution.patch turns the stub
    into the reference solution (files.example). With `verify`, each exercise's tests are run (by this
    interpreter) on the stub and on the example first: an exercise whose stub already passes (a refactoring
    exercise: no bug to find) or whose example fails here is skipped, with the reason in the report.

    Raises:
        TaskError: track has no exercises/practice folder.
    """
    practice = Path(track) / "exercises" / "practice"
    if not practice.is_dir():
        raise TaskError(f"{track}: no exercises/practice folder; expected a clone of exercism/python")
    report = ImportReport()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for exercise in sorted(p for p in practice.iterdir() if (p / ".meta" / "config.json").is_file()):
        try:
            files = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))["files"]
            solution, tests, example = files["solution"], files["test"], files["example"]
        except (KeyError, ValueError) as exc:
            raise TaskError(f"{exercise / '.meta' / 'config.json'}: {exc}") from None
        if verify:
            if _tests_pass(exercise, {rel: exercise / rel for rel in solution}, tests):
                report.skipped[exercise.name] = "refactoring exercise: its stub already passes every test"
                continue
            if not _tests_pass(exercise, {rel: exercise / ex for rel, ex in zip(solution, example)}, tests):
                report.skipped[exercise.name] = f"its example solution fails its tests on Python {version}"
                continue
        report.made.append(_write_task(exercise, Path(out) / exercise.name, solution, tests, example))
    return report


def _write_task(exercise: Path, task: Path, solution: list[str], tests: list[str], example: list[str]) -> Path:
    docs = exercise / ".docs"
    description = "\n\n".join(_text(docs / name).strip() for name in
                              ("introduction.md", "instructions.md", "instructions.append.md")
                              if (docs / name).is_file())
    (task / "repo").mkdir(parents=True, exist_ok=True)
    for rel in solution + tests:
        target = task / "repo" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_text(exercise / rel), encoding="utf-8")
    patch: list[str] = []
    for stub_rel, example_rel in zip(solution, example):
        before = _text(exercise / stub_rel).splitlines(keepends=True)
        after = _text(exercise / example_rel).splitlines(keepends=True)
        patch += difflib.unified_diff(before, after, f"a/{stub_rel}", f"b/{stub_rel}")
    (task / "solution.patch").write_text("".join(patch), encoding="utf-8")
    (task / "task.toml").write_text(
        f"description = {toml_string(description or exercise.name)}\n"
        f"eval = {toml_string('python -m pytest -q ' + ' '.join(tests))}\n"
        f"readonly = [{', '.join(toml_string(t) for t in tests)}]\n"
        f'tags = ["exercism", {toml_string(exercise.name)}]\n', encoding="utf-8")
    return task
