from tickets import Ticket


def test_numbers_increase():
    start = Ticket.issued
    first, second = Ticket("a"), Ticket("b")
    assert (first.number, second.number) == (start + 1, start + 2)
    assert Ticket.issued == start + 2
