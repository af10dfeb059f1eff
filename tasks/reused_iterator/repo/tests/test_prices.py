import pytest

from prices import pairs_report


def test_report():
    report = pairs_report([10.0, 20.0])
    assert report["pairs"] == [(10.0, 12.0), (20.0, 24.0)]
    assert report["average"] == pytest.approx(18.0)
