from energy import daily_total, peak


def test_busy_day():
    assert daily_total([1000] * 48) == 48000


def test_quiet_day():
    assert daily_total([10, 20, 30]) == 60


def test_peak():
    assert peak([5, 900, 20]) == 900
