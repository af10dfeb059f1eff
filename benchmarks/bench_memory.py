"""Memory of a live episode's processes, warm (the default) against fresh, in the same run.

    python benchmarks/bench_memory.py [--task sum_tree] [--envs 4]

For each mode, `--envs` episodes of the task are made in this process and each is reset and evaluated once;
then the proportional set size (PSS: shared pages split among their users) of this process and every process
the episodes started is summed in each of four states (at rest after an eval; with a pdb session stopped at
a breakpoint; at rest again once it ended; at rest after a trace and an inspect run) and divided by the
number of episodes. Prints a Markdown table in
MB per episode: all of it, and the episodes' own processes alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import minidebug


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def pss_mb(pids: set[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def measure(task: str, cache: Path, mode: str, count: int) -> list[tuple[float, float]]:
    """(host share, episode processes) in MB per episode, in each of STATES."""
    envs = [minidebug.make(task, cache_dir=cache, eval_mode=mode, pdb_timeout=30) for _ in range(count)]
    figures = []

    def take() -> None:
        time.sleep(2.0)  # warm interpreters and sessions started ahead finish importing
        figures.append((pss_mb({os.getpid()}) / count, pss_mb(descendants(os.getpid())) / count))

    try:
        for env in envs:
            env.reset()
            env.step({"name": "eval"})
        take()
        for env in envs:
            env.step({"name": "pdb", "arguments": {"command": "b tree.py:15"}})
            env.step({"name": "pdb", "arguments": {"command": "c"}})
        take()
        for env in envs:
            env.step({"name": "pdb", "arguments": {"command": "q"}})
        take()
        for env in envs:
            env.step({"name": "trace", "arguments": {"target": "sum_tree"}})
            env.step({"name": "inspect", "arguments": {"at": "tree.py:15", "expr": ["node.value"]}})
        take()
    finally:
        for env in envs:
            env.close()
    return figures


STATES = ("at rest after an eval, pdb never used", "with a pdb session at a breakpoint",
          "at rest after the pdb session ended", "at rest after a trace and an inspect")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="sum_tree")
    parser.add_argument("--envs", type=int, default=4)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="minidebug-bench-"))
    try:
        measure(args.task, cache, "fresh", 1)  # builds the venv and learns the task's facts
        figures = {mode: measure(args.task, cache, mode, args.envs) for mode in ("fresh", "fork")}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print("| episode state | fresh MB (its processes) | warm MB (its processes) | ratio |")
    print("|---|---|---|---|")
    for i, state in enumerate(STATES):
        (host_fresh, fresh), (host_warm, warm) = figures["fresh"][i], figures["fork"][i]
        ratio = (host_warm + warm) / (host_fresh + fresh)
        print(f"| {state} | {host_fresh + fresh:.1f} ({fresh:.1f}) | {host_warm + warm:.1f} ({warm:.1f}) "
              f"| {ratio:.2f}x |")

if __name__ == "__main__":
    main()
