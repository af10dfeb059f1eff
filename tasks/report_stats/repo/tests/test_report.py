import pytest

from stats import summarize

SAMPLE = """
# daily sample
sensor-a: 10.0
sensor-b: 14.0
sensor-c: 12.0
""".splitlines()


def test_count():
    assert summarize(SAMPLE)["count"] == 3


def test_maximum():
    assert summarize(SAMPLE)["maximum"] == 14.0


def test_mean():
    assert summarize(SAMPLE)["mean"] == pytest.approx(12.0)


def test_empty():
    assert summarize([]) == {"count": 0, "maximum": None, "mean": 0.0}
