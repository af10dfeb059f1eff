from words import dedupe_words


def test_one_call():
    assert dedupe_words("x y x z") == ["x", "y", "z"]


def test_calls_are_independent():
    assert dedupe_words("a b") == ["a", "b"]
    assert dedupe_words("b c") == ["b", "c"]
