"""Where an env's evals run in fork mode: a folder and a confinement of their own, and the next eval's warm
interpreter (see warm.py).

The room is apart from the episode's folder and pids cgroup, so reset(), which ends every process of the
episode, leaves the warm interpreter alone: it ran no code of the project and nothing of a run reaches it
(see warm.py; the eval tree and the run's HOME and TMPDIR are emptied after each), so the first eval after
a reset is as fast as any other. A `WarmPool` goes further: it keeps the room of an env that closed,
with its warm interpreter ready, for the next env of the same venv and settings, whose first eval then skips
the interpreter start and the imports too (a batch of episodes, an RL trainer's workers). `ForkedEvals`
is an env's hold on its room: where it comes from, when its interpreter starts, where it goes at close.

A room's folder is a temp dir with an owner file, as an episode's (`ROOM_PREFIX` for `EPISODE_PREFIX`), so
`minidebug gc` removes it and the processes working in it after a crash; its pids cgroup is named after the
owning process too.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import MinidebugError
from ..sandbox.confinement import Confinement
from ..sandbox.reaper import write_owner
from ..store.treeguard import remove_tree
from ..tasks.task import Limits, Task
from ..workspace.safefs import remove_entry
from ..workspace.worktree import Workspace
from .counted import counted_known
from .evaluate import start_warm_eval
from .evaltree import EVAL_SCRATCH, EVAL_TREE
from .warm import THREAD_STARTED, WarmEval, learned_modules

ROOM_PREFIX = "minidebug-room-"


@dataclass(frozen=True)
class RoomKey:
    """What a room's confinement and warm interpreter depend on: rooms with equal keys are interchangeable."""

    venv: Path
    drivers: Path
    sandbox: str | None
    limits: tuple[int, int, int, int]  # memory MB, CPU seconds, file size MB, processes


class EvalRoom:
    """A folder (see `dir`) and a confinement for an env's evals, with the warm interpreter of the next one."""

    def __init__(self, key: RoomKey):
        self.key = key
        self.dir = Path(tempfile.mkdtemp(prefix=ROOM_PREFIX)).resolve()
        memory, cpu, file_size, processes = key.limits
        try:
            write_owner(self.dir)
            self._empty_size = os.lstat(self.dir).st_size  # a folder's size with (next to) nothing in it
            self.confinement = Confinement(memory, cpu, file_size, processes, key.sandbox, key.venv, (key.drivers,))
        except BaseException:
            remove_tree(self.dir)
            raise
        self.warm: WarmEval | None = None
        self._closed = False

    def take_warm(self) -> WarmEval | None:
        """The warm interpreter, for one eval: the room has none until `give_back` (or the env starts one)."""
        warm, self.warm = self.warm, None
        return warm

    def give_back(self, warm: WarmEval | None) -> None:
        """After an eval (forked from `warm`, or fresh where None): end what the run left in the room's
        cgroup or folder, sparing `warm` if it can serve the next run; then it is the room's again. Where the
        run grew the eval tree's or the scratch folder (on most file systems a folder never shrinks, so its
        size could pass a number on), both are made anew, and the interpreter that works in them ends."""
        grown = self._grown()
        keep = warm is not None and warm.alive and self.warm is None and not grown
        self.confinement.kill_strays([self.dir], spare=warm.pid if keep else None)
        if keep:
            self.warm = warm
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
        if self.warm is not None:
            self.warm.close()
            self.warm = None
        self.confinement.kill_strays([self.dir])

    @property
    def ready(self) -> bool:
        """Whether its warm interpreter is running (started, not used, not gone)."""
        return self.warm is not None and self.warm.alive

    def close(self) -> None:
        """End the warm interpreter and remove the folder and the cgroup. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.end_warm()
        self.confinement.close()
        remove_tree(self.dir)


class WarmPool:
    """Rooms (with their warm interpreters) of envs that closed, handed to the next env of the same venv and
    settings: pass it to `make(warm_pool=...)`. Holds at most `max_idle` rooms (the oldest go first); what it
    holds lives until `close()` or the end of a `with` block, and dies with the process.
    """

    def __init__(self, max_idle: int = 4):
        self.max_idle = max_idle
        self._idle: list[EvalRoom] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: RoomKey, learned: list[str]) -> EvalRoom | None:
        """An idle room of `key` whose warm interpreter is ready and imported the modules `learned`, or None."""
        with self._lock:
            for room in self._idle:
                if room.key == key and room.ready and room.warm.learned == list(learned):
                    self._idle.remove(room)
                    return room
        return None

    def keep(self, room: EvalRoom) -> None:
        """Keep a closing env's room if its warm interpreter is ready (else close it)."""
        dropped = [room]
        if room.ready:
            with self._lock:
                if not self._closed:
                    self._idle.append(room)
                    dropped = self._idle[:-self.max_idle] if len(self._idle) > self.max_idle else []
                    del self._idle[:len(dropped)]
        for old in dropped:
            old.close()

    def discard(self, venv: Path) -> None:
        """Close the idle rooms of a venv that was rebuilt: their warm interpreters imported the old one."""
        with self._lock:
            dropped = [room for room in self._idle if room.key.venv == venv]
            self._idle = [room for room in self._idle if room.key.venv != venv]
        for room in dropped:
            room.close()

    def close(self) -> None:
        """Close every room held. Idempotent."""
        with self._lock:
            self._closed = True
            dropped, self._idle = self._idle, []
        for room in dropped:
            room.close()

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class ForkedEvals:
    """An env's evals in fork mode: its room (see `EvalRoom`), taken from `pool` where one waits there and
    handed to it at close, and whether forking still holds for the env (`fork`: off for good once a venv's
    imports start a thread)."""

    def __init__(self, fork: bool, pool: WarmPool | None):
        self.fork, self.pool = fork, pool
        self.room: EvalRoom | None = None

    def start_warm(self, task: Task, workspace: Workspace, sandbox: str | None, limits: Limits,
                   measured: bool) -> None:
        """Make sure the next eval has a warm interpreter: from the pool, where a room of the same venv and
        settings waits there, else started in the background; an env without a pool starts one only once
        its first eval `measured` what it needs (that eval runs fresh), with a pool at once (its room goes
        to the pool at close, for the next env)."""
        if not self.fork:
            return
        prepared = workspace.prepared
        key = RoomKey(prepared.venv, prepared.drivers, sandbox,
                      (limits.memory_mb, limits.cpu_seconds, limits.file_size_mb, limits.processes))
        if self.room is not None and self.room.key != key:  # the venv was rebuilt elsewhere
            self.room.close()
            self.room = None
        pooled = self.pool is not None and counted_known(task, prepared)
        if self.room is None and pooled:
            self.room = self.pool.take(key, learned_modules(prepared.entry))
        if not measured and self.room is None and not pooled:
            return
        try:
            if self.room is None:
                self.room = EvalRoom(key)
            if self.room.warm is None:
                self.room.warm = start_warm_eval(workspace, self.room.confinement, self.room.dir)
        except (OSError, MinidebugError):  # the next eval runs fresh
            pass

    def take(self, stale: bool) -> tuple[WarmEval | None, EvalRoom | None]:
        """For one eval: the warm interpreter (None where there is none, or where `stale`: it may have imported
        what a program changed) and the room the eval runs in (None: the episode's own confinement)."""
        warm = self.room.take_warm() if self.room is not None else None
        if warm is not None and stale:
            warm.close()
            warm = None
        return warm, self.room

    def give_back(self, warm: WarmEval | None) -> None:
        """After the eval: the room's again (see `EvalRoom.give_back`)."""
        if warm is not None:
            self.fork = self.fork and warm.reason != THREAD_STARTED  # forking is not safe for this venv
        if self.room is not None:
            self.room.give_back(warm)
        elif warm is not None:
            warm.close()

    def end_warm(self, rebuilt_venv: Path | None = None) -> None:
        """End the warm interpreter (it may have imported what a program changed); with `rebuilt_venv`, the
        pool's rooms of that venv go too."""
        if self.room is not None:
            self.room.end_warm()
        if rebuilt_venv is not None and self.pool is not None:
            self.pool.discard(rebuilt_venv)

    def close(self, keep: bool) -> None:
        """The room goes to the pool (where `keep`: nothing was tampered with) or is closed. Idempotent."""
        room, self.room = self.room, None
        if room is None:
            return
        if self.pool is not None and keep:
            self.pool.keep(room)  # for the next env of the same venv and settings
        else:
            room.close()
