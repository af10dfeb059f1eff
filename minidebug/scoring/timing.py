"""How long a scored run seems to last: padded to a bucket, so that its duration carries few bits.

The scored run of a task with hidden files runs the agent's code beside them; whatever its duration depends
on, a program that starts after it can only tell which of `buckets(timeout)` durations it seemed to last.
"""

from __future__ import annotations

SHORTEST_BUCKET = 0.25  # seconds: the scored run of a task with hidden files lasts one of 0.25 s, 0.5 s, 1 s, ...
KILL_GRACE = 2.0  # seconds past its timeout that a run's end (its kill, its report) may take, in the last bucket


def padding(elapsed: float, timeout: float) -> float:
    """How long to wait after a scored run of `elapsed` seconds so that it seems to last a whole bucket:
    `SHORTEST_BUCKET` times a power of two below the timeout, or the last bucket, `KILL_GRACE` past the
    timeout. A program can then tell at most `log2(buckets(timeout))` bits from the run's duration."""
    bucket = SHORTEST_BUCKET
    while bucket < elapsed and bucket * 2 < timeout:
        bucket *= 2
    if bucket < elapsed:
        bucket = timeout + KILL_GRACE  # the run met its timeout: it was killed
    return max(0.0, bucket - elapsed)


def buckets(timeout: float) -> int:
    """How many durations a padded scored run can seem to last, for `timeout`."""
    count, bucket = 1, SHORTEST_BUCKET
    while bucket * 2 < timeout:
        bucket, count = bucket * 2, count + 1
    return count + 1
