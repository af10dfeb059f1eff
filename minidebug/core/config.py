"""How an env behaves, apart from the task and its limits."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, field_validator

from ..tools import DEFAULT_TOOLS, TOOLS, unknown_tool_message
from ..tools.strategies import parse_strategy
from .budget import DEFAULT_ENCODING


class EnvConfig(BaseModel):
    """How an env behaves, apart from the task and its limits.

    Attributes:
        tools: names of the tools the agent may call.
        terminate_on_success: end the episode as soon as an eval passes every test.
        encoding: tiktoken encoding used to count tokens (must be available offline).
        cache_dir: where bare repos and venvs are cached (default: `$MINIDEBUG_CACHE` or the user cache dir).
        max_seconds: wall-clock budget of an episode (None: no limit).
        keep_breakpoints: keep pdb breakpoints across reset() (mapped back to the base files).
        sandbox: "auto" (bwrap, else Landlock, else none with a warning), "bwrap" or "landlock" (never
            without it), or None.
        strategy: "debug" (every tool), "rewrite" (no pdb, trace or inspect) or "debug-after-N" (those
            three unlocked after the N-th successful edit); see minidebug.core.strategies.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: tuple[str, ...] = DEFAULT_TOOLS
    terminate_on_success: bool = True
    encoding: str = DEFAULT_ENCODING
    cache_dir: Optional[Path] = None
    max_seconds: Optional[float] = None
    keep_breakpoints: bool = False
    sandbox: Optional[Literal["auto", "bwrap", "landlock"]] = "auto"
    strategy: str = "debug"

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, name: str) -> str:
        return parse_strategy(name).name

    @field_validator("tools")
    @classmethod
    def _known(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        for name in tools:
            if name not in TOOLS:
                raise ValueError(unknown_tool_message(name, TOOLS))
        return tools
