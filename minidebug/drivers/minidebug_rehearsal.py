"""Tests the warm eval interpreter runs once before it is ready (see minidebug_eval._rehearse): passing,
failing and raising, so that pytest's set-up, collection, reporting and traceback formatting have run."""

import pytest


@pytest.fixture
def value():
    return 2


def test_passes(value):
    assert value == 2


@pytest.mark.parametrize("n", [1, 2])
def test_compares(n, value):
    assert {"a": [n, value]} == {"a": [n, 3]}


def _deeper(n):
    if n:
        return _deeper(n - 1)
    raise ValueError(n)


def test_raises():
    _deeper(3)
