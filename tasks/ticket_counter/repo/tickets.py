class Ticket:
    issued = 0

    def __init__(self, holder):
        self.holder = holder
        self.issued += 1
        self.number = self.issued
