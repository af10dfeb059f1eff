"""Leak checks: the process-level counts that must not grow over many episodes (used by tests and benchmarks)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from pathlib import Path

from ..sandbox.reaper import processes
from ..workspace.worktree import EPISODE_PREFIX


def _children() -> int:
    me = os.getpid()
    return sum(stat.ppid == me for stat in processes())


def _rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def snapshot(bare_repo: Path | None = None) -> dict[str, float]:
    """Open fds, threads, child processes, episode temp dirs, worktrees of bare_repo, and RSS in MB."""
    worktrees = 0
    if bare_repo is not None:
        listing = subprocess.run(["git", "--git-dir", str(bare_repo), "worktree", "list", "--porcelain"],
                                 capture_output=True, text=True).stdout
        worktrees = listing.count("worktree ") - 1
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
        "children": _children(),
        "temp_dirs": len(list(Path(tempfile.gettempdir()).glob(f"{EPISODE_PREFIX}*"))),
        "worktrees": worktrees,
        "rss_mb": round(_rss_mb(), 1),
    }
