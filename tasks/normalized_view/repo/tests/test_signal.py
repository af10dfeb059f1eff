import numpy as np

from signal_tools import normalize_first_half


def test_input_untouched():
    signal = np.array([2.0, -4.0, 1.0, 1.0])
    result = normalize_first_half(signal)
    assert result.tolist() == [0.5, -1.0]
    assert signal.tolist() == [2.0, -4.0, 1.0, 1.0]
