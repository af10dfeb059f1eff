import numpy as np


def as_array(readings):
    return np.asarray(readings, dtype=np.int16)


def daily_total(readings):
    return int(as_array(readings).sum(dtype=np.int16))


def peak(readings):
    return int(as_array(readings).max())
