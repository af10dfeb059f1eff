from league import ranking


def test_input_untouched():
    scores = [3, 9, 5]
    assert ranking(scores) == [(1, 9), (2, 5), (3, 3)]
    assert scores == [3, 9, 5]
