from .merge import add_counts
from .parsing import parse_line


def totals(lines):
    counts = {}
    for line in lines:
        item, count = parse_line(line)
        add_counts(counts, item, count)
    return counts
