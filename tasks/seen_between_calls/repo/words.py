_seen = set()


def dedupe_words(text):
    result = []
    for word in text.split():
        if word not in _seen:
            _seen.add(word)
            result.append(word)
    return result
