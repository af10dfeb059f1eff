from .memo import memoize

RATES = {"EUR": 0.9, "GBP": 0.8, "USD": 1.0}


@memoize
def convert(amount, currency):
    return round(amount * RATES[currency], 2)
