"""The local backend of a batch: worker processes that run one episode at a time and always let the run end.

The parent hands each idle worker the next episode over a pipe and waits on the pipes and the workers' exit
sentinels together, so nothing it waits for can block it:
- a worker that dies (killed, out of memory) has its episode recorded as an error, and a new worker takes the
  next episode;
- KeyboardInterrupt in the parent (Ctrl-C, or SIGTERM as the CLI routes it) starts nothing new and sends SIGTERM
  to the busy workers, whose episodes unwind once and close their envs; SIGINT or SIGTERM once more, or a worker
  that takes longer than `CLOSE_GRACE` seconds, kills them at once, and what they left is removed as
  `minidebug gc` would.
Workers ignore SIGINT: a terminal's Ctrl-C reaches the whole process group, and the parent decides.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from ..sandbox.reaper import interrupt, owned_temp_dir, signal_when_parent_dies
from ..store.removal import remove_tree
from .episode import TRAJECTORY_PREFIX, EpisodeSpec

CLOSE_GRACE = 30.0  # seconds busy workers get to close their episodes after the first interrupt


@dataclass
class _Worker:
    process: Any
    conn: Connection
    spec: EpisodeSpec | None = None
    stopping: bool = False


def _serve(conn: Connection, parent: int) -> None:
    """A worker's loop: an episode in, its result out, until told to stop or the parent is gone (SIGTERM when it
    dies, even by SIGKILL: its pipe's end lives on in the other workers, so no EOF says so)."""
    signal.set_wakeup_fd(-1)  # a forked worker must not write the parent's wakeups
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stopping: list[int] = []

    def stop(signum, frame):
        if not stopping:  # once: unwind the episode so that `with make(...)` closes its env
            stopping.append(signum)
            interrupt()  # at once, or once the folder being made or removed is done

    signal.signal(signal.SIGTERM, stop)
    signal_when_parent_dies(signal.SIGTERM, parent)
    try:
        while not stopping:
            try:
                spec = conn.recv()
            except (EOFError, OSError):
                return  # the parent is gone
            if spec is None:
                return
            try:
                reply: tuple[Any, ...] = ("done", *run_spec(spec))
            except KeyboardInterrupt:
                reply = ("interrupted",)
            except Exception as exc:  # a task that does not load, a bug: the episode's error, not the worker's end
                reply = ("failed", f"{exc.__class__.__name__}: {exc}")
            conn.send(reply)
    except (KeyboardInterrupt, BrokenPipeError, EOFError, OSError):
        return  # stopped between episodes, or the parent is gone


def run_spec(spec: EpisodeSpec, warm_pool: Any = None) -> tuple[dict[str, Any], str]:
    """Run one episode (in a worker) and return its result and its trajectory's text. Episodes run one after
    another hand their warm eval interpreters on through `warm_pool` (default: the worker's, see
    `_worker_pool`)."""
    from ..tasks.task import load_task
    from .episode import run_episode

    scratch = owned_temp_dir(TRAJECTORY_PREFIX)  # a killed worker's folder is `minidebug gc`'s to remove
    try:
        result = run_episode(load_task(spec.task_path), spec.agent, scratch, spec.agent_options,
                             spec.seed, warm_pool=warm_pool or _worker_pool(), **spec.make_options)
        trajectory = scratch / f"{spec.id}.jsonl"
        text = trajectory.read_text(encoding="utf-8") if trajectory.exists() else ""
    finally:
        remove_tree(scratch)
    return result.model_dump(), text


_WORKER_POOL: list[Any] = []


def _worker_pool() -> Any:
    """This worker process's WarmPool, made at its first episode and closed when the process exits."""
    if not _WORKER_POOL:
        import atexit
        from multiprocessing import util

        from ..runner.pool import WarmPool

        pool = WarmPool(max_idle=2)
        util.Finalize(pool, pool.close, exitpriority=10)  # a pool worker's exit runs these, not atexit
        atexit.register(pool.close)
        _WORKER_POOL.append(pool)
    return _WORKER_POOL[0]


def _context() -> Any:
    """Fork from this process when it runs no other thread (after importing what an episode needs, once for
    every worker); otherwise start workers fresh."""
    if sys.platform == "linux" and threading.active_count() == 1:
        from . import worker_preload  # noqa: F401

        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


Outcome = tuple[dict[str, Any], str]  # an episode's result (as a dict) and its trajectory's text


class LocalWorkers:
    """`jobs` worker processes; `run(specs)` yields each episode's outcome as it ends, `stop()` ends them all.

    `failed(spec, reason)` makes the outcome of an episode whose worker failed or died.
    """

    def __init__(self, jobs: int, failed: Callable[[EpisodeSpec, str], Outcome]):
        self.jobs, self.failed = jobs, failed
        self.context = _context()
        self.workers: list[_Worker] = []

    def run(self, specs: list[EpisodeSpec]) -> Iterator[Outcome]:
        todo = list(reversed(specs))
        for _ in range(min(self.jobs, len(specs))):
            self._start()
        while todo or self._busy():
            for worker in self.workers:
                if worker.spec is None and todo:
                    worker.spec = todo.pop()
                    worker.conn.send(worker.spec)
            ready = wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers])
            for worker in list(self.workers):
                dead = worker.process.sentinel in ready
                if worker.conn in ready or dead:
                    outcome = self._finish(worker)
                    if outcome is not None:
                        yield outcome
                if dead:
                    self._forget(worker)
                    if todo:
                        self._start()

    def stop(self) -> list[Outcome]:
        """End every worker and return the outcomes that arrived meanwhile. Idle workers are told to end; busy
        ones get SIGTERM and CLOSE_GRACE seconds to close their episodes. SIGINT or SIGTERM meanwhile (a second
        Ctrl-C), or the grace running out, kills the rest at once, and what they left is removed as
        `minidebug gc` does. Idempotent."""
        for worker in self.workers:
            if worker.spec is None:
                _send(worker.conn, None)
            elif worker.process.is_alive():  # one that died before is recorded as an error below
                worker.stopping = True
                _signal(worker, signal.SIGTERM)
        killed = []

        def kill_all(*_: Any) -> None:
            for worker in list(self.workers):
                if worker.process.is_alive():
                    killed.append(worker)
                    _signal(worker, signal.SIGKILL)

        with _on_signals(kill_all):
            deadline = time.monotonic() + CLOSE_GRACE
            for worker in list(self.workers):
                worker.process.join(max(0.0, deadline - time.monotonic()))
            kill_all()
            outcomes = []
            for worker in list(self.workers):
                worker.process.join()
                outcome = self._finish(worker)
                if outcome is not None:
                    outcomes.append(outcome)
                self._forget(worker)
            if killed:
                from .cleanup import collect

                collect()  # their episode dirs, rooms and processes: their owners are dead now
        return outcomes

    def _busy(self) -> bool:
        return any(worker.spec is not None for worker in self.workers)

    def _start(self) -> None:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(child, os.getpid()), daemon=True,
                                       name="minidebug-worker")
        process.start()
        child.close()
        self.workers.append(_Worker(process, parent))

    def _forget(self, worker: _Worker) -> None:
        worker.conn.close()
        self.workers.remove(worker)

    def _finish(self, worker: _Worker) -> Outcome | None:
        """The outcome of the worker's episode from its reply or its end; None for no episode, or one closed
        by stop()."""
        spec, worker.spec = worker.spec, None
        try:
            reply = worker.conn.recv() if worker.conn.poll() else None
        except (EOFError, OSError):
            reply = None
        if spec is None or (reply is None and worker.stopping) or (reply and reply[0] == "interrupted"):
            return None
        if reply is None:
            worker.process.join(5)  # its sentinel is ready: it has ended, its status is to be collected
            code = worker.process.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            return self.failed(spec, f"the worker running this episode died ({how})")
        if reply[0] == "done":
            return reply[1], reply[2]
        return self.failed(spec, reply[1])


@contextmanager
def _on_signals(action: Callable[..., None]) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM call `action` instead of raising (in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.signal(signum, action) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _send(conn: Connection, message: Any) -> None:
    try:
        conn.send(message)
    except OSError:
        pass


def _signal(worker: _Worker, signum: int) -> None:
    try:
        os.kill(worker.process.pid, signum)
    except (ProcessLookupError, TypeError):
        pass
