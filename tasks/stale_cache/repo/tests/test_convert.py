from money import convert


def test_eur_then_gbp():
    assert convert(100, "EUR") == 90.0
    assert convert(100, "GBP") == 80.0


def test_usd():
    assert convert(50, "USD") == 50.0
    assert convert(50, "EUR") == 45.0
