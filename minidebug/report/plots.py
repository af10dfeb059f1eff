"""The report's plots, drawn by matplotlib and kept as inline SVG (no pyplot state, no files)."""

from __future__ import annotations

import io

from .data import Report

_STYLE = {"svg.fonttype": "none", "svg.hashsalt": "minidebug", "font.size": 9, "axes.spines.top": False,
          "axes.spines.right": False}


def _svg(figure) -> str:
    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context(_STYLE):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _figure(width: float, height: float, columns: int = 1):
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_STYLE):
        figure = Figure(figsize=(width, height))
        axes = figure.subplots(1, columns, squeeze=False)[0]
    return figure, axes


def _short(arm: str) -> str:
    return arm if len(arm) <= 28 else arm[:27] + "…"


def solve_rate(report: Report) -> str:
    """Grouped bars: the solve rate of each arm on each task set and overall."""
    columns = report.task_sets + ["all"] if len(report.task_sets) > 1 else ["all"]
    figure, (axes,) = _figure(max(4.0, 1.2 * len(columns) * max(1, len(report.arms)) / 2 + 2), 2.8)
    width = 0.8 / len(report.arms)
    for index, arm in enumerate(report.arms):
        rates = [report.table[(arm, c)].rate if (arm, c) in report.table else 0.0 for c in columns]
        positions = [c + index * width for c in range(len(columns))]
        bars = axes.bar(positions, rates, width, label=_short(arm))
        axes.bar_label(bars, labels=[f"{r:.0%}" for r in rates], fontsize=7)
    axes.set_xticks([c + width * (len(report.arms) - 1) / 2 for c in range(len(columns))], columns)
    axes.set_ylim(0, 1.1)
    axes.set_ylabel("solve rate")
    axes.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return _svg(figure)


def distributions(report: Report) -> str:
    """Box plots of steps, tokens and seconds per episode, one box per arm."""
    figure, axes = _figure(9.0, 2.6 + 0.1 * len(report.arms), 3)
    for ax, (field, label) in zip(axes, [("steps", "steps"), ("tokens", "tokens"), ("seconds", "seconds")]):
        data = [report.table[(arm, "all")].__getattribute__(field) for arm in report.arms]
        ax.boxplot(data, orientation="horizontal", tick_labels=[_short(a) for a in report.arms])
        ax.set_xlabel(label)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    return _svg(figure)


def tool_use(report: Report) -> str:
    """Left: tool calls per episode by tool, per arm; right: pdb calls in solved and in unsolved episodes."""
    figure, (left, right) = _figure(9.0, 2.4 + 0.25 * len(report.arms), 2)
    tools = sorted({tool for use in report.tool_use.values() for tool in use["calls"]})
    rows = range(len(report.arms))
    offsets = [0.0] * len(report.arms)
    for tool in tools:
        values = [report.tool_use[arm]["calls"][tool] / max(report.tool_use[arm]["episodes"], 1)
                  for arm in report.arms]
        left.barh(rows, values, left=offsets, label=tool)
        offsets = [o + v for o, v in zip(offsets, values)]
    left.set_yticks(list(rows), [_short(a) for a in report.arms])
    left.set_xlabel("tool calls per episode")
    left.legend(fontsize=7, frameon=False, ncols=2)
    height = 0.38
    for shift, key, label in ((-height / 2, "pdb_solved", "solved"), (height / 2, "pdb_unsolved", "unsolved")):
        values = [report.tool_use[arm][key] or 0.0 for arm in report.arms]
        right.barh([r + shift for r in rows], values, height, label=label)
    right.set_yticks(list(rows), [""] * len(report.arms))
    right.set_xlabel("pdb calls per episode")
    right.legend(fontsize=7, frameon=False)
    return _svg(figure)
