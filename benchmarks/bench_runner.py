"""Throughput of `minidebug run` with the oracle over the bundled suite: -j 1, 2, 4 and Ray.

    cd benchmarks && python bench_runner.py [--seeds 4]
    cd benchmarks && python bench_runner.py --fork-vs-fresh 5

Prints episodes per minute and the runner's overhead per episode beyond the tools' own time
(wall time x workers in use - time spent inside reset and steps, per episode). With `--fork-vs-fresh N`:
`minidebug run --agent oracle -j 2` over the bundled tasks (one seed), warm cache, N runs in each eval mode,
interleaved after an untimed run of each, as the median wall time of each mode and their ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import minidebug
from minidebug.run.batch import plan, run_batch
from minidebug.tasks.task import bundled_task_names, load_task


def tool_seconds(out: Path) -> float:
    total = 0.0
    for path in out.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "step":
                total += record["seconds"]
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--fork-vs-fresh", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.fork_vs_fresh:
        fork_vs_fresh(args.fork_vs_fresh)
        return
    tasks = [load_task(n) for n in bundled_task_names()]
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    try:
        for task in tasks:  # warm the cache, as a second run on a machine would find it
            with minidebug.make(task, cache_dir=cache) as env:
                env.reset()
        specs = plan(tasks, ["oracle"], range(args.seeds), make_options={"cache_dir": str(cache)})
        print("| backend | workers | episodes | wall s | episodes/min | overhead per episode ms |")
        print("|---|---|---|---|---|---|")
        for backend, jobs in (("process", 1), ("process", 2), ("process", 4), ("ray", 2)):
            out = cache / f"out-{backend}-{jobs}"
            start = time.monotonic()
            results = run_batch(specs, out, jobs=jobs, backend=backend)
            wall = time.monotonic() - start
            assert all(r.solved for r in results)
            in_use = min(jobs, 2)  # this machine has two cores
            overhead = (wall * in_use - tool_seconds(out)) / len(results) * 1000
            print(f"| {backend} | {jobs} | {len(results)} | {wall:.1f} | {len(results) / wall * 60:.0f} | "
                  f"{overhead:.0f} |")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def fork_vs_fresh(runs: int) -> None:
    tasks = [load_task(n) for n in bundled_task_names()]
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    walls: dict[str, list[float]] = {"fork": [], "fresh": []}
    try:
        for number in range(runs + 1):  # the first of each mode untimed: it fills the cache
            for mode in walls:
                specs = plan(tasks, ["oracle"], [0], make_options={"cache_dir": str(cache), "eval_mode": mode})
                start = time.monotonic()
                results = run_batch(specs, cache / f"out-{mode}-{number}", jobs=2)
                if number:
                    walls[mode].append(time.monotonic() - start)
                assert all(r.solved for r in results)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    fork, fresh = (statistics.median(walls[mode]) for mode in ("fork", "fresh"))
    print("| `minidebug run --agent oracle -j 2`, bundled tasks | median s | runs |")
    print("|---|---|---|")
    print(f"| eval_mode fork (the default) | {fork:.2f} | {runs} |")
    print(f"| eval_mode fresh | {fresh:.2f} | {runs} |")
    print(f"fork is {fresh / fork:.2f}x faster")


if __name__ == "__main__":
    main()
