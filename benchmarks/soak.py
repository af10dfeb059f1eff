"""Soak: 1,000 reset+edit+eval cycles on one env and 200 make/close cycles, with the counts that must not grow.

    cd benchmarks && python soak.py [--cycles 1000] [--makes 200] [--task sum_tree]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import minidebug
from minidebug.run.soak import snapshot


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--makes", type=int, default=200)
    parser.add_argument("--task", default="sum_tree")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        with minidebug.make(args.task, cache_dir=cache, max_steps=10**9, max_tokens=10**12) as env:
            env.reset()
            bare = env.workspace.prepared.bare_repo
            env.step({"name": "eval"})
            start, begin = snapshot(bare), time.monotonic()
            for i in range(args.cycles):
                env.reset()
                env.step({"name": "edit", "arguments": {"path": "tree.py", "start": 1, "end": 0, "new_code": f"# {i}"}})
                env.step({"name": "eval"})
            rows.append((f"{args.cycles} reset+edit+eval cycles", start, snapshot(bare), time.monotonic() - begin))
        start, begin = snapshot(bare), time.monotonic()
        for _ in range(args.makes):
            with minidebug.make(args.task, cache_dir=cache) as env:
                env.reset()
                env.step({"name": "view", "arguments": {"path": "tree.py"}})
        rows.append((f"{args.makes} make+reset+close cycles", start, snapshot(bare), time.monotonic() - begin))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    keys = ["fds", "threads", "children", "temp_dirs", "worktrees", "rss_mb"]
    print("| run | seconds | " + " | ".join(f"{k} before → after" for k in keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for name, before, after, seconds in rows:
        print(f"| {name} | {seconds:.0f} | " + " | ".join(f"{before[k]} → {after[k]}" for k in keys) + " |")


if __name__ == "__main__":
    main()
