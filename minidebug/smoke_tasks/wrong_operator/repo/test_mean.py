from mean import average


def test_average():
    assert average([2, 4]) == 3.0


def test_single():
    assert average([5]) == 5.0
