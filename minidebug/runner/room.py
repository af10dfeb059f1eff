"""Where evals run in fork mode: a room is a folder and a confinement of its own, with the warm interpreter of
the next eval (see warm.py) and the pristine tree laid ahead for it. The envs of one venv and settings share
rooms through a `WarmPool` (see pool.py).

A room is apart from any episode's folder and pids cgroup, so reset(), which ends every process of the
episode, leaves its warm interpreter alone: it ran no code of a project and nothing of a run reaches it (see
warm.py; the eval tree and the run's HOME and TMPDIR are emptied after each). Nor does a room belong to an
episode: every eval lays its tree anew, so an env borrows a room for one eval and gives it back, and the room
outlives the env.

A room's folder is a temp dir with an owner file, as an episode's (`ROOM_PREFIX` for `EPISODE_PREFIX`), so
`minidebug gc` removes it and the processes working in it after a crash; its pids cgroup is named after the
owning process too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.confinement import Confinement
from ..sandbox.reaper import owned_temp_dir
from ..store.removal import remove_tree
from ..workspace.safefs import remove_entry
from .pristine import EVAL_SCRATCH, EVAL_TREE, PristineCopy
from .warm import WarmInterpreter

ROOM_PREFIX = "minidebug-room-"


@dataclass(frozen=True)
class RoomKey:
    """What a room's confinement and warm interpreter depend on: rooms with equal keys are interchangeable."""

    venv: Path
    drivers: Path
    sandbox: str | None
    limits: tuple[int, int, int, int]  # memory MB, CPU seconds, file size MB, processes


class Room:
    """A folder (see `dir`) and a confinement for evals, with the warm interpreter of the next one and the
    pristine tree laid ahead for it."""

    def __init__(self, key: RoomKey):
        self.key = key
        self.dir = owned_temp_dir(ROOM_PREFIX)
        memory, cpu, file_size, processes = key.limits
        try:
            self._empty_size = os.lstat(self.dir).st_size  # a folder's size with (next to) nothing in it
            self.confinement = Confinement(memory, cpu, file_size, processes, key.sandbox, key.venv, (key.drivers,))
        except BaseException:
            remove_tree(self.dir)
            raise
        self.warm: WarmInterpreter | None = None
        self.entry: Path | None = None  # the task entry whose files its warm interpreter compiled ahead
        self.pristine: PristineCopy | None = None  # the next eval's pristine tree, being laid
        self._closed = False

    def take_warm(self) -> tuple[WarmInterpreter | None, PristineCopy | None]:
        """The warm interpreter and the pristine tree laid ahead, for one eval: the room has neither until
        `give_back` (or the pool starts or lays one)."""
        warm, self.warm = self.warm, None
        pristine, self.pristine = self.pristine, None
        return warm, pristine

    def give_back(self, warm: WarmInterpreter | None) -> None:
        """After an eval (forked from `warm`, or fresh where None): end what the run left in the room's
        cgroup or folder, sparing `warm` if it can serve the next run; then it is the room's again. Where the
        run grew the eval tree's or the scratch folder (on most file systems a folder never shrinks, so its
        size could pass a number on), both are made anew, and the interpreter that works in them ends."""
        grown = self._grown()
        keep = warm if warm is not None and warm.alive and self.warm is None and not grown else None
        self.confinement.kill_strays([self.dir], spare=keep.pid if keep is not None else None)
        if keep is not None:
            self.warm = keep
        elif warm is not None:
            warm.close()
        if grown:
            self.end_warm()
            for name in (EVAL_TREE, EVAL_SCRATCH):
                remove_entry(self.dir, name)

    def _grown(self) -> bool:
        try:
            return any(os.lstat(self.dir / name).st_size > self._empty_size for name in (EVAL_TREE, EVAL_SCRATCH))
        except OSError:
            return False

    def end_warm(self) -> None:
        """End the warm interpreter (the venv or the drivers changed under it), and anything of a run left in
        the room's cgroup or folder."""
        if self.pristine is not None:
            self.pristine.wait()
            self.pristine = None
        if self.warm is not None:
            self.warm.close()
            self.warm = None
        self.confinement.kill_strays([self.dir])

    @property
    def ready(self) -> bool:
        """Whether its warm interpreter is running (started, not used, not gone)."""
        return self.warm is not None and self.warm.alive

    def memory_kb(self) -> int:
        """The proportional set size of its warm interpreter's processes, in kB (0 where it has none)."""
        return self.warm.memory_kb() if self.warm is not None else 0

    def close(self) -> None:
        """End the warm interpreter and remove the folder and the cgroup. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.end_warm()
        self.confinement.close()
        remove_tree(self.dir)
