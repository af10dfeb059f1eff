"""Parse readings like "sensor-a: 12.5" from lines of text."""


def parse(lines):
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        _, _, value = line.partition(":")
        yield float(value)
