"""The gold-patch routine `check` and `validate` share: in a fresh episode, eval the base, apply the task's
solution.patch through the `edit` tool (the oracle agent's edit calls), eval, reset, eval again."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..agents.oracle import gold_edits
from ..errors import TaskError, ToolError

if TYPE_CHECKING:
    from ..core.env import DebugEnv


@dataclass(frozen=True)
class Eval:
    """One eval: the counted tests' score and each test's outcome; when the eval could not run, `error` holds
    what the eval tool would have shown the agent instead (after "error: ")."""

    score: int = 0
    max_score: int = 0
    tests: Mapping[str, str] = field(default_factory=dict)
    error: str = ""
    output: str = field(default="", compare=False)  # what pytest printed (timings included)
    collect_errors: int = 0
    suspicious: tuple[str, ...] = field(default=(), compare=False)  # what the eval's watch flagged

    @property
    def reward(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    def passed(self, ids: Iterable[str]) -> int:
        """How many of these test ids passed."""
        return sum(self.tests.get(test) == "passed" for test in ids)


@dataclass(frozen=True)
class GoldRun:
    """The three evals of a gold run. `gold` is None when the gold patch could not be applied through `edit`
    (`edit_error` says why); the reset and its eval happen either way."""

    base: Eval
    gold: Eval | None
    after_reset: Eval
    edit_error: str = ""


LINE = 600  # characters of an error's line: a build step (up to 200) and its reason (up to 300) fit


def one_line(exc: BaseException) -> str:
    """An error as `check` and `validate` show it: its class and its message's first line (for a failed
    build, the step and why it failed)."""
    text = str(exc).strip()
    first = text.splitlines()[0][:LINE] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def evaluate(env: DebugEnv) -> Eval:
    """Eval the episode's worktree as the eval tool does; its errors are recorded, as the tool shows them."""
    try:
        result = env.evaluate()
    except ToolError as exc:
        return Eval(error=str(exc))
    except (OSError, UnicodeError) as exc:
        return Eval(error=f"{exc.__class__.__name__}: {exc}")
    return Eval(result.score, result.max_score, dict(result.tests), output=result.output,
                collect_errors=result.collect_errors, suspicious=result.suspicious)


def gold_run(env: DebugEnv) -> GoldRun:
    """Reset env (a fresh episode), eval the base, apply the gold patch through `edit` (stopping at the first
    edit that fails), eval, reset, eval again.

    Raises:
        Exception: whatever env.reset() or an eval raises beyond what the tools turn into an observation
            (the task cannot be built here, say).
    """
    env.reset()
    base = evaluate(env)
    gold, edit_error = None, ""
    try:
        assert env.workspace is not None, "reset() starts the episode's workspace"
        calls = gold_edits(env.task, env.workspace.base_text)
    except TaskError as exc:
        edit_error = str(exc)
    else:
        for call in calls:
            info = env.step(call)[4]
            if "error" in info:
                edit_error = info["error"]
                break
    if not edit_error:
        gold = evaluate(env)
    env.reset()
    return GoldRun(base, gold, evaluate(env), edit_error)
