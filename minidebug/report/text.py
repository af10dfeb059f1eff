"""The report's answer, summary and tool-use tables as plain text, for the terminal."""

from __future__ import annotations

from pathlib import Path

from .data import load
from .paired import MIN_PAIRS, TOO_FEW, Comparison, ModelVerdict, verdicts


def figures(comparison: Comparison, warn: bool = True) -> str:
    """"+10.0 points (95% CI -5.0 to +25.0), n = 30 pairs; solved 12/30 against 9/30", or why there is no
    interval in its place; with `warn`, too few pairs are called too small a sample."""
    c = comparison
    if c.difference is None:
        return "no pairs (nothing ran under both)"
    interval = (f" (95% CI {100 * c.low:+.1f} to {100 * c.high:+.1f})"
                if c.low is not None and c.high is not None else "")  # both ends are set together
    text = (f"{100 * c.difference:+.1f} points{interval}, n = {c.pairs} pair{'s' * (c.pairs != 1)}; "
            f"solved {c.solved}/{c.pairs} against {c.baseline_solved}/{c.pairs}")
    if c.no_interval == TOO_FEW and warn:
        return text + f"; {TOO_FEW} (fewer than {MIN_PAIRS}): too small a sample to tell, no interval"
    return text + (f"; {c.no_interval}" if c.no_interval else "")


def comparison_text(comparison: Comparison) -> str:
    """"m · debug − rewrite: " and the comparison's `figures`."""
    return f"{comparison.arm} − {comparison.baseline.split(' · ', 1)[-1]}: {figures(comparison)}"


def task_lines(verdict: ModelVerdict, several_sets: bool) -> list[str]:
    """Per task, one indented line per comparison: "  sum_tree · debug − rewrite: +0.0 points, ..."."""
    lines = [f"  per task (solved-rate points, an interval from {MIN_PAIRS} pairs):"] if verdict.tasks else []
    for (task_set, task), comparisons in verdict.tasks:
        name = f"{task_set}/{task}" if several_sets else task
        lines += [f"    {name} · {c.arm.split(' · ', 1)[-1]} − {c.baseline.split(' · ', 1)[-1]}: "
                  f"{figures(c, warn=False)}" for c in comparisons]
    return lines


def text_summary(runs: list[Path]) -> str:
    """The paired differences per model, over all tasks and per task, then the summary and tool-use tables."""
    report = load([Path(run) for run in runs])
    lines = []
    for verdict in verdicts(report):
        lines += [f"{verdict.model}: {verdict.missing}"] if verdict.missing else [
            comparison_text(c) for c in verdict.comparisons] + task_lines(verdict, len(report.task_sets) > 1)
    columns = report.task_sets + ["all"]
    width = max(len(arm) for arm in report.arms + ["arm"])
    cells = {column: max(len(column), 14) for column in columns}
    header = (f"{'arm':<{width}}  " + "  ".join(f"{c:>{cells[c]}}" for c in columns)
              + "    steps   tokens  steps s  setup s  suspicious")
    lines += ["", header, "-" * len(header)]
    for arm in report.arms:
        row = []
        for column in columns:
            entry = report.table.get((arm, column))
            text = f"{entry.rate:.0%} ({entry.solved}/{entry.episodes})" if entry else "-"
            row.append(f"{text:>{cells[column]}}")
        total = report.table[(arm, "all")]
        lines.append(f"{arm:<{width}}  " + "  ".join(row) + f"  {total.mean('steps'):>7.1f}  "
                     f"{total.mean('tokens'):>7.0f}  {total.mean('step_seconds'):>7.2f}  "
                     f"{total.mean('setup_seconds'):>7.2f}  {total.suspicious:>10}")
    lines += ["", f"{'arm':<{width}}  debugger used  pdb/episode  pdb/solved  pdb/unsolved"]
    for arm in report.arms:
        use = report.tool_use[arm]
        number = lambda value: ("n/a" if not use["available"] else "-") if value is None else f"{value:.1f}"  # noqa: E731, B023 (used in this iteration)
        share = f"{use['debugger_share']:.0%}" if use["available"] else "n/a"
        lines.append(f"{arm:<{width}}  {share:>13}  {number(use['pdb_per_episode']):>11}  "
                     f"{number(use['pdb_solved']):>10}  {number(use['pdb_unsolved']):>12}")
    return "\n".join(lines)
