"""A warm eval interpreter: pytest imported ahead of the eval, each run forked from it.

An eval's cost is mostly a new interpreter importing pytest, its plugins and the venv's; and where a pids
cgroup holds the episode, moving each new process into it costs a kernel grace period (tens of ms). So
the episode starts the eval driver in warm mode (`minidebug_eval.py --warm`), confined exactly as an eval
(same sandbox, limits, cgroup, writable folders), which imports all that, rehearses one pytest run on tests
of its own (see minidebug_rehearsal.py) and waits. Each eval sends it the
report socket and an output pipe; it forks a child that takes a session of its own, installs the seccomp
filter and runs the tests exactly as a fresh driver would. pdb sessions and trace/inspect runs are forked
from it the same way (`start_session`, `run_program`; see runner/room_view.py).

The warm interpreter never runs code of the project, reads no file once ready and is not dumpable, so no run
changes what the next child starts from, and it serves run after run. What a run could leave around it is
ended after each: the run's process group and whatever else is in the room's cgroup or carries its token
(by the host, sparing the interpreter), or under bwrap every other process of the sandbox's PID namespace
and what the run added to the sandbox's /tmp and /dev/shm (by the interpreter itself, which then checks
that the sandbox's own file systems hold what they held when it became ready, and ends if not). A run that
timed out, or that the interpreter could not account for, or that grew the folders it works in (see
room.py), ends it, and the episode starts another. Run by root without a sandbox, a program could
reach the interpreter's memory, so there it serves one run only. (A task with hidden files runs its second,
output-only run fresh, in folders of its own.)

Results are the same as a fresh process's; where forking is not safe (a pre-imported module started a
thread) the interpreter says so and the episode runs each eval fresh, as with `eval_mode="fresh"`.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import subprocess
import threading
import time
from pathlib import Path

from ..drivers.minidebug_protocol import EXIT, FORK, FRESH, INTERRUPT, KILL, PID, READY, RUN, message, words
from ..sandbox import process, reaper
from ..sandbox.confinement import Confinement
from ..sandbox.process import Completed
from ..store import facts
from ..store.locks import file_lock
from . import precompiled

THREAD_STARTED = "a module imported before the run started a thread"  # the driver's words: forking is unsafe
READY_TIMEOUT = 60.0  # seconds an eval waits for the warm interpreter to finish importing
FORK_TIMEOUT = 10.0  # seconds a ready interpreter may take to fork the run (milliseconds, unless it was stopped)
MAX_LEARNED = 2000  # module names a warm interpreter imports ahead, at most


class WarmInterpreter:
    """One warm eval interpreter, for the runs in `tree` (the eval tree's folder, kept across evals) with
    `scratch`.

    Args:
        argv: the driver's command line (warm mode); env: its environment (HOME and TMPDIR in scratch).
        settings: what the driver imports first (`preload`: the venv's pytest plugins; `learned`: the venv's
            modules the task's tests load, see `learn_modules`) and the no-bytecode prefix (`pycache`).
    """

    def __init__(self, confinement: Confinement, argv: list[str], env: dict[str, str], tree: Path,
                 scratch: Path, settings: dict):
        self.tree, self.scratch = tree, scratch
        self.learned = list(settings.get("learned", []))
        self._folders = _identity(tree, scratch)
        self._bwrap = confinement.sandbox == "bwrap"
        self._serves_many = (confinement.sandbox is not None or os.geteuid() != 0) \
            and confinement.filter_program() is not None  # without the filter a run could leave IPC objects
        self._control, child = socket.socketpair()
        self._buffer = b""
        self._state = "starting"
        self.reason = ""
        try:
            launch = confinement.prepare(argv, {**env, "MINIDEBUG_EVAL_FD": str(child.fileno())},
                                         [tree, scratch], tree, seccomp_filter=False, init=True)
            # An interpreter that serves one run only rehearses none: the rehearsal would only delay the next.
            settings = {**settings, "filter": confinement.filter_program(), "scopes": confinement.child_scopes(),
                        "rehearse": self._serves_many}
            if self._bwrap:  # the interpreter ends what a run leaves in its sandbox (see minidebug_leftovers.py)
                settings["host_pid_namespace"] = os.readlink("/proc/self/ns/pid")
            _send_in_background(self._control, json.dumps(settings).encode() + b"\n")
        except BaseException:
            child.close()
            self._control.close()
            raise

        def start() -> subprocess.Popen:
            stdin, sink = process.empty_input(), os.memfd_create("minidebug-warm-output", os.MFD_CLOEXEC)
            try:  # no device node of the host as a descriptor (see process.empty_input)
                return subprocess.Popen(launch.argv, cwd=tree, env=launch.env, stdin=stdin, stdout=sink,
                                        stderr=sink, start_new_session=True, preexec_fn=launch.preexec,
                                        pass_fds=(child.fileno(), *launch.pass_fds))
            finally:
                child.close()
                os.close(stdin)
                os.close(sink)

        self._started = process.in_background(start)  # the caller goes on while the new process enters its cgroup
        self._proc: subprocess.Popen | None = None
        self._memory_kb: int | None = None  # see memory_kb

    def run(self, report: socket.socket, timeout: float,
            max_output: int = process.DEFAULT_MAX_OUTPUT) -> Completed | None:
        """One run, forked from the warm interpreter, with `report` (the child's end of the report socket);
        None, with `reason` set, when the interpreter cannot serve it (the caller then runs it fresh)."""
        return self._forked_run(message(RUN), [report.fileno()], timeout, max_output)

    def run_program(self, program: dict, timeout: float,
                    max_output: int = process.DEFAULT_MAX_OUTPUT) -> Completed | None:
        """One run of a driver's program forked from the warm interpreter (see minidebug_forked: `program`,
        `argv`, `env`, `sys_path`), its output collected as a run's; None, with `reason` set, when the
        interpreter cannot serve it."""
        return self._forked_run(_fork_message(program), [], timeout, max_output)

    def _can_serve(self, timeout: float) -> bool:
        """Whether it is ready (waiting up to `timeout`) in the folders it started in; else it ends."""
        if not self._ready(min(timeout, READY_TIMEOUT)):
            return False
        if _identity(self.tree, self.scratch) != self._folders:
            self._give_up("the eval tree's folder was replaced")
            return False
        return True

    def _forked_run(self, message: bytes, fds: list[int], timeout: float, max_output: int) -> Completed | None:
        start = time.monotonic()
        if not self._can_serve(timeout):
            return None
        read_end, write_end = os.pipe()
        try:
            try:
                if socket.send_fds(self._control, [message], [*fds, write_end]) != len(message):
                    raise OSError("the request was cut")
            except OSError:
                self._give_up("the warm interpreter is gone")
                return None
            finally:
                os.close(write_end)
            self._state = "running"
            pid = self._line(min(start + timeout, time.monotonic() + FORK_TIMEOUT), PID)
            if pid is None:
                self._give_up("the warm interpreter did not start the run")
                return None
            child = self._own_child(pid)
            exit_code: list[int] = []
            accounted: list[bool] = []  # whether the interpreter said the run left nothing (`exit PID CODE`)

            def read_exit(line: list[bytes]) -> None:
                _, _, code, *unclean = line
                exit_code.append(int(code))
                accounted.append(not unclean)

            def exited() -> bool:
                if not exit_code:
                    line = self._line(0.0, EXIT)
                    if line is not None:
                        read_exit(line)
                    elif self._state == "gone":
                        exit_code.append(-9)
                return bool(exit_code)

            reader, timed_out = process.read_output(read_end, start + timeout, exited, max_output)
            if not timed_out and not exit_code:  # output ended: the run's own exit follows
                line = self._line(min(start + timeout, time.monotonic() + 1.0), EXIT)
                if line is not None:
                    read_exit(line)
            self._end_run(child, timed_out)
            if self._serves_many and accounted == [True] and (child is not None or self._bwrap) and not timed_out:
                self._state = "ready"  # the next run forks from it too
            else:
                self.close()
            if timed_out:
                reader.drain(read_end)
        finally:
            os.close(read_end)
        return Completed(returncode=None if timed_out or not exit_code else exit_code[0], output=reader.text(),
                         timed_out=timed_out, seconds=time.monotonic() - start, dropped_bytes=reader.dropped)

    def start_session(self, terminal: int, session: dict, timeout: float) -> bool:
        """Fork a pdb session (see minidebug_forked: `argv`, `env`, `sys_path`) with `terminal`, the
        child's end of a pty, as its controlling terminal; False, with `reason` set, when the interpreter
        cannot. Until `end_session`, it serves nothing else."""
        if not self._can_serve(timeout):
            return False
        message = _fork_message({**session, "program": "pdb"})
        try:
            sent = socket.send_fds(self._control, [message], [terminal])
        except OSError:
            sent = 0
        if sent != len(message):
            self._give_up("the warm interpreter is gone")
            return False
        self._state = "session"
        if self._line(time.monotonic() + FORK_TIMEOUT, PID) is None:
            self._give_up("the warm interpreter did not start the session")
            return False
        return True

    def interrupt_session(self) -> None:
        """SIGINT to the session's process group, as Ctrl-C in its terminal."""
        if self._state == "session":
            try:
                self._control.send(message(INTERRUPT))
            except OSError:
                pass

    @property
    def in_session(self) -> bool:
        """Whether a session started by `start_session` runs (or has not been accounted for yet)."""
        return self._state == "session"

    def end_session(self, timeout: float = 5.0) -> int | None:
        """Kill what is left of the session and wait for the interpreter to account for it: it then serves
        the next run, or (the session left something it could not end, or it serves one run only) it ends.
        Returns how the session's process ended (-signal, or its exit status), where that is known."""
        if self._state != "session":
            return None
        try:
            self._control.send(message(KILL))
        except OSError:
            pass
        line = self._line(time.monotonic() + timeout, EXIT) or []
        if len(line) == 3 and self._serves_many:
            self._state = "ready"
        else:
            self.close()
        try:
            return int(line[2])
        except (IndexError, ValueError):
            return None

    @property
    def pid(self) -> int | None:
        """The interpreter's pid on the host (None under bwrap, whose process is bwrap's, or before it started),
        for `Confinement.kill_strays` to spare."""
        return None if self._bwrap or self._proc is None or not self._started.done() else self._proc.pid

    def memory_kb(self) -> int:
        """The proportional set size of the interpreter's processes (under bwrap, bwrap's too), in kB. Measured
        once it is ready and between runs (it grows no more: each run is a child of its own), then kept."""
        if self._memory_kb is not None:
            return self._memory_kb
        proc = self._started_process() if self._state != "closed" else None
        size = reaper.tree_memory_kb(proc.pid) if proc is not None else 0
        if self._state == "ready":
            self._memory_kb = size
        return size

    @property
    def alive(self) -> bool:
        """Whether it can serve a run: started or starting, between runs, not gone."""
        if self._state not in ("starting", "ready"):
            return False
        if self._proc is None and not self._started.done():
            return True
        proc = self._started_process()
        return proc is not None and proc.poll() is None

    def wait_started(self) -> bool:
        """Wait until the process started in the background has started (or failed to); whether it did."""
        return self._started_process() is not None

    def close(self) -> None:
        """End the warm interpreter and what it started. Idempotent."""
        if self._state == "closed":
            return
        self._state = "closed"
        self._control.close()
        proc = self._started_process()
        if proc is not None:
            process.kill_group(proc.pid)
            proc.wait()

    # -- internals ---------------------------------------------------------------------------
    def _started_process(self) -> subprocess.Popen | None:
        """Wait for the background start to be done; the process, or None if it did not start."""
        if self._proc is None:
            try:
                self._proc = self._started.result()
            except Exception as exc:  # noqa: BLE001 - any failure to start: the runs go fresh
                self.reason = self.reason or f"the warm interpreter could not be started: {exc}"
                return None
        return self._proc

    def _ready(self, timeout: float) -> bool:
        if self._started_process() is None:
            self._give_up(self.reason)
        if self._state == "starting":
            line = self._line(time.monotonic() + timeout, None)
            if line == [READY]:
                self._state = "ready"
            else:
                self._give_up(b" ".join(line[1:]).decode("ascii", "replace") if line and line[0] == FRESH
                              else "the warm interpreter did not start")
        return self._state == "ready"

    def _line(self, deadline: float, word: bytes | None) -> list[bytes] | None:
        """The words of the next line from the interpreter whose first word is `word` (any line for None),
        waiting until `deadline`."""
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                found = words(line)
                if word is None or found[:1] == [word]:
                    return found
                continue
            wait = deadline - time.monotonic()
            if self._state in ("gone", "closed"):
                return None
            with selectors.DefaultSelector() as selector:
                selector.register(self._control, selectors.EVENT_READ)
                if not selector.select(max(wait, 0.0)):
                    return None
            try:
                chunk = self._control.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                self._state = "gone"
                return None
            self._buffer += chunk[:65536]

    def _own_child(self, line: list[bytes]) -> int | None:
        """The pid of a `pid N` line, if that is a child of the interpreter leading its own process group
        (checked while the interpreter waits for it): the host never kills a group only because a line
        named it. None under bwrap, whose pids are not the host's."""
        try:
            pid = int(line[1])
        except (IndexError, ValueError):
            return None
        assert self._proc is not None  # a run is forked only once the process started (see _can_serve)
        stat = None if self._bwrap else reaper.proc_stat(pid)
        return pid if stat is not None and stat.ppid == self._proc.pid and stat.pgid == pid else None

    def _end_run(self, child: int | None, timed_out: bool) -> None:
        """Kill what is left of the run: its process group, or where that is not known (under bwrap),
        the interpreter and with it everything it started, if the run is still going."""
        if child is not None:
            process.kill_group(child)
        elif timed_out:
            self.close()

    def _give_up(self, reason: str) -> None:
        self.reason = self.reason or reason
        self.close()


def _fork_message(program: dict) -> bytes:
    return message(FORK, json.dumps(program))


def _send_in_background(channel: socket.socket, data: bytes) -> None:
    """Send the settings (megabytes, with the files to compile) while the interpreter starts and reads them."""
    def send() -> None:
        try:
            channel.sendall(data)
        except OSError:  # the interpreter is gone (or was ended): its start fails the usual way
            pass

    threading.Thread(target=send, daemon=True).start()


LEARNED_FILE = "warm-modules.json"  # in a task's cache entry: the venv's modules its tests load
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_ALWAYS_IMPORTED = {"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging"}


def learned_yet(entry: Path) -> bool:
    """Whether `learn_modules` recorded the task entry's modules (perhaps none)."""
    return facts.read(entry, LEARNED_FILE) is not None and precompiled.learned_yet(entry)


def learn_modules(entry: Path, pristine: Path, venv: Path, loaded: tuple[str, ...],
                  tree_modules: tuple[tuple[str, str], ...] = ()) -> None:
    """Record, once per task entry, the venv's modules a run of the task's own tests loaded (as the run
    reported them; see evaluate.learn_from_pristine): what its warm interpreters import ahead. Only names that
    are a file of the venv's site-packages are kept, and none whose top-level package the task's own tree has
    (at its root or in `src/`), so a project installed in its venv is always imported from the tree. The
    tree's files the run imported (`tree_modules`) are recorded too (see precompiled.py)."""
    precompiled.learn(entry, tree_modules)
    if facts.read(entry, LEARNED_FILE) is not None:
        return
    left_out = _ALWAYS_IMPORTED | {child.name.removesuffix(".py") for folder in (pristine, pristine / "src")
                                   if folder.is_dir() for child in folder.iterdir()}
    site = list(venv.glob("lib/python*/site-packages"))
    names = sorted(name for name in set(loaded) if _MODULE_NAME.fullmatch(name)
                   and name.split(".", 1)[0] not in left_out
                   and any(_is_module_of(folder, name) for folder in site))[:MAX_LEARNED]
    with file_lock(entry.with_suffix(".learned.lock")):
        if facts.read(entry, LEARNED_FILE) is None:
            facts.write(entry, LEARNED_FILE, names)


def _is_module_of(site: Path, name: str) -> bool:
    """Whether `name` is a module file (source, or a compiled extension) or package of `site`."""
    *parents, last = name.split(".")
    folder = site.joinpath(*parents)
    return (folder / last / "__init__.py").is_file() or (folder / f"{last}.py").is_file() \
        or any(folder.glob(f"{last}.*.so")) or (folder / f"{last}.so").is_file()


def learned_modules(entry: Path) -> list[str]:
    """The names `learn_modules` recorded for a task entry ([] before its first eval, or if a program changed
    the file)."""
    names = facts.read(entry, LEARNED_FILE)
    return [name for name in names if isinstance(name, str) and _MODULE_NAME.fullmatch(name)][:MAX_LEARNED] \
        if isinstance(names, list) else []


def _identity(*folders: Path) -> tuple:
    try:
        return tuple((stat.st_dev, stat.st_ino) for stat in (os.lstat(folder) for folder in folders))
    except OSError:
        return ()
