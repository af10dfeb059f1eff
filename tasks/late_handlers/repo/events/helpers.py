"""Convenience helpers on top of Bus."""


def on_each(bus, names, handler):
    """Subscribe handler to each of the given event names."""
    for name in names:
        bus.subscribe(lambda event: event == name, handler)
    return len(names)
