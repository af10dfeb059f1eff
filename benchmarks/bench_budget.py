"""Token budgeting cost: fitting a 1 MB and a 2 KB observation, beside tiktoken's bare encode of the same text.

    cd benchmarks && python bench_budget.py [--runs 50]
"""

from __future__ import annotations

import argparse
import random

from bench_core import print_table, row, timed

from minidebug.core.budget import Budget


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(0)
    big = "".join(f"{i:>6}: value={rng.random():.6f} status=ok path=src/module_{i % 97}.py\n" for i in range(20000))
    big = big[:1_000_000]
    small = big[:2048]
    budget = Budget(10**12, 4000)
    encoding = budget.encoding
    rows = [
        row("fit a 1 MB observation (4000-token budget)", timed(lambda: budget.fit(big), args.runs),
            "tiktoken encode_ordinary of the 1 MB", timed(lambda: encoding.encode_ordinary(big), args.runs)),
        row("fit a 2 KB observation", timed(lambda: budget.fit(small), args.runs * 20),
            "tiktoken encode_ordinary of the 2 KB", timed(lambda: encoding.encode_ordinary(small), args.runs * 20)),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
