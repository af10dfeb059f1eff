"""A mini-swe-agent Environment on a minidebug task (extra `[mini-swe-agent]`).

    from minisweagent.agents.default import DefaultAgent
    from minidebug.integrations.mini_swe_agent import MinidebugEnvironment
    env = MinidebugEnvironment(task="sum_tree")
    agent = DefaultAgent(model, env, **config["agent"])          # mini-swe-agent's own loop, unchanged
    agent.run(env.problem_statement)
    env.reward, env.close()

Shell commands run in the task's worktree, inside its venv, confined like minidebug's bash tool. Their PATH
has `md`, the episode's tools from the shell (`md pdb 'b calc.py:2'`, `md eval`, `md help`: see
minidebug.integrations.shell_tools). The agent submits with `md submit`, or as mini-swe-agent's prompts
say (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` as the first line of output): either way the episode's
eval scores the final state and `Submitted` ends the agent's loop, carrying the diff as the submission.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from minisweagent.exceptions import Submitted

from .shell_tools import ToolBridge
from .strategy_check import adapter_strategy

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
SHELL_SYNTAX = re.compile(r"[;&|<>$`(){}*?\[\]~#!\n\\\"']|^\s*\w+=")
QUOTED = re.compile(r"'[^']*'|\"[^\"$`\\]*\"")  # quoted text the shell passes on as it is


class MinidebugEnvironment:
    """mini-swe-agent's Environment protocol (`execute`, `get_template_vars`, `serialize`) on an episode.

    Args:
        task: a task folder path or bundled task name.
        timeout: seconds for one command (default: the task's eval timeout plus its command timeout, so that
            `md eval` fits).
        **make_options: keyword arguments of `minidebug.make` (limits, strategy, sandbox, ...); an eval that
            passes every test does not end the episode here (the agent submits), unless
            `terminate_on_success=True` is given.

    Raises:
        UsageError: an unknown strategy.
    """

    def __init__(self, *, task: str, timeout: float | None = None, **make_options: Any):
        from ..core.make import make

        adapter_strategy(make_options.get("strategy", "debug"), "the mini-swe-agent environment")
        self.env = make(task, **{"terminate_on_success": False, **make_options})
        try:
            self.problem_statement, _ = self.env.reset(seed=0)
            self.bridge = ToolBridge(self.env)
        except BaseException:
            self.env.close()
            raise
        limits = self.env.limits
        self.timeout = timeout or limits.eval_timeout + limits.command_timeout
        self.task = task
        self.reward = 0.0
        self.result: dict[str, Any] = {}

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run `action["command"]`; raises `Submitted` once the agent has submitted."""
        command = action.get("command", "") if isinstance(action, dict) else str(action)
        if not command.strip():
            return {"output": "error: empty command", "returncode": 2, "exception_info": ""}
        words = _md_words(command)
        if words is not None and not cwd:  # a bare `md ...`: what the shell would do, without starting one
            ok, text = self.bridge.call(words)
            returncode, output = (0 if ok else 1), text + "\n"
        else:
            if cwd:
                command = f"cd {shlex.quote(cwd)} && {command}"
            returncode, output = self.bridge.run(command, float(timeout or self.timeout))
        result = {"output": output, "returncode": returncode, "exception_info": ""}
        if self.bridge.submitted is None and output.lstrip().startswith(SUBMIT_MARKER) and returncode == 0:
            self.bridge.call(["submit"])
        if self.bridge.submitted is not None:
            observation, reward, info = self.bridge.submitted
            self.reward = reward
            self.result = {"score": info["score"], "max_score": info["max_score"],
                           "solved": info["score"] == info["max_score"] > 0}
            diff = self.env.diff()
            raise Submitted({"role": "exit", "content": observation,
                             "extra": {"exit_status": "Submitted", "submission": diff, "reward": reward,
                                       **self.result}})
        return result

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """What mini-swe-agent's templates use (the machine's `uname` fields among them), plus `md_help`."""
        import platform

        assert self.env.workspace is not None, "reset() in __init__ started the episode's workspace"
        return {**platform.uname()._asdict(), "task": self.problem_statement, "cwd": str(self.env.workspace.root),
                "timeout": self.timeout, "md_help": self.bridge.help(), **kwargs}

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment": {"task": self.task, "timeout": self.timeout},
                                    "environment_type": f"{type(self).__module__}.{type(self).__name__}"},
                         "minidebug": {"reward": self.reward, **self.result}}}

    def close(self) -> None:
        """Stop the bridge and end the episode. Idempotent."""
        self.bridge.close()
        self.env.close()

    def __enter__(self) -> MinidebugEnvironment:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def _md_words(command: str) -> list[str] | None:
    """The arguments of a command that is one plain `md` invocation (no expansion, redirection or second
    command for a shell to act on), else None."""
    if SHELL_SYNTAX.search(QUOTED.sub("x", command)):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[1:] if words and words[0] == "md" else None
