from report import summary


def test_summary():
    assert summary([3, 9, 4]) == {"largest": 9, "spread": 6, "count": 3}


def test_single():
    assert summary([5]) == {"largest": 5, "spread": 0, "count": 1}
