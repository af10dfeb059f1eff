"""One pytest run of a task's eval command, confined, with its outcomes reported over a socket (or a run of
Django's tests/runtests.py, through the same driver: see tasks/command.py and drivers/minidebug_unittest.py).

The run goes through the `minidebug_eval` driver: plugin autoloading off (the venv's own plugins are named
explicitly), no cache provider, no user site, no bytecode written, and pytest imported before any folder of
the project is on sys.path; from then on no bytecode is read at all (`sys.pycache_prefix`, which pytest's
assertion-rewrite cache follows too, points where no file can exist), so none that the tree holds or that the
run itself writes is ever run (in pytest's own repository, whose tests read bytecode they write, none of the
tree, the venv or the interpreter: see drivers/minidebug_watch.py). The outcomes come back over a socket in
lines tagged with a per-run key, not through a file or the printed output.
"""

from __future__ import annotations

import base64
import hmac
import io
import json
import secrets
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..drivers.minidebug_protocol import TAG_SIZE, tag
from ..runner.warm import WarmInterpreter
from ..sandbox.confinement import Confinement
from ..sandbox.process import episode_environ
from ..store.venv import pytest_plugins
from ..tasks.command import eval_command

# Where the driver points sys.pycache_prefix once pytest is imported: a path below a character device, where
# no folder can ever be made, so no bytecode is read (nor written) for any module imported from then on.
NO_BYTECODE = "/dev/null/minidebug-no-bytecode"
# What the report socket of one run may carry: the driver's lines of a 50,000-test run take some 15 MB; what
# code under test writes there past this is not read (nor held in memory).
MAX_REPORT_BYTES = 32 << 20
OVERFLOW = b"\0overflow"  # the reader's mark after what it read, when the run wrote more
MAX_FINDINGS, MAX_FINDING_CHARS = 100, 2_000  # a run's findings kept, and the length of each
MAX_FORGED_LINES = 1_000  # lines of others on the report socket past which none of it is read


@dataclass(frozen=True)
class PytestRun:
    """What one pytest run reported: outcome per test id (None when it wrote no report), and its output."""

    outcomes: dict[str, str] | None
    output: str
    collect_errors: tuple[str, ...] = ()
    collected: tuple[str, ...] = ()
    suspicious: tuple[str, ...] = ()  # signs that code under test reached into the runner (see minidebug_watch)
    forked: bool = False  # run in a child of a warm interpreter (see warm.py), not a fresh one
    venv_modules: tuple[str, ...] = ()  # modules the run loaded from the venv (what a warm one may import ahead)
    tree_modules: tuple[tuple[str, str], ...] = ()  # files of the tree it imported (what a warm one compiles)


def start_warm(tree: Path, scratch: Path, *, venv: Path, drivers: Path, confinement: Confinement,
               learned: Sequence[str] = (), compiled: Sequence[list[str]] = ()) -> WarmInterpreter:
    """A warm eval interpreter (see warm.py) for runs in `tree` with `scratch`, confined as they are, that
    also imports the venv's modules in `learned` ahead of the run and compiles the task's files in
    `compiled` (see runner/precompiled.py)."""
    env, preload = _environ(venv, scratch)
    argv = [str(venv / "bin" / "python"), "-s", "-B", str(drivers / "minidebug_eval.py"), "--warm"]
    return WarmInterpreter(confinement, argv, env, tree, scratch, {"pycache": NO_BYTECODE, "learned": list(learned),
                                                            "preload": list(preload), "compiled": list(compiled)})


def is_pytest(pristine: Path) -> bool:
    """Whether a task's pristine tree is pytest itself (the `_pytest` package and `pytest`, a package from
    5.4 on and a module before, at its root or in src/): then its tests are run by its own pytest, which the
    agent may be fixing, as its developers run them; the venv's pytest would test the wrong code."""
    return any((folder / "_pytest" / "__init__.py").is_file()
               and ((folder / "pytest").is_dir() or (folder / "pytest.py").is_file())
               for folder in (pristine / "src", pristine))


REWRITERS = ("src/_pytest/assertion/rewrite.py", "_pytest/assertion/rewrite.py")  # pytest's, by its layout


def base_rewriter(base: Path | None, agent_files: Sequence[str]) -> list[str] | None:
    """[relative path, base64 bytes] of pytest's assertion rewriter as the task's pristine tree `base` has it,
    where the agent changed it (it is among `agent_files`) and the base has it as a plain file; else None."""
    if base is None:
        return None
    for rel in REWRITERS:
        if rel in agent_files and (base / rel).is_file() and not (base / rel).is_symlink():
            return [rel, base64.b64encode((base / rel).read_bytes()).decode("ascii")]
    return None


def _environ(venv: Path, scratch: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """A run's environment (HOME and TMPDIR in `scratch`, made here) and the venv's plugins it loads."""
    home, tmp = scratch / "home", scratch / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    env = episode_environ(venv, home, tmp)
    env.update(PYTEST_ADDOPTS="", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env, pytest_plugins(venv)


def run_pytest(command: list[str], tree: Path, scratch: Path, *, venv: Path, drivers: Path, timeout: float,
               confinement: Confinement, source_layout: bool = False, extra: tuple[str, ...] = (),
               agent_files: tuple[str, ...] = (), agent_created: tuple[str, ...] = (),
               warm: WarmInterpreter | None = None,
               learned: Sequence[str] = (), learn: bool = False, collect_only: bool = False,
               project_pytest: bool = False, base: Path | None = None) -> PytestRun:
    """Run the eval command's pytest in `tree` (writable, with HOME and TMPDIR in `scratch`), confined:
    forked from `warm` where given and able (see warm.py), else in a fresh interpreter.
    `agent_files` (paths relative to `tree`) are the agent's: what they make the runner do is watched;
    `agent_created` (files and folders not in the task's base) are never imported under a name that another
    module has (see minidebug_shadow).
    `learned` names the venv modules the task's tests load, imported with pytest (see warm.py); with `learn`
    the run reports the venv modules it loaded (`venv_modules`), to be learned.
    `collect_only`: list the tests (`collected`), run none. `project_pytest`: the project is pytest itself
    (see `is_pytest`): its own pytest, from the tree, runs its tests, in a fresh interpreter; where the agent
    changed its assertion rewriter (among `agent_files`), the rewriter of `base` (the task's pristine tree)
    compiles the tree's own test modules (see drivers/minidebug_rewriter.py)."""
    read = eval_command(command)
    sys_path = [str(tree), str(tree / "src")] if source_layout else []
    if read.cwd_on_path and not source_layout:
        sys_path.append(str(tree))
    if project_pytest:
        sys_path = [str(tree / "src"), str(tree)]
        warm = None
    env, preload = _environ(venv, scratch)
    plugins = [arg for plugin in preload for arg in ("-p", plugin)]
    if preload and not project_pytest:  # imported ahead, so pytest warns it cannot rewrite their asserts, which
        plugins += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]  # `filterwarnings = error` would make fatal
    if read.runner == "django":  # the script's folder first, as `python tests/runtests.py` has it
        sys_path.insert(0, str(tree / read.test_folder))
        runner = {"runner": "django", "script": read.script, "args": read.args, "collect_only": collect_only}
    else:
        runner = {"args": [*read.args, "-p", "no:cacheprovider", *plugins, *extra,
                           *(("--collect-only", "-q") if collect_only else ())]}
    host, child = socket.socketpair()
    key = secrets.token_bytes(32)
    try:
        env["MINIDEBUG_EVAL_FD"] = str(child.fileno())
        settings = {"key": key.hex(), "sys_path": sys_path, "project_pytest": project_pytest,
                    "child_path": sys_path if source_layout or project_pytest else [],
                    "pycache": NO_BYTECODE, "preload": list(preload), "learned": list(learned),
                    "learn": learn, "agent_files": [str(tree / rel) for rel in agent_files],
                    "agent_created": [str(tree / rel) for rel in agent_created],
                    "pristine_rewriter": base_rewriter(base, agent_files) if project_pytest else None, **runner}
        # From a thread: the settings may be larger than the socket's buffer (thousands of the agent's files),
        # and the driver reads them only once it runs. Closing the socket below ends a send nobody reads.
        threading.Thread(target=_send_all, args=(host, json.dumps(settings).encode() + b"\n"), daemon=True).start()
        received: list[bytes] = []
        reader = threading.Thread(target=_read_all, args=(host, received), daemon=True)
        reader.start()
        argv = [str(venv / "bin" / "python"), "-s", "-B", str(drivers / "minidebug_eval.py")]
        forked = None
        try:
            forked = warm.run(child, timeout) if warm is not None else None
            if forked is not None:
                output = "\n".join(filter(None, [forked.describe(timeout), confinement.note(forked)]))
            else:
                _, output = confinement.run(argv, cwd=tree, env=env, timeout=timeout, writable=[tree, scratch],
                                            pass_fds=(child.fileno(),))
        except OSError as exc:
            return PytestRun(None, f"could not run {argv[0]}: {exc}")
        finally:
            child.close()
        reader.join(timeout=5)
    finally:
        child.close()
        try:
            host.shutdown(socket.SHUT_RDWR)  # wakes the reader even if a stray process still holds the other end
        except OSError:
            pass
        host.close()
    report, findings = _parse(b"".join(received), key)
    if report is None:
        return PytestRun(None, output, suspicious=tuple(findings), forked=forked is not None)
    return PytestRun(report["tests"], output, tuple(map(str, report.get("collect_errors", []))),
                     tuple(map(str, report.get("collected", []))), tuple(findings), forked is not None,
                     tuple(map(str, report.get("venv_modules") or [])), _pairs(report.get("tree_modules")))


def capped(findings: list[str]) -> list[str]:
    """`findings` without repeats, at most MAX_FINDINGS of them (the rest counted in a last one), each at most
    MAX_FINDING_CHARS long: code under test chooses how many the driver reports, and their text."""
    unique = [finding if len(finding) <= MAX_FINDING_CHARS else finding[:MAX_FINDING_CHARS] + " [cut]"
              for finding in dict.fromkeys(findings)]
    if len(unique) <= MAX_FINDINGS:
        return unique
    return unique[:MAX_FINDINGS] + [f"and {len(unique) - MAX_FINDINGS} more finding(s)"]


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    """The report's [path, kind] pairs, whatever else it holds left out."""
    items = value if isinstance(value, list) else []
    return tuple((item[0], item[1]) for item in items if isinstance(item, list) and len(item) == 2
                 and isinstance(item[0], str) and isinstance(item[1], str))


def _send_all(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:  # the run ended (or never started) without reading it all
        pass


def _read_all(sock: socket.socket, into: list[bytes]) -> None:
    """What the run writes to the report socket, into `into`, up to MAX_REPORT_BYTES; past that, nothing more is
    read (the socket is shut for reading, so the writer's next write fails) and `into` ends with OVERFLOW."""
    size = 0
    try:
        while chunk := sock.recv(1 << 16):
            size += len(chunk)
            if size > MAX_REPORT_BYTES:
                into.append(OVERFLOW)
                sock.shutdown(socket.SHUT_RD)
                return
            into.append(chunk)
    except OSError:
        pass


def _parse(data: bytes, key: bytes) -> tuple[dict | None, list[str]]:
    """The run's report (None if it sent none) and its findings, from the driver's tagged lines (see
    minidebug_protocol): `!finding`, `=[test, outcome]` as each outcome was recorded, and `{report}` at the end.

    A line whose tag is not the driver's next one was written by other code (or the driver's was lost or
    moved): what it says is ignored, and such lines are one finding, with their number; past
    MAX_FORGED_LINES of them nothing more is read and the run has no report. An unfinished last line (the run
    ended as it was written) is ignored. A test's outcome is never "passed" once a line said otherwise, and a
    report that disagrees with the outcomes sent as the tests ran is a finding (its tests keep the outcome that
    is not "passed")."""
    streamed: dict[str, str]
    report, findings, streamed, number, forged = None, [], {}, 0, 0
    if data.endswith(OVERFLOW):
        findings.append(f"the eval's report channel carried more than {MAX_REPORT_BYTES >> 20} MB (the driver's "
                        "lines of a run take far less): what followed was not read")
    for line in io.BytesIO(data):  # one line at a time: a run may send millions
        if not line.endswith(b"\n"):
            break  # unfinished: the run ended as it was written
        line = line[:-1]
        if not hmac.compare_digest(line[:TAG_SIZE], tag(key, number, line[TAG_SIZE:])):
            forged += 1
            if forged > MAX_FORGED_LINES:  # not the driver's run any more: nothing of it counts
                findings.append(f"the eval's report channel carried more than {MAX_FORGED_LINES} lines the "
                                "driver did not write there: the rest was not read, nor the run's report")
                return None, capped(findings)
            continue
        number += 1
        kind, body = line[TAG_SIZE:TAG_SIZE + 1], line[TAG_SIZE + 1:]
        try:
            if kind == b"!":
                findings.append(body.decode("utf-8", "replace"))
            elif kind == b"=":
                test, outcome = (str(part) for part in json.loads(body))
                if streamed.get(test, "passed") == "passed":
                    streamed[test] = outcome
            elif kind == b"{" and report is None:
                report = json.loads(kind + body)
        except ValueError:
            findings.append("the eval's report channel carried a line that does not parse")
    if forged:
        findings.append(f"the eval's report channel carried {forged} line(s) the driver did not write there "
                        "(or one of its lines was lost or moved)")
    findings = capped(findings)
    if not isinstance(report, dict):
        return None, findings
    tests = {str(test): str(outcome) for test, outcome in dict(report.get("tests") or {}).items()}
    if tests != streamed:
        findings.append("the outcomes reported at the end of the run differ from those recorded as the tests ran")
        for test, outcome in streamed.items():
            if outcome != "passed" or test not in tests:
                tests[test] = outcome
    report["tests"] = tests
    return report, findings
