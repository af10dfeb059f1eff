from .stats import spread


def summary(values):
    max = values[0]
    for value in values:
        if value > max:
            max = value
    return {"largest": largest(values), "spread": spread(values), "count": len(values)}


def largest(values):
    best = values[0]
    for max in values:
        best = max
    return best
