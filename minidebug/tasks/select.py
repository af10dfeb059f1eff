"""Choosing tasks by selector: folder paths, bundled names, or globs over bundled names."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from ..errors import TaskError
from .task import BUNDLED_TASKS, SMOKE_TASKS, Task, bundled_task_names, load_task


def task_set(task: Task) -> str:
    """The collection a task belongs to: "bundled", "smoke", or the name of the folder holding it."""
    parent = task.root.resolve().parent
    return {BUNDLED_TASKS: "bundled", SMOKE_TASKS: "smoke"}.get(parent, parent.name)


def select_tasks(selectors: Iterable[str] | None) -> list[Task]:
    """Tasks from selectors: folder paths, bundled names, or globs over bundled names (default: all bundled).

    Each task once, in the order first named.

    Raises:
        TaskError: a selector matches nothing.
    """
    selectors = list(selectors or ["*"])
    tasks: list[Task] = []
    for selector in selectors:
        if any(ch in selector for ch in "*?[") and not Path(selector).exists():
            names = fnmatch.filter(bundled_task_names(), selector)
            if not names:
                raise TaskError(f"no bundled task matches {selector!r}")
            tasks.extend(load_task(name) for name in names)
        else:
            tasks.append(load_task(selector))
    unique: dict[Path, Task] = {}
    for task in tasks:  # a task two selectors name runs once: its episodes share names and trajectory files
        unique.setdefault(task.root.resolve(), task)
    return list(unique.values())
