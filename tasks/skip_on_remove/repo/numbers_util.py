def drop_negatives(values):
    result = list(values)
    for value in result:
        if value < 0:
            result.remove(value)
    return result
