"""Reports of recorded runs: one self-contained HTML file, or the same summary as text.

Needs the `[report]` extra (jinja2 for the page, matplotlib for the plots, drawn as inline SVG). The
page has no external resource. At its top, per model, the answer to "did the debugger help?": each arm's
solve rate minus the rewrite arm's on the tasks and seeds both ran, with a bootstrap interval where the pairs
allow one and a warning where they are too few (`paired`); then the solve rate per arm and task set with
counts, episode seconds apart from setup seconds, suspicious evals per arm, plots of solve rate, steps,
tokens and seconds, tool use per arm (n/a for arms without the debugger), per task each arm's difference
from rewrite and one row per seed with each arm's outcome, a side-by-side view of a task's episodes, and a
page per episode (timeline of tool calls with their observations, diffs highlighted, unlock notes, eval
results, where the budget went), drawn on demand from embedded JSON so that a report of thousands of
episodes opens at once. Arms keep one order and one colour throughout (see `data`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .data import Episode, Report, load
from .paired import MIN_PAIRS, TOO_FEW, verdicts
from .text import text_summary

__all__ = ["build_report", "load", "text_summary"]

TEMPLATES = Path(__file__).with_name("templates")


def build_report(runs: list[Path], out: Path) -> Report:
    """Write the HTML report of `runs` (folders written by `minidebug run --out`) to `out`.

    Raises:
        ValueError: a run folder is missing or holds no complete trajectory.
        RuntimeError: the `[report]` extra is not installed.
    """
    try:
        import jinja2
    except ImportError:
        raise UsageError("reports need jinja2 and matplotlib: pip install 'minidebug[report]'") from None
    from . import plots

    report = load([Path(run) for run in runs])
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined)
    by_arm = {arm: [e for e in report.episodes if e.arm == arm] for arm in report.arms}
    per_task, answers = per_task_rows(report), verdicts(report)
    html = environment.get_template("report.html.j2").render(
        runs=report.runs, episodes=report.episodes, arms=report.arms, task_sets=report.task_sets,
        table=report.table, tool_use=report.tool_use, by_arm=by_arm, per_task=per_task, verdicts=answers,
        colour=report.colour, several_seeds=len({e.seed for e in report.episodes}) > 1,
        interval={"min_pairs": MIN_PAIRS, "too_few": TOO_FEW},
        plots={"differences": plots.differences(report, answers), "solve_rate": plots.solve_rate(report),
               "distributions": plots.distributions(report), "tool_use": plots.tool_use(report)},
        data={"episodes": _details(report),
              "groups": {str(i): [e.key for e in cells if e] for i, (_, cells) in enumerate(per_task)}},
        script=(TEMPLATES / "episode.js").read_text(encoding="utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return report


def per_task_rows(report: Report) -> list[tuple[tuple[str, str, int], list[Episode | None]]]:
    """One row per (task set, task, seed): each arm's episode of it, or None, in the report's arm order."""
    cells: dict[tuple[str, str, int], dict[str, Episode]] = {}
    for episode in report.episodes:
        cells.setdefault((episode.task_set, episode.task, episode.seed), {}).setdefault(episode.arm, episode)
    return [(key, [cells[key].get(arm) for arm in report.arms]) for key in sorted(cells)]


def _details(report: Report) -> dict[str, dict]:
    arm_index = {arm: i + 1 for i, arm in enumerate(report.arms)}
    return {e.key: {**e.detail, "arm_index": arm_index[e.arm], "colour": report.colour(e.arm),
                    "solved": e.solved,
                    "facts": [["solved", "yes" if e.solved else "no"], ["reward", e.reward], ["steps", e.steps],
                              ["tokens", e.tokens], ["seconds in steps", e.step_seconds],
                              ["seconds outside steps (setup, agent)", round(e.setup_seconds, 3)],
                              ["error", e.error or "none"]]}
            for e in report.episodes}
