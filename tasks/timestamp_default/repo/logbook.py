import time


class Entry:
    def __init__(self, message, stamp=time.monotonic()):
        self.message = message
        self.stamp = stamp


def entries(messages, clock):
    made = []
    for message in messages:
        clock.sleep(60)
        made.append(Entry(message))
    return made
