"""The envs' use of eval rooms (see room.py): a `WarmPool` holds rooms, each with its warm interpreter,
for the envs of one venv and settings, and `EnvRooms` is one env's use of its pool: when a room is started,
taken, given back.

Rooms belong to the pool, not to an env: an env borrows one for each eval (or pdb session, or probe run) and
gives it back, so envs at rest hold no warm interpreter of their own, and the next env of the same venv (a
new episode, another task, a trainer's next rollout) finds one waiting: a cold start happens once per venv
and settings per process. The pool holds few idle rooms (capped by count and by memory, the least recently
used closed first) and closes them at `close()` or when the process exits.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import MinidebugError
from ..sandbox.confinement import Confinement
from ..tasks.spec import Limits
from ..workspace.safefs import empty_folder
from ..workspace.worktree import Workspace
from .pristine import EVAL_SCRATCH, EVAL_TREE, PristineCopy
from .room import Room, RoomKey
from .warm import THREAD_STARTED, WarmInterpreter, learned_modules, learned_yet


class WarmPool:
    """Eval rooms, each with its warm interpreter, shared by the envs of one venv and settings: an env borrows
    one for each eval and gives it back, so envs at rest hold none of their own.

    Every env in fork mode uses one: the process's shared pool (see `shared_pool`), or one passed to
    `make(warm_pool=...)` (to bound or end a group of envs' rooms apart). Rooms outlive the envs that used
    them, so the next env's first eval finds one waiting. Holds at most `max_idle` idle rooms, and only as
    many as fit in `max_idle_mb` of memory (their interpreters' proportional set size; the least recently
    used close first), and more while evals run at once; what it holds lives until `close()` or the end of a
    `with` block, and dies with the process. A closed pool holds nothing and starts nothing.
    """

    def __init__(self, max_idle: int = 4, max_idle_mb: float | None = None):
        self.max_idle = max_idle
        self.max_idle_mb = max_idle_mb
        self._sizes: dict[RoomKey, int] = {}  # kB: the largest a room of the key was measured at
        self._idle: list[Room] = []
        self._busy: set[Room] = set()
        self._short: set[RoomKey] = set()  # keys an eval found every room of busy
        self._lock = threading.Lock()
        self._closed = False

    @property
    def idle_rooms(self) -> tuple[Room, ...]:
        """The rooms waiting for an eval now, least recently used first (a copy: taking or keeping rooms
        changes the pool, not what was read)."""
        with self._lock:
            return tuple(self._idle)

    def take(self, key: RoomKey, learned: list[str], entry: Path | None = None) -> Room | None:
        """An idle room of `key` whose warm interpreter is ready and imported the modules `learned` (one that
        compiled ahead the files of the task entry `entry`, where one waits), or None."""
        with self._lock:
            room = self._next(key, learned, entry)
            if room is None:
                self._short.add(key)
            else:
                self._idle.remove(room)
                self._busy.add(room)
            return room

    def copy_pristine(self, key: RoomKey, learned: list[str], entry: Path, eval_base: Path) -> None:
        """Start laying the pristine tree `eval_base` in the room `take` would give next (see `PristineCopy`),
        unless one is laid or being laid there."""
        with self._lock:
            room = self._next(key, learned, entry)
            if room is not None and room.pristine is None:
                room.pristine = PristineCopy(room.dir, eval_base)

    def _next(self, key: RoomKey, learned: list[str], entry: Path | None) -> Room | None:
        found = [room for room in self._idle
                 if room.key == key and room.ready and room.warm is not None and room.warm.learned == list(learned)]
        return next((room for room in found if room.entry == entry), found[-1]) if found else None

    def provide(self, key: RoomKey, learned: list[str], entry: Path | None,
                start: Callable[[Room], WarmInterpreter | None]) -> None:
        """Make sure a room of `key` whose warm interpreter imports `learned` waits for the next eval (one
        more where an eval found them all busy): `start(room)` starts one in an idle room that has none (or
        whose interpreter imports what the task's tests loaded before they were learned), or in a new room."""
        with self._lock:
            if self._closed:
                return
            if self._next(key, learned, entry) is not None and key not in self._short:
                return
            if self.max_idle_mb is not None and self._sizes.get(key, 0) > self.max_idle_mb * 1024:
                return  # a room of the key would not fit: its evals run fresh
            self._short.discard(key)
            room = next((room for room in self._idle if room.key == key and not (  # an idle one to start in
                room.ready and room.warm is not None
                and (room.entry != entry or room.warm.learned == list(learned)))), None)
            if room is not None:
                self._idle.remove(room)
        try:
            if room is None:
                room = Room(key)
            else:
                room.end_warm()
            room.warm, room.entry = start(room), entry
        except (OSError, MinidebugError):  # the next eval runs fresh
            pass
        if room is not None:
            self.keep(room)

    def keep(self, room: Room, usable: bool = True, spare: bool = False) -> None:
        """Hold a room between evals (or close it: not `usable`, the pool closed, or, where it is a `spare`
        (it served a pdb session), another room of its key waits ready); then close the least recently used
        idle rooms beyond `max_idle` and `max_idle_mb`."""
        dropped = [room]
        with self._lock:
            self._busy.discard(room)
            spare = spare and any(other.key == room.key and other.ready for other in self._idle)
            if usable and not spare and not self._closed:
                self._idle.append(room)
                dropped = self._idle[:-self.max_idle] if len(self._idle) > self.max_idle else []
                del self._idle[:len(dropped)]
        for old in dropped:
            old.close()
        self.trim()

    def trim(self) -> None:
        """Close the least recently used idle rooms until the rest's interpreters fit in `max_idle_mb` (done
        when a room is given back and when an env closes). Where one room of a key does not fit at all, the
        pool starts none of it again."""
        if self.max_idle_mb is None:
            return
        with self._lock:
            rooms = list(self._idle)
        sizes = [room.memory_kb() for room in rooms]
        with self._lock:
            for room, size in zip(rooms, sizes):
                self._sizes[room.key] = max(size, self._sizes.get(room.key, 0))
        dropped = []
        while rooms and sum(sizes) > self.max_idle_mb * 1024:
            dropped.append(rooms.pop(0))
            sizes.pop(0)
        with self._lock:
            self._idle = [room for room in self._idle if room not in dropped]
        for room in dropped:
            room.close()

    def discard(self, venv: Path | None = None, drivers: Path | None = None) -> None:
        """Close the idle rooms of a venv (or drivers folder) a program changed: their warm interpreters
        imported it as it was."""
        with self._lock:
            dropped = [room for room in self._idle if room.key.venv == venv or room.key.drivers == drivers]
            self._idle = [room for room in self._idle if room not in dropped]
        for room in dropped:
            room.close()

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

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


_SHARED: list[WarmPool] = []  # the process's pool for envs made without one
_SHARED_LOCK = threading.Lock()


SHARED_MAX_IDLE_MB = 1024  # the shared pool's idle interpreters, at most (a few dozen MB each)


def shared_pool() -> WarmPool:
    """The process's pool for envs made without one: up to one idle room per core (at least two) within
    `SHARED_MAX_IDLE_MB`, closed at exit. `shared_pool().close()` ends its rooms now; the next env that needs
    one then gets a new pool."""
    with _SHARED_LOCK:
        if not _SHARED or _SHARED[0].closed:
            _SHARED[:] = [WarmPool(max_idle=max(2, os.cpu_count() or 1), max_idle_mb=SHARED_MAX_IDLE_MB)]
        return _SHARED[0]


def _close_shared() -> None:
    if _SHARED:
        _SHARED[0].close()


atexit.register(_close_shared)


def _forget_shared() -> None:
    """In a forked child: the parent's rooms and interpreters are not the child's to use or end."""
    global _SHARED_LOCK
    _SHARED.clear()
    _SHARED_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_shared)


@dataclass(frozen=True)
class EvalPlace:
    """Where one eval runs (see `EnvRooms.take`): a confinement and a folder for its tree (None: the
    episode's), with the warm interpreter to fork the run from and the pristine tree copied ahead, where there
    are."""

    confinement: Confinement
    folder: Path | None = None
    warm: WarmInterpreter | None = None
    pristine: PristineCopy | None = None


class EnvRooms:
    """An env's evals in fork mode: a room of its pool (see `WarmPool`) borrowed for each, and whether
    forking still holds for the env (`fork`: off for good once a venv's imports start a thread)."""

    def __init__(self, fork: bool, pool: WarmPool | None):
        self.fork = fork
        self._pool = pool
        self._key: RoomKey | None = None
        self._entry: Path | None = None
        self._room: Room | None = None  # the room of the eval running
        self._pristine: PristineCopy | None = None  # and its tree laid ahead
        self._start: Callable[[Room], WarmInterpreter | None] | None = None  # starts a room's warm interpreter
        self._eval_base: Path | None = None
        self._closed = False

    @property
    def pool(self) -> WarmPool:
        """The pool passed to the env, else the process's shared pool (a new one once that was closed)."""
        return self._pool if self._pool is not None else shared_pool()

    def start_warm(self, workspace: Workspace, sandbox: str | None, limits: Limits,
                   start: Callable[[Room], WarmInterpreter | None], known: bool) -> None:
        """Make sure the next eval finds a warm interpreter in the pool (`start(room)` starts one in the
        background where none waits there) and its pristine tree copied (see `PristineCopy`); none is
        started before what the task's tests need is `known` (its first eval on the machine runs fresh)."""
        prepared = workspace.prepared
        self._key = RoomKey(prepared.venv, prepared.drivers, sandbox,
                            (limits.memory_mb, limits.cpu_seconds, limits.file_size_mb, limits.processes))
        self._entry = prepared.entry
        self._start = start
        # the pristine tree to copy ahead of an eval; none where it holds what the agent must not see
        self._eval_base = prepared.eval_base if not prepared.hidden_files else None
        if self.fork and not self._closed and known:
            learned = learned_modules(prepared.entry)
            self.pool.provide(self._key, learned, prepared.entry, self._start)
            if self._eval_base is not None:
                self.pool.copy_pristine(self._key, learned, prepared.entry, self._eval_base)

    @property
    def ready(self) -> bool:
        """Whether a room with a ready warm interpreter waits in the pool for the env's next eval."""
        return self._key is not None and any(room.key == self._key and room.ready for room in self.pool.idle_rooms)

    def take(self, stale: bool, episodes: Confinement) -> EvalPlace:
        """Where one eval runs: a room of the pool, with its warm interpreter (none where `stale`: it may have
        imported what a program changed) and the pristine tree copied ahead; else, fresh, in the episode's own
        confinement (`episodes`) and folder. `give_back` after the eval either way."""
        if stale:
            self.end_warm()
        if not self.fork or self._key is None or self._closed:
            return EvalPlace(episodes)
        assert self._entry is not None, "set with the key (start_warm)"
        self._room = self.pool.take(self._key, learned_modules(self._entry), self._entry)
        if self._room is None:
            return EvalPlace(episodes)
        warm, self._pristine = self._room.take_warm()
        return EvalPlace(self._room.confinement, self._room.dir, warm, self._pristine)

    def give_back(self, warm: WarmInterpreter | None, keep: bool = True) -> None:
        """After the eval: end what the run left (see `Room.give_back`); the room goes back to the pool
        where `keep` (nothing was tampered with), else it closes."""
        if warm is not None:
            self.fork = self.fork and warm.reason != THREAD_STARTED  # forking is not safe for this venv
        room, self._room = self._room, None
        if self._pristine is not None:  # an eval that returned early: its copy ends before the folder is used again
            self._pristine.wait()
            self._pristine = None
        if room is None:
            if warm is not None:
                warm.close()
            return
        room.give_back(warm)
        self.pool.keep(room, usable=keep)

    @property
    def serves_sessions(self) -> bool:
        """Whether pdb sessions and trace/inspect runs fork in its rooms (see `take_for_session`)."""
        return self.fork and self._start is not None and not self._closed

    def take_for_session(self) -> tuple[Room, WarmInterpreter] | None:
        """A room and its warm interpreter for a pdb session or a probe's run (see runner/room_view.py), started
        now where none waits; None where the env does not run warm, or no interpreter can be started. The
        pool starts no other while the session runs (an eval then finds every room busy, runs fresh, and has
        one started). The room's eval tree is empty."""
        if not self.serves_sessions or self._key is None:
            return None
        assert self._entry is not None and self._start is not None, "set with the key (start_warm)"
        learned = learned_modules(self._entry)
        room = self.pool.take(self._key, learned, self._entry)
        if room is None:
            self.pool.provide(self._key, learned, self._entry, self._start)
            room = self.pool.take(self._key, learned, self._entry)
        if room is None:
            return None
        warm, pristine = room.take_warm()
        if pristine is not None:
            pristine.wait()
        empty_folder(room.dir, EVAL_TREE)
        if warm is None:
            self.pool.keep(room)
            return None
        return room, warm

    def give_back_session(self, room: Room, warm: WarmInterpreter) -> None:
        """After a pdb session or a probe's run: its tree and scratch folder emptied, what it left ended (see
        `Room.give_back`); the room is kept only where no other waits ready, a warm interpreter waits
        for the next eval (one is started where the session's ended), and its pristine tree is laid ahead."""
        empty_folder(room.dir, EVAL_TREE)
        empty_folder(room.dir, EVAL_SCRATCH)
        room.give_back(warm)
        self.pool.keep(room, spare=True)
        if self._key is None or self._closed:
            return
        assert self._entry is not None and self._start is not None, "set with the key (start_warm)"
        if not learned_yet(self._entry):
            return
        learned = learned_modules(self._entry)
        self.pool.provide(self._key, learned, self._entry, self._start)  # where it ended
        if self._eval_base is not None:
            self.pool.copy_pristine(self._key, learned, self._entry, self._eval_base)

    def end_warm(self, rebuilt_venv: Path | None = None) -> None:
        """A program changed what warm interpreters import (the venv, rebuilt: `rebuilt_venv`; or the
        drivers): the pool's idle rooms of the env's venv and drivers close."""
        if self._key is not None:
            self.pool.discard(self._key.venv, self._key.drivers)
        if rebuilt_venv is not None:
            self.pool.discard(rebuilt_venv)

    def close(self) -> None:
        """Stop using the pool (its rooms stay in it for the next env, within its caps). Idempotent."""
        if not self._closed:
            self._closed = True
            self.pool.trim()
