"""Did the debugger help? Per model, each arm's solve rate against the rewrite arm's, paired by task and seed.

Only the tasks and seeds both arms ran count, over all tasks and per task. The difference of solve rates
(arm − rewrite) comes with a 95 % bootstrap confidence interval: the pairs are resampled with replacement
`RESAMPLES` times by a `random.Random(SEED)`, so the same runs always give the same interval.

The interval is given only from `MIN_PAIRS` pairs up, and only when the pairs' differences are not all the
same. A pair's difference is −1, 0 or +1, and with few pairs the percentile bootstrap's interval is far too
narrow: when few pairs differ (15 % of them, say), it holds the true difference in about two runs of three at
10 pairs, and in nearly nine of ten at 20. When every pair has the same difference, resampling cannot vary
and the "interval" is a single point. Either way the report gives the difference and its counts, and says why
there is no interval (`Comparison.no_interval`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .data import BASELINE, Report

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
MIN_PAIRS = 20  # the fewest pairs that get an interval
TOO_FEW = "too few pairs"
NO_SPREAD = "every pair has the same difference"

Key = tuple[str, str, int]  # task set, task, seed


@dataclass(frozen=True)
class Comparison:
    """One arm against the rewrite arm of its model, on the (task, seed) pairs both ran."""

    arm: str
    baseline: str
    pairs: int
    solved: int  # of the pairs, by the arm
    baseline_solved: int
    only_arm: int  # pairs solved by the arm and not by the baseline
    only_baseline: int
    difference: float | None  # arm − baseline solve rate; None without pairs
    low: float | None  # the interval; None without one (see `no_interval`)
    high: float | None
    no_interval: str | None = None  # TOO_FEW or NO_SPREAD when there are pairs but no interval


@dataclass(frozen=True)
class ModelVerdict:
    """A model's comparisons, or why there are none (`missing`); then the same comparisons per task."""

    model: str
    comparisons: list[Comparison]
    missing: str | None = None
    tasks: list[tuple[tuple[str, str], list[Comparison]]] = field(default_factory=list)  # (task set, task)


def bootstrap_interval(differences: list[int], resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `differences` (one value per pair)."""
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return means[int(tail * (resamples - 1))], means[round((1 - tail) * (resamples - 1))]


def outcomes(report: Report, arm: str) -> dict[Key, bool]:
    """Whether `arm` solved each (task set, task, seed) it ran, by the first episode of each."""
    found: dict[Key, bool] = {}
    for episode in report.episodes:
        if episode.arm == arm:
            found.setdefault((episode.task_set, episode.task, episode.seed), episode.solved)
    return found


def paired(arm: str, baseline: str, arm_outcomes: dict[Key, bool], baseline_outcomes: dict[Key, bool],
           task: tuple[str, str] | None = None) -> Comparison:
    """The comparison on the keys both outcomes hold (of one (task set, task) when `task` is given)."""
    keys = sorted(k for k in arm_outcomes.keys() & baseline_outcomes.keys() if task is None or k[:2] == task)
    pairs = [(arm_outcomes[k], baseline_outcomes[k]) for k in keys]
    differences = [int(a) - int(b) for a, b in pairs]
    difference = low = high = reason = None
    if pairs:
        difference = sum(differences) / len(pairs)
        if len(pairs) < MIN_PAIRS:
            reason = TOO_FEW
        elif len(set(differences)) == 1:
            reason = NO_SPREAD
        else:
            low, high = bootstrap_interval(differences)
    return Comparison(arm, baseline, len(pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs),
                      sum(a and not b for a, b in pairs), sum(b and not a for a, b in pairs), difference, low, high,
                      reason)


def compare(report: Report, arm: str, baseline: str) -> Comparison:
    """`arm` against `baseline`, paired by task set, task and seed (the first episode of each pair in either)."""
    return paired(arm, baseline, outcomes(report, arm), outcomes(report, baseline))


def verdicts(report: Report) -> list[ModelVerdict]:
    """Per model (in the report's order), every other arm of it against each of its rewrite arms, over all
    tasks and per (task set, task) that either arm ran."""
    models = list(dict.fromkeys(report.arm_info[arm].model for arm in report.arms))
    found = []
    for model in models:
        arms = [arm for arm in report.arms if report.arm_info[arm].model == model]
        baselines = [arm for arm in arms if report.arm_info[arm].strategy == BASELINE]
        others = [arm for arm in arms if arm not in baselines]
        if not baselines:
            found.append(ModelVerdict(model, [], f"no {BASELINE} arm for {model}: nothing to compare with"))
        elif not others:
            found.append(ModelVerdict(model, [], f"only the {BASELINE} arm ran for {model}: nothing to compare"))
        else:
            ran = {arm: outcomes(report, arm) for arm in arms}
            couples = [(arm, base) for base in baselines for arm in others]
            tasks = sorted({key[:2] for arm in arms for key in ran[arm]})
            found.append(ModelVerdict(
                model, [paired(arm, base, ran[arm], ran[base]) for arm, base in couples],
                tasks=[(task, [paired(arm, base, ran[arm], ran[base], task) for arm, base in couples])
                       for task in tasks]))
    return found
