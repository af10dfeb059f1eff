"""New episodes one after another, as an RL trainer or `minidebug run` makes them, against plain pytest.

    python benchmarks/bench_episodes.py [--rounds 6] [--tasks sum_tree,grid_rows,...] [--pause 0.5]

Each round makes a new env for each task in turn (round-robin, one process, default settings, no pool
passed) and runs one episode: make, reset, `--pause` seconds (the agent's first turns), one eval, close.
Timed: the first eval, and the whole episode less the pause. Baseline: the task's eval command run plainly in
the same venv and worktree (no bytecode written, as eval runs it), once per episode, in the same round. The
same loop is run with `eval_mode="fresh"`. A first round, untimed, builds the cache (venvs, counted tests).
Prints a Markdown table (median and p95 in milliseconds).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_core import print_table, row

import minidebug

TASKS = "sum_tree,grid_rows,inventory_pipeline,first_seen_order,late_handlers"


def episode(task: str, cache: Path, mode: str, pause: float) -> tuple[float, float, float]:
    """(first eval ms, whole episode ms less the pause, plain pytest ms) of one new episode."""
    start = time.perf_counter()
    with minidebug.make(task, cache_dir=cache, eval_mode=mode, terminate_on_success=False) as env:
        env.reset()
        time.sleep(pause)
        before = time.perf_counter()
        env.step({"name": "eval"})
        evaluated = time.perf_counter()
        plain = subprocess.run(env.task.eval_command, cwd=env.workspace.root, env=env.workspace.environ(),
                               capture_output=True)
        plain_ms = (time.perf_counter() - evaluated) * 1000
        assert plain.returncode in (0, 1), plain.stdout[-500:]
        closing = time.perf_counter()
    end = time.perf_counter()
    whole = (before - start - pause) + (evaluated - before) + (end - closing)
    return (evaluated - before) * 1000, whole * 1000, plain_ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--pause", type=float, default=0.5)
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        for task in tasks:  # build venvs, repos and counted tests; untimed
            episode(task, cache, "fresh", 0.0)
        for mode in ("fork", "fresh"):
            first, whole, plain = [], [], []
            for _ in range(args.rounds):
                for task in tasks:
                    sample = episode(task, cache, mode, args.pause)
                    first.append(sample[0])
                    whole.append(sample[1])
                    plain.append(sample[2])
            rows.append(row(f"new episode's first eval, {mode}", first, "plain python -m pytest", plain))
            rows.append(row(f"whole episode (make to close, one eval), {mode}", whole,
                            "plain python -m pytest", plain))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"{len(tasks)} tasks round-robin ({', '.join(tasks)}), {args.rounds} rounds, pause {args.pause} s")
    print_table(rows)


if __name__ == "__main__":
    main()
