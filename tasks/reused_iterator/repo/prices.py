def adjusted(prices):
    return map(lambda p: round(p * 1.2, 2), prices)


def average(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def pairs_report(prices):
    taxed = adjusted(prices)
    pairs = list(zip(prices, taxed))
    return {"pairs": pairs, "average": average(taxed)}
