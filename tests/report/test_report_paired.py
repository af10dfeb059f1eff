"""Paired differences: the bootstrap interval (deterministic, around the mean, narrowing with more pairs), and
what the report says over all tasks and per task, with an interval only where the pairs allow one."""

from pathlib import Path

import pytest

from minidebug.core.trajectory import Action, HeaderRecord, ResultRecord, StepInfo, StepRecord, TrajectoryWriter
from minidebug.report import text_summary
from minidebug.report.paired import MIN_PAIRS, NO_SPREAD, TOO_FEW, bootstrap_interval

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)


def test_the_interval_is_seeded_and_holds_the_mean():
    differences = [1] * 9 + [0] * 18 + [-1] * 3  # debug solved 6 more of 30 tasks than rewrite
    low, high = bootstrap_interval(differences)
    assert bootstrap_interval(differences) == (low, high)  # same pairs, same interval
    assert -0.1 <= low < 0.2 < high <= 0.45  # the difference is 0.2


def test_more_pairs_narrow_the_interval_and_no_change_has_none():
    few = bootstrap_interval([1, 0, 0, -1, 1])
    many = bootstrap_interval([1, 0, 0, -1, 1] * 40)
    assert many[1] - many[0] < (few[1] - few[0]) / 3
    assert bootstrap_interval([0] * 12) == (0.0, 0.0)
    assert bootstrap_interval([1] * 12) == (1.0, 1.0)


def write_run(run: Path, outcomes: dict[tuple[str, str], list[bool]]) -> Path:
    """A run folder of model "m": per (task, strategy), one trajectory per seed (the list's index) with a
    single eval step, solved or not as the list says."""
    for (task, strategy), solved in outcomes.items():
        for seed, ok in enumerate(solved):
            tools = ["eval", "submit"] + ([] if strategy == "rewrite" else ["pdb"])
            writer = TrajectoryWriter(run / f"{task}.llm.{strategy}.s{seed}.jsonl", HeaderRecord(
                task=task, task_set="bundled", agent="llm", model="m", strategy=strategy, seed=seed, tools=tools))
            writer.step(StepRecord(step=1, action=Action(name="eval"), observation=f"{int(ok)} passed",
                                   reward=float(ok), terminated=True, seconds=0.1,
                                   info=StepInfo(score=int(ok), max_score=1, tokens_used=10)))
            writer.finish(ResultRecord(task=task, solved=ok, reward=float(ok), steps=1, tokens=10, seconds=0.2))
    return run


SEEDS = MIN_PAIRS  # sum_tree's seeds: just enough pairs for an interval on that task alone
OUTCOMES = {  # debug solves every even seed of sum_tree, rewrite every fourth; late_handlers is never solved
    ("sum_tree", "debug"): [seed % 2 == 0 for seed in range(SEEDS)],
    ("sum_tree", "rewrite"): [seed % 4 == 0 for seed in range(SEEDS)],
    ("late_handlers", "debug"): [False, False],
    ("late_handlers", "rewrite"): [False, False],
    ("late_handlers", "debug-after-1"): [False, False],
}


def differences(arm: str, tasks: list[str]) -> list[int]:
    """The pairs' differences (arm − rewrite), in the report's order of (task set, task, seed)."""
    return [int(a) - int(b) for task in sorted(tasks)
            for a, b in zip(OUTCOMES[(task, arm)], OUTCOMES[(task, "rewrite")])]


def interval(values: list[int]) -> str:
    low, high = bootstrap_interval(values)
    return f"95% CI {100 * low:+.1f} to {100 * high:+.1f}"


def test_per_task_differences_with_an_interval_only_from_enough_pairs(tmp_path):
    lines = text_summary([write_run(tmp_path / "run", OUTCOMES)]).splitlines()
    overall = differences("debug", ["sum_tree", "late_handlers"])
    assert lines[:2] == [
        f"m · debug − rewrite: +22.7 points ({interval(overall)}), n = {SEEDS + 2} pairs; solved 10/22 against 5/22",
        f"m · debug-after-1 − rewrite: +0.0 points, n = 2 pairs; solved 0/2 against 0/2; {TOO_FEW} "
        f"(fewer than {MIN_PAIRS}): too small a sample to tell, no interval"]
    assert lines[2:7] == [
        f"  per task (solved-rate points, an interval from {MIN_PAIRS} pairs):",
        f"    late_handlers · debug − rewrite: +0.0 points, n = 2 pairs; solved 0/2 against 0/2; {TOO_FEW}",
        f"    late_handlers · debug-after-1 − rewrite: +0.0 points, n = 2 pairs; solved 0/2 against 0/2; {TOO_FEW}",
        f"    sum_tree · debug − rewrite: +25.0 points ({interval(differences('debug', ['sum_tree']))}), "
        f"n = {SEEDS} pairs; solved 10/{SEEDS} against 5/{SEEDS}",
        "    sum_tree · debug-after-1 − rewrite: no pairs (nothing ran under both)"]
    assert lines[7] == ""  # then the summary table
    assert "+0.0 to +0.0" not in "\n".join(lines)


def test_a_small_or_uniform_sample_gets_a_warning_not_an_interval(tmp_path):
    one_pair = text_summary([write_run(tmp_path / "one", {("sum_tree", "debug"): [True],
                                                          ("sum_tree", "rewrite"): [False]})]).splitlines()
    assert one_pair[:3] == [
        f"m · debug − rewrite: +100.0 points, n = 1 pair; solved 1/1 against 0/1; {TOO_FEW} "
        f"(fewer than {MIN_PAIRS}): too small a sample to tell, no interval",
        f"  per task (solved-rate points, an interval from {MIN_PAIRS} pairs):",
        f"    sum_tree · debug − rewrite: +100.0 points, n = 1 pair; solved 1/1 against 0/1; {TOO_FEW}"]
    # enough pairs, but all alike: the bootstrap would give the point "+0.0 to +0.0"
    alike = {("sum_tree", strategy): [True] * MIN_PAIRS for strategy in ("debug", "rewrite")}
    text = text_summary([write_run(tmp_path / "alike", alike)])
    assert text.splitlines()[0] == (f"m · debug − rewrite: +0.0 points, n = {MIN_PAIRS} pairs; "
                                    f"solved {MIN_PAIRS}/{MIN_PAIRS} against {MIN_PAIRS}/{MIN_PAIRS}; {NO_SPREAD}")
    assert "CI" not in text
