from billing import total_cents


def test_small_prices():
    assert total_cents([0.03, 0.30]) == 33


def test_single():
    assert total_cents([0.57]) == 57


def test_whole():
    assert total_cents([1.0, 2.5]) == 350


def test_many():
    assert total_cents([0.01] * 100) == 100
