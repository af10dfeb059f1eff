"""trace and inspect: cost of a traced run against the plain run, and one inspect against the pdb steps
that give the same facts (b, c, p x3, w), in wall time and observation tokens.

    cd benchmarks && python bench_probe.py [--runs 10] [--pause 0.5]

Each call is measured in both modes: warm (the default: once the tool was used, its next run is started
ahead) and fresh (`eval_mode="fresh"`: a new interpreter per call). Before each timed call the benchmark
waits `--pause` seconds, as an agent's turn would, so a run started ahead is ready.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_core import print_table, row, timed

import minidebug
from minidebug.sandbox import process

PROGRAM = """\
def step(x):
    return (x * 31 + 7) % 1000


def churn(n):
    acc = 0
    for i in range(n):
        acc = step(acc + i)
    return acc
"""
TEST = "from work import churn\n\n\ndef test_churn():\n    assert churn(10_000) >= 0\n"


def make_task(root: Path, python: str) -> Path:
    task = root / f"task-{python}"
    (task / "repo").mkdir(parents=True)
    (task / "repo" / "work.py").write_text(PROGRAM)
    (task / "repo" / "test_work.py").write_text(TEST)
    (task / "task.toml").write_text(
        f'description = "x"\neval = "python -m pytest -q"\npython = "{python}"\n[limits]\nmax_steps = 100000\n'
        "max_tokens = 1000000000\n")
    return task


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pause", type=float, default=0.5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        for python, tracer in (("3.12", "sys.monitoring"), ("3.11", "sys.settrace")):
            task = make_task(root, python)
            for mode in ("fork", "fresh"):
                with minidebug.make(task, cache_dir=root / "cache", eval_mode=mode) as env:
                    env.reset()
                    rows += _rows(env, python, tracer, mode, args.runs, args.pause)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(rows)


def _rows(env, python: str, tracer: str, mode: str, runs: int, pause: float) -> list[str]:
    ws = env.workspace
    venv_env = process.episode_environ(ws.venv, ws.home, ws.tmp)
    step = lambda a: env.step(a)[0]  # noqa: E731

    def paused(fn) -> list[float]:
        samples = []
        for _ in range(runs):
            time.sleep(pause)
            samples += timed(fn, 1)
        return samples

    trace = {"name": "trace", "arguments": {"target": "step", "max_calls": 20}}
    assert "10000 calls" in step(trace)  # the tool was used: in fork mode its next run is started ahead
    plain = paused(lambda: subprocess.run(env.task.entrypoint, cwd=ws.root, env=venv_env, capture_output=True))
    ahead = "started ahead" if mode == "fork" else "fresh"
    rows = [row(f"trace of a function called 10,000 times ({tracer}, Python {python}), {ahead}",
                paused(lambda: step(trace)), "plain python -m pytest", plain)]
    if python != "3.12":
        return rows
    inspect = {"name": "inspect", "arguments": {"at": "work.py:8", "expr": ["i", "acc", "n"]}}
    pdb_steps = ["b work.py:8", "c", "p i", "p acc", "p n", "w"]

    def by_pdb():
        env.step({"name": "pdb", "arguments": {"command": "q"}})  # the next session is started ahead (fork)
        env.tools["pdb"].breakpoints.clear()
        time.sleep(pause)
        start = time.perf_counter()
        texts = [step({"name": "pdb", "arguments": {"command": c}}) for c in pdb_steps]
        return texts, (time.perf_counter() - start) * 1000

    step(inspect)
    inspect_tokens = env.budget.count(step(inspect))
    pdb_tokens = sum(env.budget.count(text) for text in by_pdb()[0])
    rows.append(row(f"inspect at a line, 3 expressions (one call), {ahead}", paused(lambda: step(inspect)),
                    "pdb: b, c, p x3, w (six calls)", [by_pdb()[1] for _ in range(runs)]))
    if mode == "fork":
        rows.append(f"| observation tokens: inspect | {inspect_tokens} | | 1 | pdb steps | {pdb_tokens} | | "
                    f"{inspect_tokens / pdb_tokens:.2f}x |")
    return rows


if __name__ == "__main__":
    main()
