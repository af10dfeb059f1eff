"""DebugEnv: one debugging episode with Gymnasium's vocabulary."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from ..errors import MinidebugError, TaskError, ToolError, UsageError, WorkspaceError
from ..runner.pool import EnvRooms, WarmPool
from ..runner.room import ROOM_PREFIX
from ..runner.starts import Starts, starts_for
from ..sandbox import choose as sandbox
from ..sandbox.confinement import Confinement
from ..scoring.counted import counted_known, counted_tests
from ..scoring.evaluate import EvalResult, evaluate, start_warm_eval
from ..store import cache, treeguard
from ..store.cache import PreparedTask
from ..store.venv import invalidate
from ..tasks.spec import Limits
from ..tasks.task import Task
from ..tools import unknown_tool_message
from ..tools.base import Episode, Tool
from ..tools.output import ToolOutput
from ..tools.strategies import parse_strategy
from ..tools.toolbox import Toolbox
from ..workspace.shell import ExecResult, run_command
from ..workspace.worktree import Workspace
from .budget import Budget
from .calls import ToolCall
from .config import EnvConfig

# Only minidebug's own noise is normalised: pytest's closing line's timing, and default reprs' addresses.
_ROOM = re.compile(r"/(?:[^\s/'\"]+/)*" + re.escape(ROOM_PREFIX) + r"[A-Za-z0-9_]+")
_PYTEST_TIMING = re.compile(r"^((?:=+ )?(?:no tests ran|\d+ [a-z]+(?:, \d+ [a-z]+)*))"
                            r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?((?: =+)?)$", re.M)
_ADDRESS = re.compile(r"(<[^<>\n]* at )0x[0-9a-fA-F]+>")


class DebugEnv:
    """A debugging episode on one task: reset, step, close.

    Build one with `minidebug.make(...)`. Each env has its own worktree, so many envs
    (of the same task or not) may run at once in threads or processes. One env's calls are
    serialised by a lock, so sharing an env between threads is safe (if rarely useful);
    `areset`/`astep`/`aclose` run the calls in a worker thread for asyncio callers.
    """

    def __init__(self, task: Task, limits: Limits, config: EnvConfig, warm_pool: WarmPool | None = None):
        self.task = task
        self.limits = limits
        self.config = config
        self.strategy = parse_strategy(config.strategy)
        self._toolbox = Toolbox(config.tools, self.strategy)
        self.tools: dict[str, Tool] = self._toolbox.tools
        self.workspace: Workspace | None = None
        self.confinement: Confinement | None = None
        fork = (config.eval_mode or task.spec.eval_mode or "fork") == "fork"
        self._evals = EnvRooms(fork, warm_pool)  # where evals run in fork mode, warm interpreter included
        self._standby = fork  # tools keep their next process on standby (pdb); stays on if forking turns off
        self.budget = Budget(limits.max_tokens, limits.observation_tokens, config.encoding)
        self._steps = 0
        self._started = 0.0
        self._done = False
        self._closed = False
        self._tampered = False
        self._last_fraction = 0.0  # of the episode's last eval, for reward="delta"
        self._scored: tuple[str, list] = ("", [])  # the worktree's text patch as the last eval read it, and its digest
        self._counted_ids: tuple[str, ...] | None = None
        self._lock = threading.RLock()

    # -- Gymnasium vocabulary --------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start (or restart) the episode with the worktree at the task's base commit.

        Args:
            seed: accepted for Gymnasium compatibility and changes nothing: an episode depends only on the
                task and the agent's actions (pytest's hash seed is fixed).
            options: must be None or empty (Gymnasium's wrappers pass `{}`); there are no reset options.

        Returns:
            The first observation (problem statement and tool list) and an info dict.

        Raises:
            WorkspaceError: the worktree or venv could not be made.
            TaskError: the task's files are inconsistent.
            UsageError: options were given.
        """
        if options:
            raise UsageError(f"reset() takes no options; got {sorted(options)}")
        with self._lock:
            return self._reset(seed)

    def _reset(self, seed: int | None) -> tuple[str, dict[str, Any]]:
        if self._closed:
            raise MinidebugError("this env is closed; make a new one")
        self._tampered = False
        if self.workspace is not None and not cache.bare_repo_intact(self.workspace.prepared):
            assert self.confinement is not None, "a started episode has its confinement"
            self._tampered = True  # start over from a rebuilt entry
            for tool in self.tools.values():
                tool.reset(self._episode, False)
            self._evals.end_warm()  # it may have imported what a program had changed
            self.confinement.kill_strays([self.workspace.dir])
            cache.invalidate_entry(self.workspace.prepared)
            self.workspace.close()
            self.confinement.close()
            self.workspace = self.confinement = None
        fresh = self.workspace is None
        if fresh:
            self._start()
        else:
            assert self.workspace is not None and self.confinement is not None, "a started episode has both"
            self._check_venv()
            self._tampered |= cache.restore_drivers(self.workspace.drivers)
        for tool in self.tools.values():  # before the files go back: pdb maps breakpoints to the base
            tool.reset(self._episode, self.config.keep_breakpoints)
        self._toolbox.restore()
        if not fresh:
            assert self.workspace is not None and self.confinement is not None, "a started episode has both"
            if self._tampered:
                self._evals.end_warm()  # it may have imported what a program had changed
            self.confinement.kill_strays([self.workspace.dir])  # the room's warm interpreter is not the episode's
            self.workspace.reset()
        self._start_warm()
        if self._standby:
            for tool in self.tools.values():
                tool.warm_up(self._episode)
        self.budget = Budget(self.limits.max_tokens, self.limits.observation_tokens, self.config.encoding)
        self._last_fraction, self._scored = 0.0, ("", [])
        self._steps = 0
        self._done = False
        self._started = time.monotonic()
        observation = self._introduction()
        self.budget.charge(self.budget.count(observation))
        return observation, self._info()

    def step(self, action: ToolCall | dict | str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run one tool call.

        Args:
            action: a ToolCall, a dict like {"name": ..., "arguments": {...}}, or that dict as JSON.

        Returns:
            (observation, reward, terminated, truncated, info). A bad call gives an observation
            starting with "error:" and sets info["error"]; the episode goes on. The reward is 0 unless the
            step ran eval (`eval`, `submit`): then, with `reward="fraction"` (the default), the fraction of the
            counted tests that passed (`info["score"]` / `info["max_score"]`), so an episode's sum counts
            repeated evals; with `reward="delta"`, that fraction less the previous eval's, so an episode's
            rewards sum to its last eval's fraction. `strict=True` scores an eval with a finding 0.

        Raises:
            MinidebugError: step() before reset() or after close().
        """
        with self._lock:
            return self._step(action)

    def _step(self, action: ToolCall | dict | str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.workspace is None or self._closed:
            raise MinidebugError("call reset() before step()" if not self._closed else "this env is closed")
        self._tampered = False
        if self._done:
            message = "error: the episode is over; call reset() to start again"
            return message, 0.0, True, False, self._info(error=message)
        self._steps += 1
        extra: dict[str, Any] = {}
        reward, terminated = 0.0, False
        try:
            call = ToolCall.parse(action)
            extra["tool"] = call.name
            tool = self.tools.get(call.name)
            if tool is None:
                raise ToolError(unknown_tool_message(call.name, self.tools))
            output = tool.run(self._episode, tool.parse(call.arguments))
        except ToolError as exc:
            output = ToolOutput(f"error: {exc}")
            extra["error"] = _utf8(str(exc))
        except (OSError, UnicodeError) as exc:
            output = ToolOutput(f"error: {exc.__class__.__name__}: {exc}")
            extra["error"] = _utf8(str(exc))
        except WorkspaceError as exc:  # the worktree as a program of the episode left it (reset() rebuilds it)
            output = ToolOutput(f"error: {exc}")
            extra["error"] = _utf8(str(exc))
        if isinstance(output, str):
            output = ToolOutput(output)
        if extra.get("tool") == "edit" and "error" not in extra:
            self._toolbox.edit_succeeded()
        if output.score is not None:
            fraction = output.score / output.max_score if output.max_score else 0.0
            reward = fraction - self._last_fraction if self.config.reward == "delta" else fraction
            self._last_fraction = fraction
            extra.update(score=output.score, max_score=output.max_score)
            if output.suspicious:
                extra["suspicious"] = list(output.suspicious)
            terminated = output.submitted or (
                self.config.terminate_on_success and bool(output.max_score) and output.score == output.max_score
            )
        text = self._normalize(output.text)
        enabled, note = self._toolbox.take_news()
        if enabled:
            extra["tools_enabled"] = enabled
            text += "\n\n" + note
        observation, tokens = self.budget.fit(text)
        self.budget.charge(tokens)
        truncated = not terminated and self._out_of_budget(extra)
        self._done = terminated or truncated
        if self._done:  # what the episode leaves is final: no program of it runs on
            self.end_programs()
            if output.score is not None:
                self._leave_what_was_scored()
        return observation, reward, terminated, truncated, self._info(**extra)

    def end_programs(self) -> None:
        """Stop every program of the episode (pdb and probe sessions, and whatever any program started), so
        that none changes the worktree any more: `submit` does before its eval reads the worktree, and the env
        when a step ends the episode. The tools start anew when next used."""
        for tool in self.tools.values():
            tool.close()
        if self.workspace is not None and self.confinement is not None:
            self.confinement.kill_strays([self.workspace.dir])

    def _leave_what_was_scored(self) -> None:
        """After the episode's last eval, its programs stopped: the worktree holds the text patch that eval read
        (a program may have written it since, or put back what it had changed), so env.diff() shows what was
        scored."""
        assert self.workspace is not None
        digest, changes = self._scored
        self.workspace.text_changes()
        if digest and self.workspace.last_read != digest:
            self.workspace.put_back(changes)

    def close(self) -> None:
        """Stop every process of the episode and remove its worktree and temp dir. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for tool in self.tools.values():
                tool.close()
            self._evals.close()
            if self.confinement is not None:
                if self.workspace is not None:
                    self.confinement.kill_strays([self.workspace.dir])
                self.confinement.close()  # whatever escaped its process group
            if self.workspace is not None:
                self.workspace.close()

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """`reset` for asyncio callers: runs in a worker thread."""
        return await asyncio.to_thread(self.reset, seed=seed, options=options)

    async def astep(self, action: ToolCall | dict | str):
        """`step` for asyncio callers: runs in a worker thread."""
        return await asyncio.to_thread(self.step, action)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self) -> DebugEnv:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- for agents and callers --------------------------------------------------------------
    def tool_schemas(self, provider: str = "openai") -> list[dict[str, Any]]:
        """JSON schemas of the enabled tools for function calling ("openai" or "anthropic")."""
        from ..tools.schemas import tool_schemas

        return tool_schemas(list(self.tools.values()), provider)

    def enable_tools(self, names: Sequence[str]) -> list[str]:
        """Make more tools available from the next step on, until the next reset().

        The next observation ends with a note naming the new tools and what they do, and
        `tool_schemas()` includes them from now on (`info["tools_enabled"]` lists them on that step).

        Args:
            names: registered tool names; those already enabled are ignored.

        Returns:
            The names that were newly enabled.

        Raises:
            ValueError: an unknown tool name (the closest is suggested).
        """
        with self._lock:
            return self._toolbox.enable(list(names))

    def report_usage(self, tokens: int) -> None:
        """Charge a model answer's completion tokens to the budget (its prompt repeats charged observations)."""
        self.budget.charge(tokens)

    def diff(self) -> str:
        """The agent's changes so far, as a unified diff against the task's base."""
        if self.workspace is None:
            return ""
        return self._normalize(self.workspace.diff())

    def exec(self, command: str | Sequence[str], timeout: float | None = None, *, cwd: str = ".",
             env: Mapping[str, str] | None = None, stdin: bytes | None = None,
             writable: Sequence[Path] = ()) -> ExecResult:
        """Run a shell command in the worktree, inside the venv, confined like every program of the episode.

        The one way to run a command on the agent's behalf (the bash tool and the framework adapters use it).
        It is not a step: it counts toward no budget.

        Args:
            command: a string run by `bash -c`, or an argv.
            timeout: seconds before the command's process group is killed (default: the `command_timeout`
                limit).
            cwd: a folder of the worktree, relative to its root.
            env: more environment variables; a PATH there goes before the episode's own.
            stdin: bytes fed to the command's standard input.
            writable: more folders inside the episode's temp dir that the command may write.

        Returns:
            The exit status, the merged output (with a line naming a timeout or resource limit) and
            whether the deadline killed it.

        Raises:
            MinidebugError: exec() before reset() or after close().
            ToolError: `cwd` is outside the worktree.
        """
        with self._lock:  # not held while the command runs: it may call the env's tools (an `md` shim)
            if self.workspace is None or self.confinement is None or self._closed:
                raise MinidebugError("call reset() before exec()" if not self._closed else "this env is closed")
            workspace, confinement = self.workspace, self.confinement
        limit = self.limits.command_timeout if timeout is None else timeout
        return run_command(workspace, confinement, command, limit, cwd=cwd, env=env, stdin=stdin, writable=writable)

    # -- what tools may use (the tools.base.Episode protocol) ------------------------------
    @property
    def rooms(self) -> EnvRooms | None:
        """The env's use of its pool of eval rooms, in fork mode (pdb sessions and trace/inspect runs borrow
        them too); None where it runs fresh."""
        return self._evals if self._evals.fork else None

    def starts(self) -> list[Starts]:
        """The ways the episode's next program may start, forked in a room first where it can be (see
        runner/starts.py)."""
        assert self.workspace is not None and self.confinement is not None, "reset() first"
        return starts_for(self.rooms, self.workspace, self.confinement)

    def evaluate(self) -> EvalResult:
        """Score the agent's changes in a fresh eval tree (see evaltree.py)."""
        assert self.workspace is not None and self.confinement is not None
        tampered_before = self._tampered
        notes = ["the venv had been changed by a program and was rebuilt before this eval"] \
            if self._check_venv() else []
        if cache.restore_drivers(self.workspace.drivers):
            self._tampered = True
            notes.append("minidebug's driver scripts had been changed by a program and were written again")
        if not cache.bare_repo_intact(self.workspace.prepared):
            self._tampered = True
            return EvalResult(0, len(self._counted_ids or ()), "", notes=tuple(notes) + (
                "not scored: the task's cached git repository was changed by a program; reset() rebuilds it",))
        cache.ensure_eval_base(self.task, self.workspace.prepared)
        if not treeguard.guard(self.workspace.prepared.eval_base).intact():
            self._tampered = True
            cache.repair_eval_base(self.task, self.workspace.prepared)
            notes.append("the task's pristine files had been changed by a program and were written again")
        counted = self._counted()
        hidden = bool(self.workspace.prepared.hidden_files)
        if hidden:  # a program that ran beside the scored run, which runs beside the hidden files, could read them
            # off what that run does to what both share: free blocks (statvfs), the CPU, and under Landlock the
            # command lines of its children in /proc
            self.end_programs()
        # a warm interpreter that may have imported what a program had changed is not used
        place = self._evals.take(bool(notes) or tampered_before != self._tampered, self.confinement)
        if hidden:
            notes.append("the episode's programs (a pdb session among them) were stopped before the scored run, "
                         "which runs beside the task's hidden files")
        try:
            result = evaluate(self.workspace, counted, self.limits.eval_timeout, place.confinement, notes,
                              place.warm, place.folder, place.pristine)
            self._scored = (self.workspace.last_read, self.workspace.last_changes)  # what the scored run read
        finally:  # the interpreter serves the next run, unless the agent's code ran in it beside hidden files:
            # its room (process ids, its own /tmp) may carry what that code saw into whatever runs there next
            self._evals.give_back(place.warm, keep=not self._tampered and not self.workspace.prepared.hidden_files)
        if not (result.success and self.config.terminate_on_success):
            self._start_warm()
        if self.config.strict and result.suspicious and result.score:
            result = replace(result, score=0, notes=result.notes + (
                f"scored 0 (strict): the run showed signs of in-memory forgery; it would have scored "
                f"{result.score}/{result.max_score}",))
        return result

    def _counted(self) -> tuple[str, ...]:
        """The task's counted test ids, measured on the first eval of the task on this machine."""
        if self._counted_ids is None:
            assert self.workspace is not None and self.confinement is not None
            try:
                self._counted_ids = counted_tests(self.task, self.workspace.prepared, self.confinement,
                                             self.limits.eval_timeout)
            except TaskError as exc:
                raise ToolError(f"eval: {exc}") from None
        return self._counted_ids

    def file_edited(self, rel: str, before: str, after: str) -> None:
        for tool in self.tools.values():
            tool.file_edited(self._episode, rel, before, after)

    def breakpoint_lines(self, rel: str) -> set[int]:
        lines: set[int] = set()
        for tool in self.tools.values():
            lines |= tool.breakpoint_lines(self._episode, rel)
        return lines

    # -- internals -------------------------------------------------------------------------
    @property
    def _episode(self) -> Episode:
        """This env as its tools see it (`tools.base.Episode`): from the first reset on, which is when tools
        run, its worktree and confinement are set."""
        return cast(Episode, self)

    def _start(self) -> None:
        """First reset: sandbox, cache, limits, worktree. Fails closed: on any error nothing
        of the episode is left, and the next reset() starts over (with the same sandbox demands)."""
        kind = sandbox.resolve(self.config.sandbox)
        prepared = cache.prepare(self.task, self.config.cache_dir)
        limits = self.limits
        confinement = Confinement(limits.memory_mb, limits.cpu_seconds, limits.file_size_mb, limits.processes,
                                  kind, prepared.venv, (prepared.drivers,))
        workspace = None
        try:
            if not cache.bare_repo_intact(prepared):
                self._tampered = True
                cache.invalidate_entry(prepared)
                prepared = cache.prepare(self.task, self.config.cache_dir)
            if not treeguard.guard(prepared.venv).intact():
                prepared = self._repair_venv(prepared)
            if cache.restore_drivers(prepared.drivers):
                self._tampered = True
            workspace = Workspace(self.task, prepared)
        except BaseException:
            if workspace is not None:
                workspace.close()
            confinement.close()
            raise
        self.workspace, self.confinement = workspace, confinement

    def _start_warm(self) -> None:
        if self.workspace is not None and self.confinement is not None:
            workspace = self.workspace
            self._evals.start_warm(workspace, self.confinement.sandbox, self.limits,
                                   lambda room: start_warm_eval(workspace, room.confinement, room.dir),
                                   self._counted_ids is not None or counted_known(self.task, workspace.prepared))

    def _check_venv(self) -> bool:
        """Rebuild the venv if a program changed it; returns True (and flags info["tampered"]) if it did."""
        assert self.workspace is not None
        if treeguard.guard(self.workspace.venv).intact():
            return False
        self.workspace.prepared = self._repair_venv(self.workspace.prepared)
        return True

    def _repair_venv(self, prepared: PreparedTask) -> PreparedTask:
        self._tampered = True
        self._evals.end_warm(rebuilt_venv=prepared.venv)  # it imported from the venv as it was
        invalidate(prepared.venv)
        prepared = cache.prepare(self.task, self.config.cache_dir)
        if not treeguard.guard(prepared.venv).intact():
            raise WorkspaceError(f"{prepared.venv}: the venv changes as soon as it is rebuilt")
        return prepared

    def _introduction(self) -> str:
        tools = "\n".join(f"- {tool.name}: {tool.description}" for tool in self.tools.values())
        return f"{self.task.description.strip()}\n\nTools:\n{tools}"

    def _normalize(self, text: str) -> str:
        """Observations hold no temp paths, timings or object addresses, so a faithful replay matches."""
        assert self.workspace is not None
        root = str(self.workspace.root)
        text = text.replace(root + "/", "").replace(root, ".")
        text = text.replace(str(self.workspace.dir), "$EPISODE").replace(str(self.workspace.venv), "$VENV")
        text = _ROOM.sub("$EPISODE", text)  # a forked eval's folder, which changes from eval to eval
        text = _PYTEST_TIMING.sub(r"\1\2", text)
        return _utf8(_ADDRESS.sub(r"\g<1>0x...>", text))

    def _out_of_budget(self, extra: dict[str, Any]) -> bool:
        if self._steps >= self.limits.max_steps:
            extra["truncated_by"] = "max_steps"
        elif self.budget.exhausted:
            extra["truncated_by"] = "max_tokens"
        elif self.config.max_seconds is not None and time.monotonic() - self._started > self.config.max_seconds:
            extra["truncated_by"] = "max_seconds"
        return "truncated_by" in extra

    def _info(self, **extra: Any) -> dict[str, Any]:
        if self._tampered:
            extra["tampered"] = True
        return {"task": self.task.name, "step": self._steps, "tokens_used": self.budget.used,
                "tokens_left": self.budget.left, **extra}


def _utf8(text: str) -> str:
    """`text` as UTF-8 can carry it: a lone surrogate (a file name made of bytes that are not UTF-8, or one a
    tool call's JSON spelled out) shown as its escape, `\\udcff`, so that no observation breaks what encodes it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
