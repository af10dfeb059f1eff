from bill import split


def test_adds_up():
    assert sum(split(100, 3)) == 100
    assert sorted(split(100, 3)) == [33, 33, 34]


def test_even():
    assert split(90, 3) == [30, 30, 30]
