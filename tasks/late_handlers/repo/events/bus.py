"""A minimal event bus."""


class Bus:
    def __init__(self):
        self._handlers = []

    def subscribe(self, accepts, handler):
        """Call handler(name, payload) for every emitted event that accepts(name) admits."""
        self._handlers.append((accepts, handler))

    def emit(self, name, payload=None):
        fired = []
        for accepts, handler in self._handlers:
            if accepts(name):
                fired.append(handler(name, payload))
        return fired
