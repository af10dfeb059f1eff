from tags import unique_tags


def test_order_kept():
    assert unique_tags(["b", "a", "b", "c"]) == ["b", "a", "c"]


def test_words():
    assert unique_tags(["zeta", "alpha", "zeta", "mu", "alpha"]) == ["zeta", "alpha", "mu"]
