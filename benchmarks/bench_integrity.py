"""What the integrity guarantees cost: eval in its own tree, the sandboxes, the venv check.

    python benchmarks/bench_integrity.py [--runs 30] [--task sum_tree]

Prints a Markdown table (median and p95 in milliseconds), each figure beside its bare baseline measured in
the same run: plain `python -m pytest` in the same venv, a plain subprocess start.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

from bench_core import print_table, row, timed

import minidebug
from minidebug.sandbox import process
from minidebug.store import treeguard
from minidebug.sandbox.confinement import Confinement
from minidebug.sandbox.choose import bwrap_works, landlock_works


def sandboxes() -> list[str | None]:
    return [None] + (["landlock"] if landlock_works() else []) + (["bwrap"] if bwrap_works() else [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--task", default="sum_tree")
    args = parser.parse_args()
    runs = args.runs
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    warnings.simplefilter("ignore")
    try:
        with minidebug.make(args.task, cache_dir=cache) as env:
            env.reset()
            env.step({"name": "eval"})  # the counted tests are measured once, on the first eval
        for kind in sandboxes():
            with minidebug.make(args.task, cache_dir=cache, sandbox=kind, max_steps=10**6,
                                max_tokens=10**9) as env:
                env.reset()
                ws = env.workspace
                venv_env = process.episode_environ(ws.venv, ws.home, ws.tmp)
                bare, ours = [], []
                for _ in range(runs):  # interleaved, so both see the same machine load
                    bare += timed(lambda: subprocess.run(env.task.eval_command, cwd=ws.root, env=venv_env,
                                                         capture_output=True), 1)
                    ours += timed(lambda: env.step({"name": "eval"}), 1)
                rows.append(row(f"eval step, sandbox={kind}", ours, "python -m pytest in the same venv", bare))
                resets = timed(env.reset, runs)
                rows.append(row(f"warm reset, sandbox={kind}", resets))

        venv = next(p for p in (cache / "venvs").iterdir() if p.is_dir())
        fresh_guard = lambda: treeguard.TreeGuard(venv).intact()  # noqa: E731 - a new guard walks the venv
        rows.append(row("venv check, first in a process (full fingerprint)", timed(fresh_guard, runs)))
        guard = treeguard.guard(venv)
        guard.intact()
        rows.append(row("venv check, every eval and reset (inotify)", timed(guard.intact, runs * 10)))

        work = Path(tempfile.mkdtemp(prefix="minidebug-bench-start-"))
        try:
            bare_start = timed(lambda: subprocess.run(["/bin/true"]), runs)
            for kind in sandboxes():
                confinement = Confinement(4096, 600, 1024, 256, kind, venv, ())
                try:
                    starts = timed(lambda: confinement.run(["/bin/true"], cwd=work, env={"PATH": "/usr/bin:/bin"},
                                                           timeout=30, writable=[work]), runs)
                finally:
                    confinement.close()
                rows.append(row(f"start /bin/true confined, sandbox={kind}", starts, "subprocess.run", bare_start))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print_table(rows)


if __name__ == "__main__":
    main()
