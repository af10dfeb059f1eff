def ranking(scores):
    scores.sort(reverse=True)
    return [(place + 1, score) for place, score in enumerate(scores)]
