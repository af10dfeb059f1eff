from ramp import ramp


def test_tenths():
    assert ramp(0.0, 1.0, 0.1) == [round(i / 10, 10) for i in range(11)]


def test_halves():
    assert ramp(0.0, 1.0, 0.5) == [0.0, 0.5, 1.0]
