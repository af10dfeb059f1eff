from search import find

ITEMS = [1, 3, 5, 7, 9, 11]


def test_every_item_is_found():
    assert [find(ITEMS, x) for x in ITEMS] == [0, 1, 2, 3, 4, 5]


def test_missing():
    assert find(ITEMS, 4) == -1
    assert find(ITEMS, 12) == -1
    assert find([], 1) == -1
