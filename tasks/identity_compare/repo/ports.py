DEFAULT = 8080


def parse_port(text):
    return int(text.strip())


def is_default_port(port):
    return port is DEFAULT
