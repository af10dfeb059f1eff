"""minidebug tasks as a SkyRL-gym text environment (extra `[skyrl]`).

    import minidebug.integrations.skyrl               # registers env_class "minidebug"
    import skyrl_gym
    env = skyrl_gym.make("minidebug", env_config={}, extras={"task": "sum_tree"})
    prompt, metadata = env.init([{"role": "system", "content": minidebug.integrations.skyrl.SYSTEM_PROMPT}])
    output = env.step('<tool_call>{"name": "view", "arguments": {"path": "tree.py"}}</tool_call>')

Each env is one rollout with its own episode (worktree, processes). `extras` are the dataset row's: `task` (a
folder path or bundled name) and optionally `make` (keyword arguments of `minidebug.make`, e.g. a strategy or
limits); `env_config` may hold `make` defaults for every row. The model's text is read by
`ToolCall.parse_text`; the reward is 0 until the episode ends, then that of its final state: 1.0 if every
counted test passes, else 0.0 (`extras["reward"] = "fraction"` gives the fraction of counted tests instead).
`dataset_rows(tasks)` builds rows for SkyRL's dataset format.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from skyrl_gym.envs import register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from ..core.textcalls import FORMATS_HELP
from ..errors import UsageError
from .strategy_check import adapter_strategy
from .text_turns import TextTurns

if TYPE_CHECKING:
    from ..core.env import DebugEnv

ENV_CLASS = "minidebug"
SYSTEM_PROMPT = ("You are debugging a Python project. Find and fix the bug the user reports with the tools listed "
                 f"in the task; {FORMATS_HELP}. Several calls in one answer run in order. Call submit when "
                 "every test passes.")


class MinidebugTextEnv(BaseTextEnv):
    """One rollout on one minidebug task; `init` starts the episode, `step` plays one model answer.

    Raises:
        ValueError: a row without a task; UsageError (a ValueError) for an unknown strategy.
    """

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        if "task" not in extras:
            raise UsageError('a minidebug row needs extras["task"]: a task folder path or bundled task name')
        defaults = dict((env_config or {}).get("make", {}) or {})
        self.make_options = {**defaults, **dict(extras.get("make") or {})}
        adapter_strategy(self.make_options.get("strategy", "debug"), "the SkyRL adapter")
        self.task = extras["task"]
        self.reward_kind = extras.get("reward") or (env_config or {}).get("reward") or "solved"
        self.env: DebugEnv | None = None
        self.turns_played: TextTurns | None = None

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The prompt with the episode's first observation (problem statement and tools) appended."""
        from ..core.make import make

        self.close()
        self.env = make(self.task, **self.make_options)
        observation, info = self.env.reset(seed=0)
        self.max_turns = self.env.limits.max_steps
        self.turns_played = TextTurns(self.env, self.reward_kind)
        return [*prompt, {"role": "user", "content": observation}], {"task": info["task"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if self.turns_played is None:
            raise UsageError("call init() before step()")
        turn = self.turns_played.play(action)
        self.turns = self.turns_played.turns
        return BaseTextEnvStepOutput(observations=[{"role": "user", "content": turn.observation}],
                                     reward=turn.reward, done=turn.done, metadata=turn.info)

    def get_metrics(self) -> dict[str, Any]:
        played = self.turns_played
        return {"turns": played.turns if played else 0, "reward": played.reward if played else 0.0}

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


def dataset_rows(tasks: Iterable[str], make: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows of a SkyRL dataset, one per task: the system prompt, env_class "minidebug", and the task.

    Raises:
        UsageError: `make` names a strategy the adapter cannot run (as the env would, at the first rollout).
    """
    adapter_strategy(dict(make or {}).get("strategy", "debug"), "the SkyRL adapter")
    return [{"prompt": [{"role": "system", "content": SYSTEM_PROMPT}], "env_class": ENV_CLASS,
             "task": str(task), "make": dict(make or {})} for task in tasks]


def register_env() -> None:
    """Register env_class "minidebug" with skyrl_gym (done when this module is imported)."""
    from skyrl_gym.envs.registration import registry

    if ENV_CLASS not in registry:
        register(id=ENV_CLASS, entry_point="minidebug.integrations.skyrl:MinidebugTextEnv")


register_env()
