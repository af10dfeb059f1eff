"""Did the debugger help? Per model, each arm's solve rate against the rewrite arm's, paired by task and seed.

Only the tasks and seeds both arms ran count. The difference of solve rates (arm − rewrite) comes with a
95 % bootstrap confidence interval: the pairs are resampled with replacement `RESAMPLES` times by a
`random.Random(SEED)`, so the same runs always give the same interval.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .data import BASELINE, Report

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


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
    low: float | None
    high: float | None


@dataclass(frozen=True)
class ModelVerdict:
    """A model's comparisons, or why there are none (`missing`)."""

    model: str
    comparisons: list[Comparison]
    missing: str | None = None


def bootstrap_interval(differences: list[int], resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `differences` (one value per pair)."""
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return means[int(tail * (resamples - 1))], means[round((1 - tail) * (resamples - 1))]


def compare(report: Report, arm: str, baseline: str) -> Comparison:
    """`arm` against `baseline`, paired by task set, task and seed (the first episode of each pair in either)."""
    outcomes: dict[str, dict] = {arm: {}, baseline: {}}
    for episode in report.episodes:
        if episode.arm in outcomes:
            outcomes[episode.arm].setdefault((episode.task_set, episode.task, episode.seed), episode.solved)
    keys = sorted(outcomes[arm].keys() & outcomes[baseline].keys())
    pairs = [(outcomes[arm][k], outcomes[baseline][k]) for k in keys]
    differences = [int(a) - int(b) for a, b in pairs]
    difference = low = high = None
    if pairs:
        difference = sum(differences) / len(pairs)
        low, high = bootstrap_interval(differences)
    return Comparison(arm, baseline, len(pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs),
                      sum(a and not b for a, b in pairs), sum(b and not a for a, b in pairs), difference, low, high)


def verdicts(report: Report) -> list[ModelVerdict]:
    """Per model (in the report's order), every other arm of it against each of its rewrite arms."""
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
            found.append(ModelVerdict(model, [compare(report, arm, base) for base in baselines for arm in others]))
    return found
