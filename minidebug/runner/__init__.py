"""The execution engine: how an episode's evals, pdb sessions and trace/inspect runs start fast. A warm
interpreter (`warm.py`) imports pytest, its plugins and the venv's modules ahead and forks each run; it waits
in a room (`room.py`: a folder and a confinement apart from any episode) with the task's pristine tree copied
ahead (`pristine.py`) and its files compiled ahead (`precompiled.py`); a `WarmPool` (`pool.py`) holds rooms
that envs of one venv borrow and give back, and `EnvRooms` is one env's use of its pool. pdb sessions and
probe runs fork in a borrowed room on a copy of the worktree (`room_view.py`, `pdb_room.py`; the pexpect
session itself in `pdb_session.py`). It builds on `workspace`, `store`, `tasks` and `sandbox`, and knows
nothing of scores, tools or agents; the host and the drivers share their messages through
`drivers/minidebug_protocol.py`.
"""
