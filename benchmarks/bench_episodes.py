"""New episodes one after another, as an RL trainer or `minidebug run` makes them, against plain pytest.

    python benchmarks/bench_episodes.py [--rounds 6] [--tasks sum_tree,grid_rows,...] [--pause 0.5] [--loop 12]

Each round makes a new env for each task in turn (round-robin, one process, default settings, no pool
passed) and runs one episode: make, reset, `--pause` seconds (the agent's first turns), one eval, close.
Timed: the first eval, and the whole episode less the pause. Baseline: the task's eval command run plainly in
the same venv and worktree (no bytecode written, as eval runs it), once per episode, in the same round. The
same loop is run with `eval_mode="fresh"`. A first round, untimed, builds the cache (venvs, counted tests).
Then the agent loop on sum_tree (`--loop` rounds in one env): pdb `b tree.py:15`, `c`, `p node.value`, an
edit (a comment added to that line or taken off again: a change, so pdb's program restarts), an eval; timed:
the eval and the whole round, against plain pytest of the same tests measured after each round. Prints a
Markdown table (median and p95 in milliseconds).
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


def agent_loop(cache: Path, rounds: int, pause: float) -> tuple[list[float], list[float], list[float]]:
    """(eval ms, round ms less the pauses, plain pytest ms) of each round of the agent loop on sum_tree."""
    evals, whole, plain = [], [], []
    with minidebug.make("sum_tree", cache_dir=cache, terminate_on_success=False, max_steps=10**6,
                        max_tokens=10**9) as env:
        env.reset()
        env.step({"name": "eval"})
        line = (env.workspace.root / "tree.py").read_text().splitlines()[14]
        for number in range(rounds):
            time.sleep(pause)
            start = time.perf_counter()
            for command in ("b tree.py:15", "c", "p node.value"):
                env.step({"name": "pdb", "arguments": {"command": command}})
            edited = line if number % 2 else line + "  # checked"
            env.step({"name": "edit", "arguments": {"path": "tree.py", "start": 15, "end": 15, "new_code": edited}})
            before = time.perf_counter()
            env.step({"name": "eval"})
            end = time.perf_counter()
            evals.append((end - before) * 1000)
            whole.append((end - start) * 1000)
            begun = time.perf_counter()
            subprocess.run(env.task.eval_command, cwd=env.workspace.root, env=env.workspace.environ(),
                           capture_output=True)
            plain.append((time.perf_counter() - begun) * 1000)
    return evals, whole, plain


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--pause", type=float, default=0.5)
    parser.add_argument("--loop", type=int, default=12)
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
        if args.loop:
            evals, rounds, plain = agent_loop(cache, args.loop, args.pause)
            rows.append(row("agent loop on sum_tree: eval after pdb b/c/p and an edit", evals,
                            "plain python -m pytest", plain))
            rows.append(row("agent loop on sum_tree: the whole round", rounds, "plain python -m pytest", plain))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"{len(tasks)} tasks round-robin ({', '.join(tasks)}), {args.rounds} rounds, pause {args.pause} s")
    print_table(rows)


if __name__ == "__main__":
    main()
