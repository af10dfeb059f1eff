PRICES = {"book": 12.5, "pen": 1.25, "lamp": 30.0}


def price_of(name):
    return PRICES[name]
