import numpy as np


def normalize_first_half(signal):
    half = signal[: len(signal) // 2]
    half /= np.abs(half).max()
    return half
