def find(items, target, lo=0, hi=None):
    """Index of target in the sorted list items, or -1."""
    if hi is None:
        hi = len(items) - 1
    if lo > hi:
        return -1
    mid = (lo + hi) // 2
    if items[mid] == target:
        return mid
    if items[mid] < target:
        return find(items, target, mid, hi - 1)
    return find(items, target, lo, mid - 1)
