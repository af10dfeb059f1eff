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

from .strategy_check import adapter_strategy

MAX_TEXT = 1_000_000


class UnicodeText(spaces.Text):
    """A Text space of any Unicode text from min_length to max_length characters: what a program prints, names
    and messages in any script, reaches the agent unchanged (gymnasium's Text takes a finite charset, and one
    covering Unicode would cost a table of a million entries). Samples are drawn from printable ASCII."""

    def __init__(self, max_length: int, min_length: int = 0, seed: Any = None):
        super().__init__(max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


class MinidebugGymEnv(gymnasium.Env):
    """A `gymnasium.Env` around a DebugEnv.

    Args:
        task: a task folder path or bundled task name.
        **make_options: passed to `minidebug.make` (limits, tools, strategy, ...).

    Raises:
        UsageError: an unknown strategy.
    """

    metadata = {"render_modes": []}

    def __init__(self, task: str, render_mode: str | None = None, **make_options: Any):
        from ..core.make import make

        adapter_strategy(make_options.get("strategy", "debug"), "the Gymnasium env")
        self.render_mode = render_mode
        self.observation_space = UnicodeText(MAX_TEXT)
        self.action_space = UnicodeText(MAX_TEXT)
        self.env = make(task, **make_options)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        observation, info = self.env.reset(seed=seed, options=options)
        return observation[:MAX_TEXT], info

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation[:MAX_TEXT], float(reward), terminated, truncated, info

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
