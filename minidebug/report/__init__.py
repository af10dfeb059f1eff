"""Reports of recorded runs: one self-contained HTML file, or the same summary as text.

Needs the `[report]` extra (jinja2 for the page, matplotlib for the plots, drawn as inline SVG). The
page has no external resource: a summary table (solve rate per arm and task set, with counts), plots of
solve rate, steps, tokens and seconds, tool use per arm (how often pdb was called in solved and unsolved
episodes), runs side by side when several are given, and a page per episode (timeline of tool calls with
their observations, diffs highlighted, eval results, where the budget went), drawn on demand from
embedded JSON so that a report of thousands of episodes opens at once.
"""

from __future__ import annotations

from pathlib import Path

from .data import Report, load

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
        raise RuntimeError("reports need jinja2 and matplotlib: pip install 'minidebug[report]'") from None
    from . import plots

    report = load([Path(run) for run in runs])
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined)
    by_arm = {arm: [e for e in report.episodes if e.arm == arm] for arm in report.arms}
    html = environment.get_template("report.html.j2").render(
        runs=report.runs, episodes=report.episodes, arms=report.arms, task_sets=report.task_sets,
        table=report.table, tool_use=report.tool_use, by_arm=by_arm, compare=_side_by_side(report),
        plots={"solve_rate": plots.solve_rate(report), "distributions": plots.distributions(report),
               "tool_use": plots.tool_use(report)},
        details=_details(report), script=(TEMPLATES / "episode.js").read_text(encoding="utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return report


def _details(report: Report) -> dict[str, dict]:
    arm_index = {arm: i + 1 for i, arm in enumerate(report.arms)}
    return {e.key: {**e.detail, "arm_index": arm_index[e.arm],
                    "facts": [["solved", "yes" if e.solved else "no"], ["reward", e.reward], ["steps", e.steps],
                              ["tokens", e.tokens], ["seconds", e.seconds], ["error", e.error or "none"]]}
            for e in report.episodes}


def _side_by_side(report: Report) -> list[tuple[str, list[list]]] | None:
    """With several runs: per task, each run's episodes of it."""
    if len(report.runs) < 2:
        return None
    tasks = sorted({e.task for e in report.episodes})
    return [(task, [[e for e in report.episodes if e.task == task and e.run == run] for run in report.runs])
            for task in tasks]


def text_summary(runs: list[Path]) -> str:
    """The report's summary and tool-use tables as plain text, for the terminal."""
    report = load([Path(run) for run in runs])
    columns = report.task_sets + ["all"]
    width = max(len(arm) for arm in report.arms + ["arm"])
    cells = {column: max(len(column), 14) for column in columns}
    lines = [f"{'arm':<{width}}  " + "  ".join(f"{c:>{cells[c]}}" for c in columns)
             + "    steps   tokens  seconds"]
    lines.append("-" * len(lines[0]))
    for arm in report.arms:
        row = []
        for column in columns:
            entry = report.table.get((arm, column))
            text = f"{entry.rate:.0%} ({entry.solved}/{entry.episodes})" if entry else "-"
            row.append(f"{text:>{cells[column]}}")
        total = report.table[(arm, "all")]
        lines.append(f"{arm:<{width}}  " + "  ".join(row) + f"  {total.mean('steps'):>7.1f}  "
                     f"{total.mean('tokens'):>7.0f}  {total.mean('seconds'):>7.2f}")
    lines += ["", f"{'arm':<{width}}  debugger used  pdb/episode  pdb/solved  pdb/unsolved"]
    for arm in report.arms:
        use = report.tool_use[arm]
        number = lambda value: "-" if value is None else f"{value:.1f}"  # noqa: E731
        lines.append(f"{arm:<{width}}  {use['debugger_share']:>13.0%}  {number(use['pdb_per_episode']):>11}  "
                     f"{number(use['pdb_solved']):>10}  {number(use['pdb_unsolved']):>12}")
    return "\n".join(lines)
