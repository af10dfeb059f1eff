"""Many episodes: tasks × agents × seeds on a process pool or on Ray, resumable, with a progress bar."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.trajectory import EpisodeOutcome, ResultRecord, read_result
from ..errors import UsageError
from ..tasks.task import Task
from .episode import EpisodeSpec
from .workers import LocalWorkers, run_spec


def plan(tasks: Iterable[Task], agents: Iterable[str], seeds: Iterable[int],
         agent_options: dict[str, dict[str, Any]] | None = None,
         make_options: dict[str, Any] | None = None, strategies: Iterable[str] = ("debug",)) -> list[EpisodeSpec]:
    """Every (task, agent, strategy, seed) combination, in a stable order.

    Raises:
        ValueError: an unknown strategy.
    """
    from ..tools.strategies import parse_strategy

    agent_options = agent_options or {}
    names = list(dict.fromkeys(parse_strategy(s).name for s in strategies))
    return [EpisodeSpec(str(task.root), task.name, agent, seed, dict(agent_options.get(agent, {})),
                        {**(make_options or {}), "strategy": strategy})
            for task in tasks for agent in agents for strategy in names for seed in seeds]


def finished_results(out_dir: Path) -> dict[str, ResultRecord]:
    """Results of the episodes whose trajectory in out_dir is complete, by episode id.

    Raises:
        TrajectoryError: a trajectory of a newer format, or with a malformed result line.
    """
    results = {}
    for path in sorted(Path(out_dir).glob("*.jsonl")):
        try:
            record = read_result(path)
        except OSError:
            continue
        if record is not None:
            results[path.stem] = record
    return results


def select(specs: list[EpisodeSpec], out_dir: Path | None, resume: bool, rerun_failed: bool) -> list[EpisodeSpec]:
    """Drop the episodes that `--resume` or `--rerun-failed` says to skip."""
    if out_dir is None or not (resume or rerun_failed):
        return specs
    done = finished_results(out_dir)
    if rerun_failed:
        return [s for s in specs if s.id in done and not done[s.id].solved]
    return [s for s in specs if s.id not in done]


def _ray(specs: list[EpisodeSpec], jobs: int, address: str | None) -> Iterator[tuple[dict[str, Any], str]]:
    try:
        import ray
    except ImportError:
        raise UsageError("the ray backend needs Ray: pip install 'minidebug[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else jobs, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(_run_on_ray)
    pending = [remote.remote(spec) for spec in specs]
    workers: set[int] = set()
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            data, trajectory, worker = ray.get(ready[0])
            workers.add(worker)
            yield data, trajectory
    except BaseException:
        for ref in pending:
            ray.cancel(ref)  # KeyboardInterrupt inside the task: its env is closed
        raise
    finally:
        if started_here:
            ray.shutdown()
            if address is None:
                _collect_after(workers)


def _run_on_ray(spec: EpisodeSpec) -> tuple[dict[str, Any], str, int]:
    """An episode in a Ray worker, and that worker's pid (see `_collect_after`)."""
    data, trajectory = run_spec(spec)
    return data, trajectory, os.getpid()


def _collect_after(workers: set[int], wait: float = 10.0) -> None:
    """Ray stops its local workers without running their exit handlers, so the warm interpreters' folders they
    kept for the next episode stay: once those workers are gone, remove what they left, as `minidebug gc`
    does (only folders whose maker is dead)."""
    from ..sandbox.reaper import processes
    from .cleanup import collect

    deadline = time.monotonic() + wait
    while {process.pid for process in processes() if process.alive} & workers and time.monotonic() < deadline:
        time.sleep(0.1)
    collect()


def run_batch(specs: list[EpisodeSpec], out_dir: Path | None = None, jobs: int | None = None,
              backend: str = "process", ray_address: str | None = None,
              on_result: Callable[[EpisodeOutcome], None] | None = None) -> list[EpisodeOutcome]:
    """Run the episodes and return their results in completion order.

    With out_dir, each trajectory is written there as its episode finishes, and results.json
    (all finished episodes of the folder, old and new) after every episode.

    Raises:
        ValueError: unknown backend.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    if backend not in ("process", "ray"):
        raise UsageError(f"unknown backend {backend!r}; choose 'process' or 'ray'")
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    if not specs:
        return []
    from ..runner.pool import WarmPool

    results: list[EpisodeOutcome] = []

    def record(data: dict[str, Any], trajectory: str) -> None:
        result = EpisodeOutcome.model_validate(data)
        results.append(result)
        if out_dir is not None:
            if trajectory:
                (Path(out_dir) / f"{result.id}.jsonl").write_text(trajectory, encoding="utf-8")
            write_results(Path(out_dir))
        if on_result:
            on_result(result)

    workers = LocalWorkers(min(jobs, len(specs)), _failed) if backend == "process" and jobs > 1 else None
    stream: Iterator[tuple[dict[str, Any], str]] | None = None
    with WarmPool(max_idle=2) as warm_pool:  # episodes run here, one after another, hand on their interpreters
        try:
            if backend == "ray":
                stream = _ray(specs, jobs, ray_address)
            elif workers is None:
                stream = (run_spec(spec, warm_pool) for spec in specs)
            else:
                stream = workers.run(specs)
            for data, trajectory in stream:
                record(data, trajectory)
        except KeyboardInterrupt:
            if stream is not None and hasattr(stream, "close"):
                stream.close()  # Ray's pending episodes cancelled
            for data, trajectory in workers.stop() if workers else []:
                record(data, trajectory)
            done = {result.id for result in results}
            raise RunInterrupted(results, [spec.id for spec in specs if spec.id not in done]) from None
        finally:
            if workers:
                workers.stop()
    return results


def _failed(spec: EpisodeSpec, reason: str) -> tuple[dict[str, Any], str]:
    """The result of an episode that ended without one (its worker died): an error, nothing solved, and a
    trajectory of its header and that result, so that results.json, reports and --rerun-failed count it."""
    from ..core.trajectory import HeaderRecord

    result = EpisodeOutcome(task=spec.task_name, agent=spec.agent, seed=spec.seed, error=reason,
                            strategy=spec.make_options.get("strategy", "debug"), model=spec.agent_options.get("model"))
    header = HeaderRecord(task=spec.task_name, task_path=spec.task_path, agent=spec.agent, strategy=result.strategy,
                          model=result.model, seed=spec.seed)
    record = ResultRecord(**result.model_dump())
    return result.model_dump(), header.to_json() + "\n" + record.to_json() + "\n"


class RunInterrupted(Exception):
    """A batch stopped by KeyboardInterrupt (Ctrl-C; SIGTERM in the CLI): every running episode was closed.

    `results` holds the episodes that finished, `not_run` the ids of the rest.
    """

    def __init__(self, results: list[EpisodeOutcome], not_run: list[str]):
        super().__init__(f"interrupted after {len(results)} episode(s); {len(not_run)} not run")
        self.results, self.not_run = results, not_run


def recorded_results(specs: list[EpisodeSpec], out_dir: Path) -> list[EpisodeOutcome]:
    """The results recorded in out_dir of the episodes in specs (a whole run, across --resume)."""
    done = finished_results(out_dir)
    return [done[spec.id].outcome() for spec in specs if spec.id in done]


def write_results(out_dir: Path) -> None:
    """Write out_dir/results.json: the result of every finished episode there, without its diff."""
    records = [r.model_dump(mode="json", exclude={"type", "diff"}) for r in finished_results(out_dir).values()]
    tmp = out_dir / "results.json.tmp"
    tmp.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out_dir / "results.json")


def summary(results: list[EpisodeOutcome]) -> str:
    """Per task (and per agent and strategy, when a run has several): episodes, solve rate, mean steps, tokens
    and seconds; then the total."""
    arms = {(r.agent, r.strategy) for r in results}
    by_task: dict[str, list[EpisodeOutcome]] = {}
    for result in results:
        task = result.task or "?"  # a result line may name no task (as in EpisodeOutcome.id)
        key = task if len(arms) < 2 else f"{task} [{result.agent} {result.strategy}]"
        by_task.setdefault(key, []).append(result)
    width = max([len(t) for t in by_task] + [5])
    header = f"{'task':<{width}}  episodes  solved  rate    steps   tokens  seconds"
    lines = [header, "-" * len(header)]

    def line(name: str, group: list[EpisodeOutcome]) -> str:
        solved = sum(r.solved for r in group)
        mean = lambda values: statistics.fmean(values) if values else 0.0  # noqa: E731
        return (f"{name:<{width}}  {len(group):>8}  {solved:>6}  {solved / len(group):>4.0%}  "
                f"{mean([r.steps for r in group]):>7.1f}  {mean([r.tokens for r in group]):>7.0f}  "
                f"{mean([r.seconds for r in group]):>7.2f}")

    for task in sorted(by_task):
        lines.append(line(task, by_task[task]))
        lines += [f"  {r.id}: {r.error}" for r in by_task[task] if r.error]
    if results:
        lines.append(line("total", results))
    return "\n".join(lines)


class Progress:
    """A rich progress bar on stderr (episodes done, solved, running, ETA); silent when stderr is no terminal."""

    def __init__(self, total: int, jobs: int):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress as Bar,
            TextColumn,
            TimeRemainingColumn,
        )

        self.total, self.jobs, self.done, self.solved = total, jobs, 0, 0
        self.bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("ETA"),
                       TimeRemainingColumn(), disable=not sys.stderr.isatty(), transient=False,
                       auto_refresh=False)  # no drawing thread: the batch's workers are forked from this process
        self.task = self.bar.add_task(self._text(), total=total)

    def _text(self) -> str:
        running = min(self.jobs, self.total - self.done)
        return f"solved {self.solved}, running {running}"

    def __enter__(self) -> Progress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.bar.__exit__(*exc_info)

    def advance(self, result: EpisodeOutcome) -> None:
        self.done += 1
        self.solved += result.solved
        self.bar.update(self.task, advance=1, description=self._text(), refresh=True)
