"""The bootstrap interval of paired differences: deterministic, around the mean, narrowing with more pairs."""

from minidebug.report.paired import bootstrap_interval


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
