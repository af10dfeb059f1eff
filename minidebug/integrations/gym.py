"""A Gymnasium env (extra `[gym]`): text observations, JSON tool calls as text actions.

    import gymnasium as gym
    env = gym.make("minidebug/sum_tree")     # ids are registered for the bundled and smoke tasks
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step('{"name": "view", "arguments": {"path": "tree.py"}}')
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
from gymnasium import spaces

CHARSET = frozenset(string.printable)  # letters, digits, punctuation, space, \t \n \r \x0b \x0c
MAX_TEXT = 1_000_000


def printable(text: str) -> str:
    """The text with every character outside CHARSET shown as '?', cut to MAX_TEXT characters."""
    text = text[:MAX_TEXT]
    return text if CHARSET.issuperset(text) else "".join(c if c in CHARSET else "?" for c in text)


class MinidebugGymEnv(gymnasium.Env):
    """A `gymnasium.Env` around a DebugEnv.

    Args:
        task: a task folder path or bundled task name.
        **make_options: passed to `minidebug.make` (limits, tools, ...).
    """

    metadata = {"render_modes": []}

    def __init__(self, task: str, render_mode: str | None = None, **make_options: Any):
        from ..core.make import make

        self.render_mode = render_mode
        self.observation_space = spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=10_000, min_length=0, charset=CHARSET)
        self.env = make(task, **make_options)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        observation, info = self.env.reset(seed=seed, options=options)
        return printable(observation), info

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return printable(observation), float(reward), terminated, truncated, info

    def close(self) -> None:
        self.env.close()


def register_envs() -> None:
    """Register `minidebug/<task>` for every bundled and smoke task (gymnasium calls this on import)."""
    from minidebug.tasks.task import bundled_task_names, smoke_task_paths

    for name in bundled_task_names() + [p.name for p in smoke_task_paths()]:
        env_id = f"minidebug/{name}"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="minidebug.integrations.gym:MinidebugGymEnv",
                               kwargs={"task": name}, disable_env_checker=True)


register_envs()
