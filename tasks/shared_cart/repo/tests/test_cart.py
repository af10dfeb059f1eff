from shop import Cart


def test_new_cart_is_empty():
    Cart().add("lamp")
    assert Cart().total() == 0


def test_carts_are_independent():
    alice, bob = Cart(), Cart()
    alice.add("book", 2)
    bob.add("pen")
    assert alice.total() == 25.0
    assert bob.total() == 1.25


def test_discount():
    cart = Cart()
    cart.discount = 0.1
    cart.add("book")
    assert cart.total() == 11.25
