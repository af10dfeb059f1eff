"""`minidebug gc`: remove what a killed run left behind (episode temp dirs, eval rooms, the sandboxes'
device-node and counter folders, a batch worker's trajectory folder, their processes, worktree records)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..runner.room import ROOM_PREFIX
from ..sandbox import reaper
from ..sandbox.confinement import CGROUP_PREFIX, CGROUP_ROOTS, PidsCgroup
from ..sandbox.counters import PREFIX as COUNTERS_PREFIX
from ..sandbox.devices import PREFIX as DEVICES_PREFIX
from ..sandbox.reaper import OWNER_FILE
from ..store.removal import remove_tree
from ..store.venv import SETUP_PREFIX
from ..synth.validate import SCRATCH_PREFIX
from ..workspace.worktree import EPISODE_PREFIX
from .episode import TRAJECTORY_PREFIX


def episode_dir_made_here(path: Path) -> bool:
    """True only for a real folder (not a link) owned by this user that holds a regular owner file: what
    minidebug made. Nothing named like an episode dir is followed anywhere else."""
    try:
        info = os.lstat(path)
        owner = os.lstat(path / OWNER_FILE)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and stat.S_ISREG(owner.st_mode) and owner.st_uid == os.getuid())


def owner_alive(episode_dir: Path) -> bool:
    """True if the process that made this episode dir still runs (pid and start time both match)."""
    if not Path("/proc/self/stat").exists():
        return True  # no way to tell here: never remove
    try:
        pid, start = (episode_dir / OWNER_FILE).read_text().split()
    except (OSError, ValueError):
        return False
    return reaper.start_time(int(pid)) == start


def processes_inside(folder: Path) -> list[int]:
    """PIDs of processes whose working directory lies in folder."""
    return [stat.pid for stat in reaper.processes() if reaper.working_in(stat.pid, [folder])]


def orphaned_cgroups() -> list[Path]:
    """Episode pids cgroups whose owning process is gone."""
    found = []
    for root in CGROUP_ROOTS:
        for cgroup in sorted(root.glob(f"{CGROUP_PREFIX}*")) if root.is_dir() else []:
            owner = cgroup.name[len(CGROUP_PREFIX):].split("-")[0]
            if owner.isdigit() and reaper.start_time(int(owner)) is None:
                found.append(cgroup)
    return found


def collect(temp_dir: Path | None = None, cache_dir: Path | None = None, dry_run: bool = False) -> list[str]:
    """Remove orphaned episode dirs (killing processes still working in them) and prune worktree records.

    Returns a line per thing removed (or that would be, with dry_run).
    """
    from ..errors import WorkspaceError
    from ..store.cache import default_cache_dir
    from ..store.gitcmd import git

    temp_dir = Path(temp_dir or tempfile.gettempdir()).resolve()  # the caller's; what is below it is not
    done = []
    prefixes = (EPISODE_PREFIX, ROOM_PREFIX, DEVICES_PREFIX, COUNTERS_PREFIX, TRAJECTORY_PREFIX, SETUP_PREFIX,
                SCRATCH_PREFIX)
    for episode_dir in sorted(path for prefix in prefixes for path in temp_dir.glob(f"{prefix}*")):
        if not episode_dir_made_here(episode_dir) or owner_alive(episode_dir):
            continue
        pids = processes_inside(episode_dir)
        done.append(f"{episode_dir}" + (f" (killing {len(pids)} processes)" if pids else ""))
        if dry_run:
            continue
        reaper.send(pids)
        remove_tree(episode_dir)
    for cgroup in orphaned_cgroups():
        done.append(f"{cgroup} (pids cgroup)")
        if not dry_run:
            PidsCgroup.existing(cgroup).close()
    tasks = Path(cache_dir or default_cache_dir()) / "tasks"
    for bare in sorted(tasks.glob("*/repo.git")) if tasks.is_dir() else []:
        if not dry_run:
            try:
                git(bare, "worktree", "prune")
            except WorkspaceError:
                pass
    return done
