def ramp(start, stop, step):
    values = []
    value = start
    while value != stop:
        values.append(round(value, 10))
        value += step
    values.append(stop)
    return values
