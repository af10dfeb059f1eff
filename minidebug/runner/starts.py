"""How an episode's programs start: one interface, `Starts`, over the two ways.

- `Forked`: in a room of the env's pool (see pool.py), on a copy of the worktree (see room_view.py), forked
  from the room's warm interpreter: pytest and the venv's modules are imported already, so a program starts
  in milliseconds.
- `Fresh`: a new interpreter in the worktree, confined as the episode's programs are (a probe may hand its
  run to a `StandbyProbe`, started before it was asked for).

`starts_for` gives the ways an episode's next program may start, in the order to try them: `Forked` first
where the episode can fork one (see room_view.can_fork), then `Fresh`, which always starts one. Tools ask
each in turn and never branch on how a process starts.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Protocol

from ..workspace.safefs import remove_entry
from .pdb_room import RoomPdbSession
from .pdb_session import PdbSession
from .pristine import EVAL_SCRATCH
from .probe_run import READ_SECONDS, RESULT_NAME, StandbyProbe, parse_result, probe_argv, read_result
from .room_view import RoomView, can_fork

if TYPE_CHECKING:
    from ..sandbox.confinement import Confinement
    from ..workspace.worktree import Workspace
    from .pool import EnvRooms

ProbeResult = tuple["dict | None", str]  # the probe driver's JSON (None if it wrote none) and the output


class Starts(Protocol):
    """A way to start an episode's pdb sessions and probe runs."""

    forks: bool  # whether it forks them from a warm interpreter (then nothing needs to wait on standby)

    def pdb_session(self, argv: list[str], timeout: float, preload: list[str] | None = None) -> PdbSession | None:
        """A pdb session of `python -m pdb ARGV` (`preload`: modules a fresh one imports first and then waits for
        its breakpoints); None where this way cannot start one now."""

    def probe(self, argv: list[str], config: dict, timeout: float,
              standby: StandbyProbe | None = None) -> ProbeResult | None:
        """One run of ARGV under the probe driver with `config`; None where this way cannot run it now."""


class Forked:
    """Programs forked in a room of the env's pool, on a copy of the worktree."""

    forks = True

    def __init__(self, rooms: EnvRooms, workspace: Workspace):
        self.rooms, self.workspace = rooms, workspace

    def pdb_session(self, argv: list[str], timeout: float, preload: list[str] | None = None) -> PdbSession | None:
        view = RoomView.borrow(self.rooms, self.workspace)
        if view is None:
            return None
        try:
            return RoomPdbSession(argv, view, timeout=timeout)
        except OSError:
            return None

    def probe(self, argv: list[str], config: dict, timeout: float,
              standby: StandbyProbe | None = None) -> ProbeResult | None:
        view = RoomView.borrow(self.rooms, self.workspace)
        if view is None:
            return None
        try:
            return _probe_in_room(view, argv, config, timeout)
        finally:
            view.give_back()


class Fresh:
    """Programs started anew in the worktree, confined as the episode's programs are."""

    forks = False

    def __init__(self, workspace: Workspace, confinement: Confinement):
        self.workspace, self.confinement = workspace, confinement

    def pdb_session(self, argv: list[str], timeout: float, preload: list[str] | None = None) -> PdbSession:
        workspace = self.workspace
        return PdbSession(argv, workspace.venv / "bin" / "python", workspace.root,
                          workspace.environ(workspace.drivers), self.confinement, preload)

    def probe(self, argv: list[str], config: dict, timeout: float,
              standby: StandbyProbe | None = None) -> ProbeResult:
        workspace = self.workspace
        out = workspace.tmp / RESULT_NAME
        where = f"{workspace.tmp.name}/{RESULT_NAME}"  # under workspace.dir, which the host made
        remove_entry(workspace.dir, where)  # whatever a program left there, never followed
        line = json.dumps({**config, "root": str(workspace.root), "out": str(out)})
        completed = standby.run(line, timeout) if standby is not None else None
        if completed is not None:
            output = "\n".join(filter(None, [completed.describe(timeout), self.confinement.note(completed)]))
        else:
            env = {**workspace.environ(workspace.drivers), "MINIDEBUG_PROBE": line}
            _, output = self.confinement.run(probe_argv(workspace, argv), cwd=workspace.root, env=env,
                                             timeout=timeout, writable=workspace.writable_dirs)
        try:
            return parse_result(read_result(workspace.dir, where, time.monotonic() + READ_SECONDS)), output
        finally:
            remove_entry(workspace.dir, where)


def starts_for(rooms: EnvRooms | None, workspace: Workspace, confinement: Confinement) -> list[Starts]:
    """The ways an episode's next program may start, in the order to try them (the last always starts it)."""
    fresh = Fresh(workspace, confinement)
    return [Forked(rooms, workspace), fresh] if rooms is not None and can_fork(rooms, workspace) else [fresh]


def _probe_in_room(view: RoomView, argv: list[str], config: dict, timeout: float) -> ProbeResult | None:
    """A probe run forked in a borrowed room; None where its warm interpreter cannot serve it."""
    where = f"{EVAL_SCRATCH}/tmp/{RESULT_NAME}"
    remove_entry(view.room.dir, where)  # whatever a program left there, never followed
    line = json.dumps({**json.loads(view.to_room(json.dumps(config))), "root": str(view.tree),
                       "out": str(view.room.dir / where)})
    completed = view.warm.run_program(view.program("probe", argv, MINIDEBUG_PROBE=line), timeout)
    if completed is None:
        return None
    output = view.to_worktree("\n".join(filter(None, [completed.describe(timeout),
                                                       view.room.confinement.note(completed)])))
    data = read_result(view.room.dir, where, time.monotonic() + READ_SECONDS)
    return parse_result(data, view.to_worktree), output
