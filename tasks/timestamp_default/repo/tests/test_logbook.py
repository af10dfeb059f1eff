import time

import logbook


class FastClock:
    """Pretends a minute passed by moving time.monotonic on."""

    def __init__(self, monkeypatch):
        self.now = time.monotonic()
        monkeypatch.setattr(logbook.time, "monotonic", lambda: self.now)

    def sleep(self, seconds):
        self.now += seconds


def test_stamps_follow_the_clock(monkeypatch):
    made = logbook.entries(["a", "b", "c"], FastClock(monkeypatch))
    assert [round(b.stamp - a.stamp) for a, b in zip(made, made[1:])] == [60, 60]


def test_explicit_stamp():
    assert logbook.Entry("x", 5.0).stamp == 5.0
