"""Turn other task collections into minidebug task folders."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from .errors import TaskError


def _text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text if text.endswith("\n") or not text else text + "\n"


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def import_exercism(track: Path, out: Path) -> list[Path]:
    """Convert the practice exercises of a local exercism/python clone into task folders under out.

    Each `exercises/practice/<slug>/` becomes `out/<slug>/`: the stub (files.solution) and the tests
    (files.test, read-only) form repo/; `.docs/instructions.md` (with `introduction.md` before and
    `instructions.append.md` after, when present) is the description; solution.patch turns the stub
    into the reference solution (files.example).

    Raises:
        TaskError: track has no exercises/practice folder.
    """
    practice = Path(track) / "exercises" / "practice"
    if not practice.is_dir():
        raise TaskError(f"{track}: no exercises/practice folder; expected a clone of exercism/python")
    made = []
    for exercise in sorted(p for p in practice.iterdir() if (p / ".meta" / "config.json").is_file()):
        try:
            files = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))["files"]
            solution, tests, example = files["solution"], files["test"], files["example"]
        except (KeyError, ValueError) as exc:
            raise TaskError(f"{exercise / '.meta' / 'config.json'}: {exc}") from None
        docs = exercise / ".docs"
        description = "\n\n".join(_text(docs / name).strip() for name in
                                  ("introduction.md", "instructions.md", "instructions.append.md")
                                  if (docs / name).is_file())
        task = Path(out) / exercise.name
        (task / "repo").mkdir(parents=True, exist_ok=True)
        for rel in solution + tests:
            target = task / "repo" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_text(exercise / rel), encoding="utf-8")
        patch = []
        for stub_rel, example_rel in zip(solution, example):
            before = _text(exercise / stub_rel).splitlines(keepends=True)
            after = _text(exercise / example_rel).splitlines(keepends=True)
            patch += difflib.unified_diff(before, after, f"a/{stub_rel}", f"b/{stub_rel}")
        (task / "solution.patch").write_text("".join(patch), encoding="utf-8")
        (task / "task.toml").write_text(
            f"description = {_toml_string(description or exercise.name)}\n"
            f"eval = {_toml_string('python -m pytest -q ' + ' '.join(tests))}\n"
            f"readonly = {json.dumps(tests)}\n"
            f'tags = ["exercism", {_toml_string(exercise.name)}]\n', encoding="utf-8")
        made.append(task)
    return made
