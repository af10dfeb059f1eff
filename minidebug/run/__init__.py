"""Command lines and many episodes: the `minidebug` CLI, the episode runner that writes trajectories, the
batch runner (a process pool or Ray), `play` for a person at the keyboard, replay checking, exports (SFT
and SWE-bench predictions), cleanup after a crash (`minidebug gc`) and the soak helpers. It sits on top and
may import every other room.
"""
