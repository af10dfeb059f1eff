"""The report's plots, drawn by matplotlib and kept as inline SVG (no pyplot state, no files).

Each arm has the colour the report gives it (`Report.colour`) and arms are listed in the report's order, top
to bottom or left to right. Every bar ends in a thick stroke of its colour, so a value of 0 still shows.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from .data import Report
from .paired import ModelVerdict

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

_STYLE: dict[RcKeyType, Any] = {"svg.fonttype": "none", "svg.hashsalt": "minidebug", "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False}
_TOOL_COLOURS = ("#c7c7c7", "#dbdb8d", "#9edae5", "#c5b0d5", "#c49c94", "#f7b6d2", "#aec7e8", "#ffbb78",
                 "#98df8a", "#ff9896")  # pale tab20 shades: tools never look like arms


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


def _short(arm: str, limit: int = 28) -> str:
    return arm if len(arm) <= limit else arm[:limit - 1] + "…"


def _bars(axes, positions: list[float], values: list[float], width: float, colour: str, horizontal: bool = False,
          hatched: bool = False):
    """Bars that end in a stroke of their colour, visible at 0 as well."""
    style = {"color": "white", "edgecolor": colour, "hatch": "////"} if hatched else {"color": colour}
    if horizontal:
        bars = axes.barh(positions, values, width, linewidth=0.8, **style)
        axes.vlines(values, [p - width / 2 for p in positions], [p + width / 2 for p in positions], colors=colour,
                    linewidth=3, zorder=3)
    else:
        bars = axes.bar(positions, values, width, linewidth=0.8, **style)
        axes.hlines(values, [p - width / 2 for p in positions], [p + width / 2 for p in positions], colors=colour,
                    linewidth=3, zorder=3)
    return bars


def solve_rate(report: Report) -> str:
    """Grouped bars: the solve rate of each arm on each task set and overall, each labelled with its value."""
    columns = report.task_sets + ["all"] if len(report.task_sets) > 1 else ["all"]
    figure, (axes,) = _figure(max(4.0, 1.2 * len(columns) * max(1, len(report.arms)) / 2 + 2), 2.8)
    width = 0.8 / len(report.arms)
    for index, arm in enumerate(report.arms):
        rates = [report.table[(arm, c)].rate if (arm, c) in report.table else 0.0 for c in columns]
        positions = [c + index * width for c in range(len(columns))]
        bars = _bars(axes, positions, rates, width * 0.9, report.colour(arm))
        bars.set_label(_short(arm))
        axes.bar_label(bars, labels=[f"{r:.0%}" for r in rates], fontsize=7, padding=2)
    axes.set_xticks([c + width * (len(report.arms) - 1) / 2 for c in range(len(columns))], columns)
    axes.set_ylim(-0.03, 1.15)  # 0 sits above the axis line
    axes.set_ylabel("solve rate")
    axes.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return _svg(figure)


def differences(report: Report, verdicts: list[ModelVerdict]) -> str | None:
    """Each comparison's difference of solve rates (arm − rewrite) with its interval, a line at 0; a hollow
    point and the reason for a comparison without an interval; None when there is no comparison with pairs."""
    rows = [(c, c.difference) for verdict in verdicts for c in verdict.comparisons if c.difference is not None]
    if not rows:
        return None
    figure, (axes,) = _figure(6.0, 0.9 + 0.35 * len(rows))
    axes.axvline(0, color="#555", linewidth=0.8)
    for index, (c, difference) in enumerate(rows):
        point, colour = 100 * difference, report.colour(c.arm)
        if c.low is None or c.high is None:  # the interval's ends are set together
            axes.plot([point], [index], "o", markerfacecolor="white", markeredgecolor=colour, markersize=6)
        else:
            axes.errorbar([point], [index], xerr=[[point - 100 * c.low], [100 * c.high - point]], fmt="o",
                          color=colour, capsize=4, markersize=6, linewidth=2)
        label = f"{point:+.0f}" + (f" ({c.no_interval}, n = {c.pairs})" if c.no_interval else "")
        axes.annotate(label, (point, index), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    axes.set_yticks(range(len(rows)), [_short(f"{c.arm} − {c.baseline.split(' · ', 1)[-1]}", 44) for c, _ in rows])
    axes.set_ylim(len(rows) - 0.4, -0.6)  # first comparison on top
    axes.set_xlim(-105, 105)
    axes.set_xlabel("difference in solve rate, points (95% bootstrap interval)")
    return _svg(figure)


def distributions(report: Report) -> str:
    """Box plots of steps, tokens, seconds in steps and seconds outside them, one box per arm."""
    panels = [("steps", "steps"), ("tokens", "tokens"), ("step_seconds", "seconds in steps"),
              ("setup_seconds", "seconds outside steps\n(setup, agent)")]
    figure, axes = _figure(11.0, 2.6 + 0.2 * len(report.arms), len(panels))
    for ax, (field, label) in zip(axes, panels):
        data = [getattr(report.table[(arm, "all")], field) for arm in report.arms]
        boxes = ax.boxplot(data, orientation="horizontal", tick_labels=[_short(a) for a in report.arms],
                           patch_artist=True, medianprops={"color": "black"})
        for box, arm in zip(boxes["boxes"], report.arms):
            box.set_facecolor(report.colour(arm))
            box.set_alpha(0.75)
        ax.invert_yaxis()  # first arm on top, as in the tables
        ax.set_xlabel(label)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    return _svg(figure)


def tool_use(report: Report) -> str:
    """Left: tool calls per episode by tool, per arm; right: pdb calls in solved (filled) and in unsolved
    (hatched) episodes, "n/a" for arms that never had the debugger."""
    figure, (left, right) = _figure(9.0, 2.4 + 0.25 * len(report.arms), 2)
    tools = sorted({tool for use in report.tool_use.values() for tool in use["calls"]})
    rows = range(len(report.arms))
    offsets = [0.0] * len(report.arms)
    for index, tool in enumerate(tools):
        values = [report.tool_use[arm]["calls"][tool] / max(report.tool_use[arm]["episodes"], 1)
                  for arm in report.arms]
        left.barh(rows, values, left=offsets, label=tool, color=_TOOL_COLOURS[index % len(_TOOL_COLOURS)])
        offsets = [o + v for o, v in zip(offsets, values)]
    left.set_yticks(list(rows), [_short(a) for a in report.arms])
    for label, arm in zip(left.get_yticklabels(), report.arms):
        label.set_color(report.colour(arm))
    left.invert_yaxis()
    left.set_xlabel("tool calls per episode")
    left.legend(fontsize=7, frameon=False, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    height = 0.38
    for row, arm in zip(rows, report.arms):
        use = report.tool_use[arm]
        if not use["available"]:
            right.text(0, row, "n/a (no debugger)", va="center", fontsize=8, color="#555")
            continue
        for shift, key, hatched in ((-height / 2, "pdb_solved", False), (height / 2, "pdb_unsolved", True)):
            if use[key] is not None:
                _bars(right, [row + shift], [use[key]], height, report.colour(arm), horizontal=True, hatched=hatched)
    from matplotlib.patches import Patch

    right.legend(handles=[Patch(color="#777", label="solved episodes"),
                          Patch(facecolor="white", edgecolor="#777", hatch="////", label="unsolved episodes")],
                 fontsize=7, frameon=False, ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    right.set_yticks(list(rows), [""] * len(report.arms))
    right.set_ylim(len(report.arms) - 0.5, -0.5)
    right.set_xlim(left=-0.05 * max([1.0] + [report.tool_use[a][k] or 0.0 for a in report.arms
                                             for k in ("pdb_solved", "pdb_unsolved")]))
    right.set_xlabel("pdb calls per episode")
    return _svg(figure)
