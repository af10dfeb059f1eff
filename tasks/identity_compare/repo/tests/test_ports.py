from ports import is_default_port, parse_port


def test_parsed():
    assert is_default_port(parse_port(" 8080 "))


def test_other():
    assert not is_default_port(parse_port("80"))
