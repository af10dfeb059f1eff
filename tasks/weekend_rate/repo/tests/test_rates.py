from datetime import date

from rates import price


def test_monday():
    assert price(date(2024, 1, 15), 10.0) == 10.0


def test_saturday_and_sunday():
    assert price(date(2024, 1, 13), 10.0) == 15.0
    assert price(date(2024, 1, 14), 10.0) == 15.0
