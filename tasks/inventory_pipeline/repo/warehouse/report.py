from .totals import totals


def report(lines):
    return {item: f"{count} in stock" for item, count in sorted(totals(lines).items())}
