def add_counts(counts, item, count):
    counts[item] = count
    return counts
