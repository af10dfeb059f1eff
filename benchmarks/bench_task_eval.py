"""A task's eval against plain pytest of the same tests in the same venv and tree, in the same run.

    python benchmarks/bench_task_eval.py TASK [--runs 10] [--pause 1.0] [--solved]

For a task folder (an imported SWE-bench instance, say): the eval step forked from a warm interpreter (the
default) and fresh (`eval_mode="fresh"`), each after `--pause` seconds (an agent's turn), interleaved with the
task's eval command run plainly (each after a pause too) in the episode's worktree, with the project on
PYTHONPATH as pdb and bash have it: once as they run it (no bytecode written), once as a developer does
(bytecode kept, in a cache folder of its own, written by one run first). Prints a Markdown table (median and
p95 in milliseconds) and
the tests each way passed, so a baseline that tested something else shows. With `--solved`, the task's
solution.patch is applied to the worktree first (the eval that ends a solved episode).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_core import print_table, row, timed

import minidebug


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("task")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pause", type=float, default=1.0)
    parser.add_argument("--solved", action="store_true", help="apply the task's solution.patch first")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows, passed = [], {}
    try:
        for mode in ("fork", "fresh"):
            with minidebug.make(args.task, cache_dir=cache, eval_mode=mode, max_steps=10**6,
                                max_tokens=10**9, terminate_on_success=False) as env:
                env.reset()
                if args.solved:  # the eval at the end of an episode that fixed the bug
                    subprocess.run(["git", "apply", str(env.task.solution)], cwd=env.workspace.root, check=True)
                info = env.step({"name": "eval"})[4]  # the first eval measures the counted tests
                passed[f"eval ({mode})"] = f"{info.get('score')}/{info.get('max_score')}"
                ws = env.workspace
                environ = ws.environ()
                cached = {k: v for k, v in environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
                cached["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")  # a developer's run: bytecode kept
                subprocess.run(env.task.eval_command, cwd=ws.root, env=cached, capture_output=True)  # writes it
                ours, bare, bare_cached = [], [], []
                for _ in range(args.runs):
                    time.sleep(args.pause)
                    ours += timed(lambda: env.step({"name": "eval"}), 1)
                    for baseline, variables in ((bare, environ), (bare_cached, cached)):
                        time.sleep(args.pause)  # what the env does after an eval is not the baseline's cost
                        start = time.perf_counter()
                        done = subprocess.run(env.task.eval_command, cwd=ws.root, env=variables,
                                              capture_output=True, text=True)
                        baseline.append((time.perf_counter() - start) * 1000)
                summary = re.findall(r"\d+ (?:passed|failed|error)", done.stdout)
                passed["plain python -m pytest"] = ", ".join(summary) or done.stdout[-200:]
                rows.append(row(f"eval step, eval_mode={mode}", ours, "the eval command, plain, same venv", bare))
                rows.append(row(f"eval step, eval_mode={mode}", ours,
                                "the eval command, plain, same venv, bytecode cached", bare_cached))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print_table(rows)
    for what, figure in passed.items():
        print(f"{what}: {figure}")


if __name__ == "__main__":
    main()
