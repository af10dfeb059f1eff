def unique_tags(tags):
    return list(set(tags))
