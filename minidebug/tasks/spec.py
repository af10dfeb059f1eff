"""The fields of task.toml, validated with pydantic: `TaskSpec`, with `[limits]` (`Limits`), `[source]` and
`[environment]`."""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import TaskError
from .command import eval_command
from .fields import PythonVersion
from .globs import GlobSet


class Limits(BaseModel):
    """Per-episode limits: task.toml's `[limits]` sets them for a task, and `make()`'s options of the same
    names override that. Each field's description is the one place its option is documented."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps: int = Field(
        50, gt=0,
        description="Tool calls an episode may take, bad ones included; the step that reaches it comes back "
                    "`truncated` (`info[\"truncated_by\"] == \"max_steps\"`). Default 50.")
    max_tokens: int = Field(
        100_000, gt=0,
        description="Tokens the episode may spend: every observation as shown (the first one too) and the "
                    "model tokens reported through `env.report_usage()`; the step that spends the last comes "
                    "back `truncated`. Default 100000.")
    observation_tokens: int = Field(
        4_000, gt=0,
        description="Tokens one observation may take; a longer one is cut in the middle, keeping whole lines "
                    "of its head and tail, with a marker saying how many tokens were left out. Default 4000.")
    eval_timeout: float = Field(
        60, gt=0,
        description="Seconds one test run may take (`eval`, `submit`, and measuring the task's counted tests), "
                    "and one `trace` or `inspect` run; a run past it is killed. Default 60.")
    pdb_timeout: float = Field(
        10, gt=0,
        description="Seconds one pdb command may run before the program is interrupted (SIGINT; it is killed "
                    "if the prompt does not come back); starting the program under pdb may take 30 s or this, "
                    "whichever is longer. Default 10.")
    command_timeout: float = Field(
        30, gt=0,
        description="Seconds a `bash` call or `env.exec()` command may run before its process group is "
                    "killed, and the most a `grep` regex search may take. Default 30.")
    memory_mb: int = Field(
        4096, gt=0,
        description="Address space (RLIMIT_AS) of each process the agent's actions start, in MB. Default 4096.")
    cpu_seconds: int = Field(
        600, gt=0,
        description="CPU time (RLIMIT_CPU) of each process the agent's actions start, in seconds: SIGXCPU "
                    "when it is reached, SIGKILL a second later. Default 600.")
    file_size_mb: int = Field(
        1024, gt=0,
        description="Largest file (RLIMIT_FSIZE) a process the agent's actions start may write, in MB. "
                    "Default 1024.")
    processes: int = Field(
        256, gt=0,
        description="Processes the agent's actions may run at once (RLIMIT_NPROC, which Linux counts per user "
                    "and does not apply to root; where a pids cgroup can be made, the episode's are capped "
                    "there too). Default 256.")


class Source(BaseModel):
    """`[source]`: the project comes from a git repository at a commit instead of repo/."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    git: str = Field(min_length=1)
    commit: str = Field(min_length=4)
    setup: list[str] = []
    test_patch: str | None = None


class Environment(BaseModel):
    """`[environment]` of a `[source]` task: a recipe (see minidebug.tasks.recipes) and fields that replace its own.

    `commit` is the commit whose checkout the recipe's commands install from (SWE-bench's
    environment_setup_commit); tasks with the same resolved recipe, repository and commit share one venv.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: str | None = None
    version: str | None = None
    commit: str | None = Field(None, min_length=4)
    python: PythonVersion | None = None
    packages: list[str] | None = None
    pre_install: list[str] | None = None
    install: list[str] | None = None


class TaskSpec(BaseModel):
    """The fields of task.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=1)
    eval: str = Field(min_length=1)
    entrypoint: str | None = None
    eval_mode: Literal["fork", "fresh"] | None = None  # "fresh": never fork eval from a warm interpreter
    requirements: list[str] = []
    readonly: list[str] = []
    hidden: list[str] = []
    agent_owned: list[str] = []
    binary: list[str] = []  # binary files the agent may change and eval uses; other binary files never reach it
    tests: list[str] = []
    python: PythonVersion | None = None
    tags: list[str] = []
    limits: Limits = Limits()
    source: Source | None = None
    environment: Environment | None = None
    fail_to_pass: list[str] = []
    pass_to_pass: list[str] = []

    @field_validator("eval", "entrypoint")
    @classmethod
    def _command(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"not a valid command line: {exc}") from None
        if not argv:
            raise ValueError("empty command")
        return value

    @field_validator("eval")
    @classmethod
    def _pytest(cls, value: str) -> str:
        try:
            eval_command(shlex.split(value))
        except TaskError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("readonly", "hidden", "agent_owned", "binary")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        GlobSet(value)  # raises ValueError naming the bad glob
        return value


def check_requirement(requirement: str, where: str) -> None:
    """Raises TaskError (naming `where`) unless `requirement` is a plain pip requirement (PEP 508)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(requirement)
    except InvalidRequirement as exc:
        raise TaskError(f"{where}: {requirement!r} is not a pip requirement ({exc}); options such as -r, -e or "
                        "--index-url are not supported") from None
