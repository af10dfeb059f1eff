"""Throughput of `minidebug run` with the oracle over the bundled suite: -j 1, 2, 4 and Ray.

    cd benchmarks && python bench_runner.py [--seeds 4]

Prints episodes per minute and the runner's overhead per episode beyond the tools' own time
(wall time x workers in use - time spent inside reset and steps, per episode).
"""

from __future__ import annotations

import argparse
import json
import shutil
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
