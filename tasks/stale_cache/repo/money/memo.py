"""A tiny memoising decorator."""
import functools


def memoize(func):
    cache = {}

    @functools.wraps(func)
    def wrapper(*args):
        key = args[0]
        if key not in cache:
            cache[key] = func(*args)
        return cache[key]

    wrapper.cache = cache
    return wrapper
