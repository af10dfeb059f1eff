from .money import to_cents


def total_cents(prices):
    return to_cents(sum(prices))
