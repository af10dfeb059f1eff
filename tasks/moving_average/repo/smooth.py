import numpy as np


def moving_average(values, window):
    data = np.asarray(values, dtype=float)
    return [float(data[i:i + window].mean()) for i in range(len(data) - window)]
