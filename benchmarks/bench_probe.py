"""trace and inspect: cost of a traced run against the plain run, and one inspect against the pdb steps
that give the same facts (b, c, p x3, w), in wall time and observation tokens.

    cd benchmarks && python bench_probe.py [--runs 10]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import minidebug
from minidebug.sandbox import process

from bench_core import print_table, row, timed

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
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    try:
        for python, tracer in (("3.12", "sys.monitoring"), ("3.11", "sys.settrace")):
            with minidebug.make(make_task(root, python), cache_dir=root / "cache") as env:
                env.reset()
                ws = env.workspace
                venv_env = process.episode_environ(ws.venv, ws.home, ws.tmp)
                step = lambda a: env.step(a)[0]  # noqa: E731
                trace = {"name": "trace", "arguments": {"target": "step", "max_calls": 20}}
                assert "10000 calls" in step(trace)
                plain = timed(lambda: subprocess.run(env.task.entrypoint, cwd=ws.root, env=venv_env,
                                                     capture_output=True), args.runs)
                rows.append(row(f"trace of a function called 10,000 times ({tracer}, Python {python})",
                                timed(lambda: step(trace), args.runs), "plain python -m pytest", plain))
                if python != "3.12":
                    continue
                inspect = {"name": "inspect", "arguments": {"at": "work.py:8", "expr": ["i", "acc", "n"]}}
                pdb_steps = ["b work.py:8", "c", "p i", "p acc", "p n", "w"]

                def by_pdb():
                    env.tools["pdb"].close()
                    env.tools["pdb"].breakpoints.clear()
                    return [step({"name": "pdb", "arguments": {"command": c}}) for c in pdb_steps]

                inspect_tokens = env.budget.count(step(inspect))
                pdb_tokens = sum(env.budget.count(text) for text in by_pdb())
                rows.append(row("inspect at a line, 3 expressions (one call)", timed(lambda: step(inspect), args.runs),
                                "pdb: b, c, p x3, w (six calls)", timed(by_pdb, args.runs)))
                rows.append(f"| observation tokens: inspect | {inspect_tokens} | | 1 | pdb steps | {pdb_tokens} | | "
                            f"{inspect_tokens / pdb_tokens:.2f}x |")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(rows)


if __name__ == "__main__":
    main()
