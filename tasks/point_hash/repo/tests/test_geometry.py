from geometry import Point, unique_points


def test_equal_points_once():
    assert len(unique_points([Point(1, 2), Point(1, 2)])) == 1


def test_as_dict_keys():
    seen = {Point(0, 0): "origin"}
    assert seen[Point(0, 0)] == "origin"
