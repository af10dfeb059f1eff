from numbers_util import drop_negatives


def test_adjacent_negatives():
    assert drop_negatives([-1, -2, 3]) == [3]


def test_mixed():
    assert drop_negatives([4, -1, 5, -6, -7, 8]) == [4, 5, 8]


def test_none_negative():
    assert drop_negatives([1, 2]) == [1, 2]
