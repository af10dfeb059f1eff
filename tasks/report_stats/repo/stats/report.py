"""Summaries of readings."""

from .readings import parse


def _mean(values, count):
    return sum(values) / count if count else 0.0


def summarize(lines):
    values = parse(lines)
    peak = max(values, default=None)
    count = sum(1 for _ in values)
    return {"count": count, "maximum": peak, "mean": _mean(values, count)}
