from datetime import datetime

from calendar_util import to_utc


def test_new_york_morning():
    assert to_utc(datetime(2024, 1, 15, 9, 0), "New_York").hour == 14


def test_berlin_evening_crosses_midnight_backwards():
    result = to_utc(datetime(2024, 1, 15, 0, 30), "Berlin")
    assert (result.day, result.hour, result.minute) == (14, 23, 30)


def test_utc():
    assert to_utc(datetime(2024, 1, 15, 12, 0), "UTC").hour == 12
