"""The pdb tool against a bare pexpect driving `python -m pdb`, in the same run.

    python benchmarks/bench_pdb.py [--runs 50] [--task sum_tree]

Prints a Markdown table (median and p95 in milliseconds).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import pexpect

import minidebug
from minidebug.sandbox import process
from minidebug.tools.pdb import pdb_arguments

from bench_core import print_table, row, timed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--task", default="sum_tree")
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

            def start():
                env.tools["pdb"].close()
                env.tools["pdb"].breakpoints.clear()
                pdb("w")

            def bare_start():
                child = pexpect.spawn(python, ["-m", "pdb", *argv], cwd=str(ws.root), env=env_vars,
                                      encoding="utf-8", echo=False)
                child.expect_exact("(Pdb) ", timeout=30)
                child.close(force=True)

            rows.append(row("session start to first prompt (pytest entrypoint)", timed(start, runs),
                            "bare pexpect + python -m pdb", timed(bare_start, runs)))

            def to_breakpoint():
                env.tools["pdb"].close()
                pdb("b tree.py:15")
                assert pdb("c").endswith("total = node.value")

            def plain_pytest():
                subprocess.run(env.task.entrypoint, cwd=ws.root, env=env_vars, capture_output=True)

            rows.append(row("start + `b` + `c` to the breakpoint", timed(to_breakpoint, runs),
                            "plain python -m pytest of the entrypoint", timed(plain_pytest, runs)))
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print_table(rows)


if __name__ == "__main__":
    main()
