"""Settings from a tiny key = value config text."""

DEFAULTS = {"retries": 3, "timeout": 10}


def parse(text):
    values = {}
    for line in text.splitlines():
        if "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def setting(values, name):
    try:
        return int(values[name.upper()])
    except Exception:
        return DEFAULTS[name]


def load_settings(text):
    values = parse(text)
    return {name: setting(values, name) for name in DEFAULTS}
