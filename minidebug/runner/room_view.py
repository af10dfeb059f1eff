"""Programs of the agent's tools forked in an eval room: pdb sessions (pdb_room.py) and trace/inspect runs.

In an env that runs warm, pdb and the probes do not start an interpreter of their own: they borrow an eval
room (see runner/room.py), copy the worktree as it stands into the room's tree, and have the room's warm
interpreter fork the program there (see drivers/minidebug_forked.py). pytest, its plugins and the venv's
modules the task's tests load are imported already, so the program starts in milliseconds, and its memory is
mostly pages it shares with the interpreter it was forked from: nothing waits per env for the next start.

The program sees what it would see in the worktree, at the room's path: paths in what it prints are mapped
back to the worktree's (and the episode's HOME and TMPDIR), and the worktree's in what the agent sends to the
room's. What it writes stays in the room and is gone when the room is given back, which then serves evals
again. It is confined as evals are: the room's sandbox, limits, cgroup and seccomp filter.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from ..sandbox.confinement import STRAY_VARIABLE
from .pristine import EVAL_SCRATCH, EVAL_TREE

if TYPE_CHECKING:
    from ..workspace.worktree import Workspace
    from .pool import EnvRooms
    from .room import Room
    from .warm import WarmInterpreter

COPY_TIMEOUT = 30.0  # seconds the worktree's copy may take


def can_fork(rooms: EnvRooms | None, workspace: Workspace) -> bool:
    """Whether an episode's programs can run in one of its `rooms` as they would in its worktree: it runs
    warm, and the agent installed no package of its own (its pip layer is the episode's, not in the room)."""
    if rooms is None or not rooms.serves_sessions:
        return False
    layer = workspace.pip_layer
    try:
        return not (layer.is_dir() and any(layer.iterdir()))
    except OSError:
        return False


def lay_worktree(root: Path, tree: Path) -> bool:
    """Copy the worktree's entries into `tree` (empty), links and modes as they are; `.git` only where it is
    a file (a git worktree's, naming its repository)."""
    try:
        entries = [str(root / name) for name in sorted(os.listdir(root))
                   if name != ".git" or stat.S_ISREG(os.lstat(root / name).st_mode)]
        if not entries:
            return True
        done = subprocess.run(["cp", "-a", "--", *entries, str(tree)], capture_output=True, timeout=COPY_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


class RoomView:
    """A room borrowed for one program of the episode's, the worktree laid in its tree (see the module's
    docstring); `give_back()` returns it."""

    def __init__(self, evals: EnvRooms, room: Room, warm: WarmInterpreter, workspace: Workspace):
        self.evals, self.room, self.warm = evals, room, warm
        self.tree, self.root = room.dir / EVAL_TREE, workspace.root
        self.scratch = room.dir / EVAL_SCRATCH
        home, tmp = self.scratch / "home", self.scratch / "tmp"
        self._moved = [(str(home), str(workspace.home)), (str(tmp), str(workspace.tmp)),
                       (str(self.tree), str(self.root))]
        self._given_back = False
        try:
            for folder in (home, tmp):
                folder.mkdir(parents=True, exist_ok=True)
            if not lay_worktree(workspace.root, self.tree):
                raise OSError("could not copy the worktree into the eval room")
            self.env = self._environ(workspace)
        except BaseException:
            self.give_back()
            raise

    @classmethod
    def borrow(cls, rooms: EnvRooms | None, workspace: Workspace) -> RoomView | None:
        """A room of an episode's `rooms` for a program of its worktree's, where it can fork one (see
        `can_fork`); else None."""
        if rooms is None or not can_fork(rooms, workspace):
            return None
        taken = rooms.take_for_session()
        if taken is None:
            return None
        try:
            return cls(rooms, *taken, workspace)
        except OSError:
            return None

    def _environ(self, workspace: Workspace) -> dict[str, str]:
        """The environment a program in the worktree has, its paths the room's; with the room's marker, by
        which what the program leaves is found (see `Confinement.kill_strays`)."""
        env = workspace.environ(workspace.drivers)
        for key, value in env.items():
            parts = value.split(":")
            for room, episode in self._moved:
                parts = [room + part[len(episode):] if part == episode or part.startswith(episode + "/") else part
                         for part in parts]
            env[key] = ":".join(parts)
        env[STRAY_VARIABLE] = self.room.confinement.token
        return env

    def program(self, name: str, argv: list[str], **env: str) -> dict:
        """What the warm interpreter forks (see drivers/minidebug_forked.py): driver `name` with `argv`."""
        path = self.env.get("PYTHONPATH", "")
        return {"program": name, "argv": argv, "env": {**self.env, **env},
                "sys_path": [str(self.tree)] + [folder for folder in path.split(":") if folder]}

    def to_room(self, text: str) -> str:
        return text.replace(str(self.root), str(self.tree))

    def to_worktree(self, text: str) -> str:
        for room, episode in self._moved:
            text = text.replace(room, episode)
        return text

    def give_back(self) -> None:
        """The room goes back to the pool, its tree and scratch folder emptied. Idempotent."""
        if not self._given_back:
            self._given_back = True
            self.evals.give_back_session(self.room, self.warm)
