"""How long `minidebug run` takes to stop: SIGINT once, twice, SIGTERM, with both workers' episodes in an eval.

    cd benchmarks && python bench_stop.py [--runs 10]

Each run is started as a script starts it (a session of its own, SIGINT ignored), on a task whose eval sleeps;
the time is from the signal to the run's exit (status 130, nothing left: checked). The baseline is the same
signal to a plain `python -m pytest` of the same tests in the same venv (which has no episode to close).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from bench_core import print_table, row

import minidebug

TASK = {
    "task.toml": 'description = "add() gives wrong sums"\neval = "python -m pytest -q"\nreadonly = ["test_*.py"]\n',
    "repo/calc.py": "def add(a, b):\n    return a - b\n",
    "repo/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "repo/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(120)\n",
    "solution.patch": "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
                      "+    return a + b\n",
}


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_once(task: Path, cache: Path, signals: tuple[int, ...]) -> float:
    """Start a run of two episodes on two workers, wait until both are in their eval, send `signals` to its
    process group 0.2 s apart; the seconds from the first signal to its exit."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-stop-", dir=cache))
    env = {**os.environ, "MINIDEBUG_CACHE": str(cache), "TMPDIR": str(tmp)}
    run = subprocess.Popen([sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", str(task), "--seeds", "2",
                            "-j", "2", "--out", str(tmp / "out")], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=_ignoring_sigint)
    while len(list(tmp.glob("minidebug-ep-*"))) < 2:
        time.sleep(0.05)
    time.sleep(0.5)  # both evals running
    start = time.perf_counter()
    for number, signum in enumerate(signals):
        if number:
            time.sleep(0.2)
        os.killpg(run.pid, signum)
    run.wait(timeout=120)
    elapsed = time.perf_counter() - start
    assert run.returncode == 130, run.returncode
    assert not [p for p in tmp.iterdir() if p.name.startswith("minidebug-")], list(tmp.iterdir())
    shutil.rmtree(tmp, ignore_errors=True)
    return elapsed * 1000


def bare_stop(task: Path, venv: Path, signum: int) -> float:
    """The same signal to a plain pytest of the task's tests, in its own session, inside the slow test."""
    work = Path(tempfile.mkdtemp(prefix="bench-stop-bare-"))
    shutil.copytree(task / "repo", work, dirs_exist_ok=True)
    run = subprocess.Popen([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=work,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(1.5)
    start = time.perf_counter()
    os.killpg(run.pid, signum)
    run.wait(timeout=120)
    elapsed = time.perf_counter() - start
    shutil.rmtree(work, ignore_errors=True)
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-stop-"))
    try:
        task = cache / "slow"
        for rel, text in TASK.items():
            (task / rel).parent.mkdir(parents=True, exist_ok=True)
            (task / rel).write_text(textwrap.dedent(text))
        with minidebug.make(task, cache_dir=cache) as env:  # the venv built, as a second run would find it
            env.reset()
            venv = env.workspace.venv
        rows = []
        for label, signals in (("SIGINT", (signal.SIGINT,)), ("SIGINT twice", (signal.SIGINT, signal.SIGINT)),
                               ("SIGTERM", (signal.SIGTERM,))):
            samples = [stop_once(task, cache, signals) for _ in range(args.runs)]
            bare = [bare_stop(task, venv, signals[0]) for _ in range(args.runs)]
            rows.append(row(f"stop `minidebug run -j 2` (2 evals running), {label}", samples,
                            f"{label} to plain python -m pytest", bare))
        print_table(rows)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
