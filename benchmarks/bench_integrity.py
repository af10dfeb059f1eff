"""What the integrity guarantees cost: eval in its own tree, the sandboxes, the venv check, the forgery watch.

    python benchmarks/bench_integrity.py [--runs 30] [--task sum_tree] [--pause 0.3] [--checks-only [--instructions]]

Prints a Markdown table (median and p95 in milliseconds), each figure beside its bare baseline measured in
the same run: plain `python -m pytest` in the same venv, a plain subprocess start. Evals and their baseline
runs alternate, each after `--pause` seconds (an agent's turn, in which the env prepares the next eval).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from bench_core import print_table, row, timed

import minidebug
from minidebug.sandbox import process
from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.sandbox.confinement import Confinement
from minidebug.store import treeguard

# pytest.main in the task's tree, with or without the eval driver's forgery watch (audit hook, state
# snapshot, after-run checks); everything else alike (the watch's module is imported in both, as eval
# imports it ahead of the run in its warm interpreter). A finding is printed, so a false one shows.
WATCHED_RUN = """\
import gc, os, sys, time
sys.path.insert(0, sys.argv[1])
import pytest
from minidebug_watch import Watch
ahead = None
if sys.argv[2] in ("ahead", "unchecked"):  # what a warm interpreter reads of the test modules before it forks
    import ast, glob
    from minidebug_precompiled import names_ahead
    from minidebug_identity import names_in
    sources = {os.path.realpath(path): open(path, "rb").read() for path in glob.glob("test_*.py")}
    ahead = names_ahead({path: ("rewrite", source, None, names_in(ast.parse(source)))
                         for path, source in sources.items()})
start, cpu = time.perf_counter(), time.process_time()  # the run itself, as a forked eval's (the rest is done ahead)
watch = Watch(lambda finding: print("finding:", finding), -1, os.getcwd(), [],
              names_ahead=ahead) if sys.argv[2] != "plain" else None
plugins = watch.plugins() if watch else []
if sys.argv[2] == "unchecked":  # the watch without its checks of each test's call (minidebug_calls)
    plugins = plugins[:1]
gc.freeze()  # as the eval driver does before the run
code = pytest.main(["-q", "-p", "no:cacheprovider"], plugins=plugins)
if watch:
    watch.finish()
print("run ms", (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000)
"""


# A test that calls project code 10,000 times: what the audit hook costs on ordinary code.
CALLS = {
    "calc.py": "def mean(values):\n    total = 0\n    for v in values:\n        total += v\n"
               "    return total / len(values)\n",
    "test_calc.py": "from calc import mean\n\n\ndef test_mean_many_times():\n    for i in range(10_000):\n"
                    "        assert mean([i, i + 1, i + 2]) == i + 1\n",
}


# A test module of 2,000 tests (half of them methods of a class): what the checks at each test's call cost.
def many(count: int) -> dict[str, str]:
    methods = count // 2
    return {"test_many.py": "".join(f"def test_{i}():\n    assert {i} + 1 > {i}\n\n\n" for i in range(count - methods))
            + ("class TestMany:\n" if methods else "") + "".join(f"    def test_{i}(self):\n        assert {i} >= 0\n\n"
                                                                  for i in range(methods))}


MANY = many(2000)


def watch_rows(env, runs: int, instructions: bool = False) -> list:
    """The forgery watch's cost: the same pytest.main with and without it, interleaved, on the task's tests
    and on a test that calls project code 10,000 times."""
    ws = env.workspace
    work = Path(tempfile.mkdtemp(prefix="minidebug-bench-watch-"))
    try:
        drivers = work / "drivers"  # the run's script among the drivers, whose files the watch trusts
        shutil.copytree(ws.drivers, drivers)
        script = drivers / "bench_run.py"
        script.write_text(WATCHED_RUN)
        task_tree, calls_tree, many_tree = work / "tree", work / "calls", work / "many"
        shutil.copytree(ws.prepared.eval_base, task_tree, symlinks=True)
        for tree, files in ((calls_tree, CALLS), (many_tree, MANY)):
            tree.mkdir()
            for name, text in files.items():
                (tree / name).write_text(text)
        venv_env = process.episode_environ(ws.venv, ws.home, ws.tmp)
        python = str(ws.venv / "bin" / "python")
        rows = []
        for label, tree in ((f"{env.task.name}'s tests", task_tree), ("a test calling project code 10,000 times",
                                                                      calls_tree)):
            plain, watched = [], []
            for _ in range(runs):
                plain += timed(lambda: subprocess.run([python, "-B", str(script), str(drivers), "plain"],
                                                      cwd=tree, env=venv_env, capture_output=True), 1)
                watched += timed(lambda: subprocess.run([python, "-B", str(script), str(drivers), "watch"],
                                                        cwd=tree, env=venv_env, capture_output=True), 1)
            rows.append(row(f"pytest run with the forgery watch, {label}", watched, "the same run without it",
                            plain))
        run = [python, "-B", str(script), str(drivers)]

        def run_ms(mode: str) -> tuple[float, float]:  # the run as the script times it: wall clock, CPU time
            output = subprocess.run(run + [mode], cwd=many_tree, env=venv_env, capture_output=True, text=True).stdout
            assert "finding:" not in output, output
            wall, cpu = output.rsplit("run ms", 1)[1].split()
            return float(wall), float(cpu)

        checked, ahead, unchecked = [], [], []
        for _ in range(runs):
            unchecked.append(run_ms("unchecked"))
            checked.append(run_ms("watch"))
            ahead.append(run_ms("ahead"))
        baseline = "the same run without the checks at each test's call"
        for clock, index in (("", 0), (", CPU time (the checks wait on nothing: a loaded machine's honest figure)", 1)):
            pick = lambda runs: [run[index] for run in runs]  # noqa: E731
            rows.append(row(f"the checks at each test's call, 2,000 tests, test module read ahead (a forked eval)"
                            f"{clock}", pick(ahead), baseline, pick(unchecked)))
            rows.append(row(f"the same, test module read in the run (a fresh eval){clock}", pick(checked), baseline,
                            pick(unchecked)))
        if instructions:  # the same runs counted by valgrind: the same figure on any machine, loaded or not
            counts = {}
            for tests in (1, 400):
                tree = work / f"counted-{tests}"
                tree.mkdir()
                (tree / "test_many.py").write_text(many(tests)["test_many.py"])
                for mode in ("unchecked", "ahead"):
                    output = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + run
                                            + [mode], cwd=tree, env=venv_env, capture_output=True, text=True).stderr
                    counts[tests, mode] = int(output.rsplit("Collected :", 1)[1].split()[0])
            checks = counts[400, "ahead"] - counts[400, "unchecked"]
            run_part = counts[400, "unchecked"] - counts[1, "unchecked"]
            print(f"instructions of the checks at each test's call, 400 tests: {checks / 400:,.0f} a test, "
                  f"{checks / run_part:.1%} of the run's (valgrind; the run without them: {run_part:,})")
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sandboxes() -> list[str | None]:
    return [None] + (["landlock"] if landlock_works() else []) + (["bwrap"] if bwrap_works() else [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--task", default="sum_tree")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds before each timed eval (an agent's turn)")
    parser.add_argument("--checks-only", action="store_true", help="only the forgery watch's rows")
    parser.add_argument("--instructions", action="store_true",
                        help="with --checks-only: also count the checks' instructions under valgrind (minutes)")
    args = parser.parse_args()
    runs = args.runs
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    rows = []
    warnings.simplefilter("ignore")
    try:
        with minidebug.make(args.task, cache_dir=cache) as env:
            env.reset()
            env.step({"name": "eval"})  # the counted tests are measured once, on the first eval
            if args.checks_only:
                print_table(watch_rows(env, runs, args.instructions))
                return
        modes = [(kind, "fork") for kind in sandboxes()] + [(None, "fresh")]
        for kind, mode in modes:
            with minidebug.make(args.task, cache_dir=cache, sandbox=kind, max_steps=10**6,
                                max_tokens=10**9, eval_mode=mode) as env:
                env.reset()
                env.step({"name": "eval"})
                ws = env.workspace
                venv_env = process.episode_environ(ws.venv, ws.home, ws.tmp)
                bare, ours = [], []
                for _ in range(runs):  # interleaved, so both see the same machine load
                    time.sleep(args.pause)  # what the env does after an eval (ahead of the next) is not pytest's
                    bare += timed(lambda: subprocess.run(env.task.eval_command, cwd=ws.root, env=venv_env,
                                                         capture_output=True), 1)
                    time.sleep(args.pause)
                    ours += timed(lambda: env.step({"name": "eval"}), 1)
                rows.append(row(f"eval step, sandbox={kind}, eval_mode={mode}", ours,
                                "python -m pytest in the same venv", bare))
                if mode == "fork" and kind is None:  # no pause between evals: the warm one is still importing
                    rows.append(row("eval step back to back, sandbox=None, eval_mode=fork",
                                    timed(lambda: env.step({"name": "eval"}), runs)))
                if mode == "fork":
                    rows.append(row(f"warm reset, sandbox={kind}", timed(env.reset, runs)))
                if kind is None and mode == "fork":
                    rows += watch_rows(env, runs)

        venv = next(p for p in (cache / "venvs").iterdir() if p.is_dir())
        fresh_guard = lambda: treeguard.TreeGuard(venv).intact()  # noqa: E731 - a new guard walks the venv
        rows.append(row("venv check, first in a process (full fingerprint)", timed(fresh_guard, runs)))
        guard = treeguard.guard(venv)
        guard.intact()
        rows.append(row("venv check, every eval and reset (inotify)", timed(guard.intact, runs * 10)))
        touched = next(venv.glob("lib/python*/site-packages/pluggy/__init__.py"))

        def after_touch(check):  # what a program may do to a venv it can only read (Landlock): set times to now
            os.utime(touched)
            assert check()

        rows.append(row("venv check after a touch (inotify: modes and sizes against the manifest)",
                        timed(lambda: after_touch(guard.intact), runs)))
        rows.append(row("venv check after a touch, first in a process (the touched file's content read)",
                        timed(lambda: after_touch(fresh_guard), runs)))
        rows.append(row("record a built venv (fingerprint and manifest, content hashed)",
                        timed(lambda: treeguard.record(venv), runs)))

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
