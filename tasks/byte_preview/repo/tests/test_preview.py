from preview import preview


def test_accents():
    assert preview("héllo wörld", 5) == "héllo"


def test_ascii():
    assert preview("hello world", 5) == "hello"


def test_short():
    assert preview("ß", 3) == "ß"
