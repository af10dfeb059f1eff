from events import Bus, on_each


def record(name, payload):
    return (name, payload)


def test_single_subscription():
    bus = Bus()
    bus.subscribe(lambda event: event == "ping", record)
    assert bus.emit("ping", 1) == [("ping", 1)]
    assert bus.emit("pong") == []


def test_on_each_fires_once_per_name():
    bus = Bus()
    on_each(bus, ["start", "stop"], record)
    assert bus.emit("start", 1) == [("start", 1)]
    assert bus.emit("stop", 2) == [("stop", 2)]


def test_on_each_ignores_other_names():
    bus = Bus()
    on_each(bus, ["a", "b", "c"], record)
    assert bus.emit("d") == []
    assert len(bus.emit("a")) == 1
