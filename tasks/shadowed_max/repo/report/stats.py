def spread(values):
    return max(values) - min(values)
