"""Latency of the episode core, each figure beside its bare baseline measured in the same run.

    python benchmarks/bench_core.py [--runs 50] [--task sum_tree]

Prints a Markdown table (median and p95 in milliseconds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import minidebug
from minidebug.sandbox import process


def timed(fn, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def row(name: str, samples: list[float], baseline_name: str = "", baseline: list[float] | None = None) -> str:
    cells = [name, f"{statistics.median(samples):.1f}", f"{p95(samples):.1f}", str(len(samples))]
    if baseline:
        ratio = statistics.median(samples) / statistics.median(baseline)
        cells += [baseline_name, f"{statistics.median(baseline):.1f}", f"{p95(baseline):.1f}", f"{ratio:.2f}x"]
    else:
        cells += ["", "", "", ""]
    return "| " + " | ".join(cells) + " |"


def print_table(rows: list[str]) -> None:
    print("| measure | median ms | p95 ms | runs | baseline | baseline median ms | baseline p95 ms | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--task", default="sum_tree")
    args = parser.parse_args()
    runs = args.runs
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        # Cold: a fresh cache dir (bare repo + venv with pip install), a few runs only.
        cold = []
        for i in range(3):
            target = cache / f"cold{i}"
            start = time.perf_counter()
            with minidebug.make(args.task, cache_dir=target) as env:
                env.reset()
            cold.append((time.perf_counter() - start) * 1000)
        # Cold task cache with the venv already built (what an edited task costs).
        cold_repo = []
        for _ in range(10):
            shutil.rmtree(cache / "cold0" / "tasks")
            start = time.perf_counter()
            with minidebug.make(args.task, cache_dir=cache / "cold0") as env:
                env.reset()
            cold_repo.append((time.perf_counter() - start) * 1000)
        warm_cache = cache / "cold0"

        def first_reset():
            with minidebug.make(args.task, cache_dir=warm_cache) as env:
                env.reset()

        first = timed(first_reset, runs)
        rows.append(row("first reset, cold cache (venv + repo)", cold))
        rows.append(row("first reset, cold repo cache, warm venv", cold_repo))
        rows.append(row("make + first reset, warm cache", first))

        with minidebug.make(args.task, cache_dir=warm_cache, max_steps=10**6, max_tokens=10**9) as env:
            env.reset()
            root = env.workspace.root
            edit = {"name": "edit", "arguments": {"path": "tree.py", "start": 1, "end": 1, "new_code": "# x"}}
            view = {"name": "view", "arguments": {"path": "tree.py"}}

            def dirty_then(fn):
                def run():
                    (root / "tree.py").write_text("changed\n")
                    (root / "scratch.txt").write_text("new\n")
                    fn()
                return run

            def bare_git():
                subprocess.run(["git", "checkout", "-f", "-q", "--detach", env.workspace.prepared.base_commit],
                               cwd=root, check=True)
                subprocess.run(["git", "clean", "-fdxq"], cwd=root, check=True)

            bare = timed(dirty_then(bare_git), runs)
            warm = timed(dirty_then(env.reset), runs)
            rows.append(row("warm reset (after an edit and a new file)", warm, "git checkout -f && git clean -fdx",
                            bare))

            def deep_tree():  # a program's 1,500-level folder tree (git clean's time grows with its square)
                here = os.open(root, os.O_RDONLY)
                try:
                    for _ in range(1500):
                        os.mkdir("d", dir_fd=here)
                        below = os.open("d", os.O_RDONLY, dir_fd=here)
                        os.close(here)
                        here = below
                finally:
                    os.close(here)

            def after_deep_tree(fn, count):  # the tree is made before each timed call, untimed
                samples = []
                for _ in range(count):
                    deep_tree()
                    samples += timed(fn, 1)
                return samples

            deep = after_deep_tree(env.reset, runs)
            bare_deep = after_deep_tree(bare_git, 2)  # about a minute each on a 2-core machine
            rows.append(row("reset after a 1,500-level tree", deep, "git checkout -f && git clean -fdx", bare_deep))
            env.reset()
            assert not env.step(view)[0].startswith("error")
            rows.append(row("view step", timed(lambda: env.step(view), runs * 4)))
            rows.append(row("edit step", timed(lambda: env.step(edit), runs * 4)))
            assert not env.step(edit)[0].startswith("error")
            env.reset()
            venv_env = process.episode_environ(env.workspace.venv, env.workspace.home, env.workspace.tmp)
            bare_pytest = []
            ours = []
            for _ in range(max(runs // 2, 10)):  # interleaved, so both see the same machine load
                bare_pytest += timed(lambda: subprocess.run(env.task.eval_command, cwd=root, env=venv_env,
                                                            capture_output=True), 1)
                ours += timed(lambda: env.step({"name": "eval"}), 1)
            rows.append(row("eval step", ours, "python -m pytest in the same venv", bare_pytest))

        imports = timed(lambda: subprocess.run([sys.executable, "-c", "import minidebug"], check=True), runs)
        bare_python = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), runs)
        rows.append(row("python -c 'import minidebug'", imports, "python -c pass", bare_python))
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print_table(rows)


if __name__ == "__main__":
    main()
