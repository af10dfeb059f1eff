from pathlib import Path


def save_names(path, names):
    Path(path).write_text("\\n".join(names), encoding="latin-1")


def load_names(path):
    return Path(path).read_text(encoding="utf-8", errors="replace").split("\\n")
