"""The pdb tool against a bare pexpect driving `python -m pdb`, in the same run.

    python benchmarks/bench_pdb.py [--runs 50] [--task sum_tree] [--pause 0.5]

Starts are measured in both modes: warm (the default: each session is forked from a warm eval interpreter
in an eval room) and fresh (`eval_mode="fresh"`: a new interpreter at the command). Before each timed start
the benchmark waits `--pause` seconds, as an agent's turn would.
Prints a Markdown table (median and p95 in milliseconds).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pexpect
from bench_core import print_table, row, timed

import minidebug
from minidebug.sandbox import process
from minidebug.tools.pdb import pdb_arguments


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--task", default="sum_tree")
    parser.add_argument("--pause", type=float, default=0.5)
    args = parser.parse_args()
    runs = args.runs
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        with minidebug.make(args.task, cache_dir=cache, max_steps=10**6, max_tokens=10**9, pdb_timeout=30) as env:
            env.reset()
            ws = env.workspace
            env_vars = process.episode_environ(ws.venv, ws.home, ws.tmp)
            python = str(ws.venv / "bin" / "python")
            argv = pdb_arguments(env.task.entrypoint)
            pdb = lambda command: env.step({"name": "pdb", "arguments": {"command": command}})[0]  # noqa: E731

            # Bare baseline: pexpect + python -m pdb with the stock prompt.
            bare = pexpect.spawn(python, ["-m", "pdb", *argv], cwd=str(ws.root), env=env_vars,
                                 encoding="utf-8", echo=False)
            bare.delaybeforesend = None
            bare.expect_exact("(Pdb) ", timeout=30)
            bare.sendline("b tree.py:15")
            bare.expect_exact("(Pdb) ")
            bare.sendline("c")
            bare.expect_exact("(Pdb) ", timeout=30)

            def bare_p():
                bare.sendline("p node.value")
                bare.expect_exact("(Pdb) ")

            pdb("b tree.py:15")
            pdb("c")
            ours = timed(lambda: pdb("p node.value"), runs * 4)
            baseline = timed(bare_p, runs * 4)
            rows.append(row("`p x` at a breakpoint (one step)", ours, "bare pexpect + python -m pdb", baseline))
            bare.close(force=True)

            def bare_start():
                child = pexpect.spawn(python, ["-m", "pdb", *argv], cwd=str(ws.root), env=env_vars,
                                      encoding="utf-8", echo=False)
                child.expect_exact("(Pdb) ", timeout=30)
                child.close(force=True)

            def plain_pytest():
                subprocess.run(env.task.entrypoint, cwd=ws.root, env=env_vars, capture_output=True)

            bare_starts, plain_runs = timed(bare_start, runs), timed(plain_pytest, runs)
            for mode in ("fork", "fresh"):
                starts, to_breakpoints = _starts(args.task, cache, mode, runs, args.pause)
                label = "forked in a room" if mode == "fork" else "fresh"
                rows.append(row(f"session start to first prompt, {label}", starts,
                                "bare pexpect + python -m pdb", bare_starts))
                rows.append(row(f"start + `b` + `c` to the breakpoint, {label}", to_breakpoints,
                                "plain python -m pytest of the entrypoint", plain_runs))
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print_table(rows)


def _starts(task: str, cache: Path, mode: str, runs: int, pause: float) -> tuple[list[float], list[float]]:
    """Times of a session's start to its first prompt, and of a start + `b` + `c` to a breakpoint; each after
    the last session was ended with `q` and `pause` seconds went by."""
    with minidebug.make(task, cache_dir=cache, max_steps=10**6, max_tokens=10**9, pdb_timeout=30,
                        eval_mode=mode) as env:
        env.reset()
        pdb = lambda command: env.step({"name": "pdb", "arguments": {"command": command}})[0]  # noqa: E731
        pdb("q")  # the first session (fork mode: its room's interpreter is started) is not timed
        starts, to_breakpoints = [], []
        for _ in range(runs):
            time.sleep(pause)
            starts += timed(lambda: pdb("w"), 1)
            pdb("q")
            time.sleep(pause)
            start = time.perf_counter()
            pdb("b tree.py:15")
            assert pdb("c").endswith("total = node.value")
            to_breakpoints.append((time.perf_counter() - start) * 1000)
            pdb("cl")
            pdb("q")
    return starts, to_breakpoints


if __name__ == "__main__":
    main()
