"""A shopping cart."""

from .catalog import price_of


class Cart:
    items = []
    discount = 0

    def add(self, name, quantity=1):
        self.items.append((name, quantity))

    def total(self):
        gross = sum(price_of(name) * quantity for name, quantity in self.items)
        return round(gross * (1 - self.discount), 2)
