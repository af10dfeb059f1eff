"""Many episodes: process pool, resume, rerun-failed, Ctrl-C, SIGKILL + gc, and Ray."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from minidebug.run.batch import finished_results, plan, run_batch, select
from minidebug.run.cleanup import collect
from minidebug.sandbox.reaper import processes
from minidebug.tasks.task import load_task
from tests.conftest import CALC, CALC_PATCH, CALC_TOML, descendants, processes_left

BUNDLED = ["sum_tree", "late_handlers", "report_stats"]


def _outcome(results):
    return sorted((r.id, r.solved, r.steps, r.reward) for r in results)


def test_pool_runs_tasks_by_seeds_and_writes_everything(cache_dir, tmp_path):
    specs = plan([load_task(n) for n in BUNDLED], ["oracle"], range(2), make_options={"cache_dir": str(cache_dir)})
    results = run_batch(specs, tmp_path, jobs=2)
    assert _outcome(results) == sorted((f"{t}.oracle.s{s}", True, 2, 1.0) for t in BUNDLED for s in range(2))
    records = json.loads((tmp_path / "results.json").read_text())
    assert len(records) == 6 and all(r["solved"] for r in records)
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == sorted(f"{s.id}.jsonl" for s in specs)
    assert not processes_left()


def test_a_caller_running_threads_gets_the_same_results(cache_dir, tmp_path):
    # Forking a process that runs other threads is not safe: its workers are started fresh instead.
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        specs = plan([load_task(n) for n in BUNDLED[:2]], ["oracle"], [0], make_options={"cache_dir": str(cache_dir)})
        results = run_batch(specs, tmp_path, jobs=2)
    finally:
        stop.set()
        thread.join()
    assert _outcome(results) == sorted((f"{t}.oracle.s0", True, 2, 1.0) for t in BUNDLED[:2])
    assert not processes_left()


def test_resume_and_rerun_failed(cache_dir, tmp_path):
    specs = plan([load_task(n) for n in BUNDLED], ["oracle"], [0], make_options={"cache_dir": str(cache_dir)})
    run_batch(specs[:2], tmp_path, jobs=1)
    todo = select(specs, tmp_path, resume=True, rerun_failed=False)
    assert [s.id for s in todo] == [specs[2].id]
    run_batch(todo, tmp_path, jobs=1)
    assert len(finished_results(tmp_path)) == 3
    assert select(specs, tmp_path, resume=True, rerun_failed=False) == []
    path = tmp_path / f"{specs[1].id}.jsonl"  # pretend this episode failed
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    last["solved"] = False
    path.write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    assert [s.id for s in select(specs, tmp_path, resume=False, rerun_failed=True)] == [specs[1].id]


@pytest.fixture
def slow_task(task_dir):
    files = dict(CALC, **{"test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(120)\n"})
    counted = '["test_calc.py::test_add", "test_calc.py::test_mul", "test_slow.py::test_slow"]'
    return task_dir(files, CALC_TOML + f"tests = {counted}\n", CALC_PATCH, name="slow")


def _start_run(task, out, cache_dir, tmp, seeds=2, ignore_sigint=False):
    """`minidebug run` in a session of its own, started as a script's `cmd &` or nohup would (SIGINT ignored)
    where asked; returns once both workers' episodes are in their slow eval."""
    env = {**os.environ, "MINIDEBUG_CACHE": str(cache_dir), "TMPDIR": str(tmp)}
    cmd = [sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", str(task), "--seeds", str(seeds), "-j", "2",
           "--out", str(out)]
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=ignore)
    deadline = time.monotonic() + 120
    while len(list(tmp.glob("minidebug-ep-*"))) < 2:  # both episodes are in their eval
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    time.sleep(1.5)
    return proc, env


def _nothing_left(tmp, group):
    for prefix in ("minidebug-ep-", "minidebug-room-", "minidebug-dev-", "minidebug-proc-", "minidebug-trajectory-"):
        assert list(tmp.glob(prefix + "*")) == [], prefix
    assert not [p for p in descendants(1) if _cwd_in(p, tmp)]
    assert not [s for s in processes() if s.pgid == group and s.state != "Z"]


@pytest.mark.parametrize("signals", [("SIGINT",), ("SIGTERM",), ("SIGINT", "SIGINT")])
def test_a_run_ends_on_a_signal_even_with_sigint_ignored_and_says_how_to_go_on(signals, slow_task, cache_dir,
                                                                                tmp_path):
    """Started as scripts start it (its own session, SIGINT ignored): one SIGINT or SIGTERM closes the running
    episodes, a second SIGINT ends it at once; either way exit 130, no worker traceback, nothing left, and a
    line that says what was done and how to go on."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    proc, _ = _start_run(slow_task, out, cache_dir, tmp, ignore_sigint=True)
    for name in signals:
        os.killpg(proc.pid, getattr(signal, name))
        time.sleep(0.3)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        f"minidebug: interrupted: 0 of 2 episode(s) done, 2 not run; continue with: minidebug run --tasks "
        f"{slow_task} --seeds 2 -j 2 --out {out} --resume")
    _nothing_left(tmp, proc.pid)
    assert finished_results(out) == {}


def test_a_worker_that_dies_costs_its_episode_only(slow_task, cache_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc, _ = _start_run(slow_task, tmp_path / "out", cache_dir, tmp, seeds=3)
    workers = [s.pid for s in processes() if s.ppid == proc.pid and s.state != "Z"]
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not [s for s in processes() if s.ppid == proc.pid and s.state != "Z" and s.pid not in workers]:
        assert time.monotonic() < deadline and proc.poll() is None  # a new worker took the third episode
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert ": the worker running this episode died (signal 9)" in stdout, stderr
    assert "interrupted: 1 of 3 episode(s) done, 2 not run" in stderr
    collect(temp_dir=tmp, cache_dir=cache_dir)  # what the killed worker left (its eval died with it)
    _nothing_left(tmp, proc.pid)
    (recorded,) = finished_results(tmp_path / "out").values()  # results.json, reports and --rerun-failed see it
    assert not recorded.solved and "the worker running this episode died (signal 9)" in recorded.error


def test_resume_prints_the_table_of_the_whole_run(calc_task, cache_dir, tmp_path):
    specs = plan([load_task(calc_task)], ["oracle"], range(2))
    run_batch(specs[:1], tmp_path, jobs=1)
    env = {**os.environ, "MINIDEBUG_CACHE": str(cache_dir)}
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", str(calc_task), "--seeds",
                           "2", "-j", "1", "--out", str(tmp_path), "--resume"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(("calc", "total"))]
    assert [(row[0], row[1], row[2]) for row in rows] == [("calc", "2", "2"), ("total", "2", "2")]


def test_usage_errors_exit_2_with_one_line(calc_task, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"type": "header", "task": "sum_tree", "agent": "oracle"}) + "\n")
    for argv, says in [(["--seeds", "0"], "--seeds: 0 is below 1"), (["--seeds", "-1"], "--seeds: -1 is below 1"),
                       (["-j", "0"], "--jobs: 0 is below 1"),
                       (["--limit", "max_step=3"], "'max_step=3' is not NAME=VALUE with NAME one of max_steps,"),
                       (["--limit", "max_steps=2.5"], "max_steps: '2.5' is not a whole number above 0"),
                       (["--limit", "eval_timeout=-1"], "eval_timeout: '-1' is not a number above 0"),
                       (["--sandbox", "docker"], "--sandbox: invalid choice: 'docker'"),
                       (["--agent", "replay", "--trajectory", str(other), "--tasks", str(calc_task)],
                        "was recorded on task 'sum_tree', not on 'calc'")]:
        done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "run", *argv], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == "", argv
        assert len(done.stderr.splitlines()) == 1 and says in done.stderr, done.stderr


def test_sigkill_then_gc_then_resume(slow_task, cache_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    proc, env = _start_run(slow_task, out, cache_dir, tmp)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert len(list(tmp.glob("minidebug-ep-*"))) == 2  # left behind
    deadline = time.monotonic() + 10
    while [p for p in descendants(1) if _cwd_in(p, tmp)]:  # the evals die with their workers (PDEATHSIG)
        assert time.monotonic() < deadline, "an eval outlived the killed run"
        time.sleep(0.1)
    while [s for s in processes() if s.pgid == proc.pid]:  # SIGKILL is asynchronous: the workers (the
        assert time.monotonic() < deadline, "a worker outlived SIGKILL"  # episode dirs' owners) finish exiting
        time.sleep(0.1)
    removed = collect(temp_dir=tmp, cache_dir=cache_dir)
    assert len([r for r in removed if "minidebug-ep-" in r]) == 2 and list(tmp.glob("minidebug-ep-*")) == []
    assert list(tmp.glob("minidebug-room-*")) == []  # the episodes' eval rooms went with them
    assert list(tmp.glob("minidebug-dev-*")) == []  # and their sandboxes' device nodes
    time.sleep(0.2)
    assert not [p for p in descendants(1) if _cwd_in(p, tmp)]
    fast = Path(str(slow_task))
    (fast / "repo" / "test_slow.py").write_text("def test_fast():\n    pass\n")
    toml = (fast / "task.toml").read_text()
    (fast / "task.toml").write_text(toml.replace("test_slow.py::test_slow", "test_slow.py::test_fast"))
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", str(fast), "--seeds", "2",
                           "-j", "2", "--out", str(out), "--resume"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(finished_results(out)) == 2


def test_the_workers_of_a_run_killed_alone_close_their_episodes(slow_task, cache_dir, tmp_path):
    """SIGKILL to the run's own process only: its workers learn of it (SIGTERM from the kernel: their pipes'
    other ends live on in each other, so no EOF tells them) and close their episodes; nothing is left."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc, _ = _start_run(slow_task, tmp_path / "out", cache_dir, tmp)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 60
    while [s for s in processes() if s.pgid == proc.pid and s.state != "Z"]:
        assert time.monotonic() < deadline, "a worker outlived its run"
        time.sleep(0.2)
    _nothing_left(tmp, proc.pid)


def _cwd_in(pid, folder):
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd")).is_relative_to(folder)
    except OSError:
        return False


def test_ray_backend_gives_the_same_results_and_leaves_nothing(cache_dir, tmp_path):
    """A local Ray (`minidebug run --backend ray`, in a TMPDIR of its own): the pool's results, and no folder of
    its workers' warm interpreters left once Ray has stopped them."""
    pytest.importorskip("ray", reason="the [ray] extra is part of the test extra; install it")
    specs = plan([load_task(n) for n in BUNDLED[:2]], ["oracle"], [0], make_options={"cache_dir": str(cache_dir)})
    with_pool = run_batch(specs, tmp_path / "pool", jobs=2)
    tmp = Path(tempfile.mkdtemp(prefix="md-ray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    try:
        run = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", *BUNDLED[:2], "-j", "2",
                              "--backend", "ray", "--out", str(tmp_path / "ray")], capture_output=True, text=True,
                             env={**os.environ, "MINIDEBUG_CACHE": str(cache_dir), "TMPDIR": str(tmp)}, timeout=300)
        left = [p.name for p in tmp.iterdir() if p.name.startswith("minidebug-")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _outcome(finished_results(tmp_path / "ray").values()) == _outcome(with_pool)
    assert left == []


def test_run_takes_the_sandbox_and_limits(calc_task, cache_dir, tmp_path):
    env = {**os.environ, "MINIDEBUG_CACHE": str(cache_dir)}
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "run", "--tasks", str(calc_task), "-j", "1",
                           "--sandbox", "none", "--limit", "max_steps=1", "--limit", "eval_timeout=30",
                           "--out", str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # the oracle needs more than one step
    ((name, result),) = finished_results(tmp_path).items()
    assert (result.steps, result.solved) == (1, False)
    header = json.loads((tmp_path / f"{name}.jsonl").read_text().splitlines()[0])
    assert (header["limits"]["max_steps"], header["limits"]["eval_timeout"]) == (1, 30.0), header


def test_a_ray_client_address_without_the_client_is_a_usage_error(calc_task):
    without_grpc = ("import sys; sys.modules['grpc'] = None; from minidebug.run.cli import main; "
                    f"sys.exit(main(['run', '--tasks', {str(calc_task)!r}, '--backend', 'ray', "
                    "'--ray-address', 'ray://head:10001']))")
    done = subprocess.run([sys.executable, "-c", without_grpc], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.strip().splitlines() == [
        "minidebug: a ray:// address needs Ray's client: pip install 'minidebug[ray]' (or 'ray[client]')"], done.stderr


def test_a_report_whose_reader_has_gone_ends_quietly(calc_task, cache_dir, tmp_path):
    run_batch(plan([load_task(calc_task)], ["oracle"], range(1)), tmp_path, jobs=1)
    report = subprocess.Popen([sys.executable, "-m", "minidebug.run.cli", "report", "--text", str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    report.stdout.close()  # the reader is gone before the report is written (`| head -0`)
    stderr = report.communicate(timeout=60)[1]
    assert report.returncode == 1 and stderr == "", stderr
