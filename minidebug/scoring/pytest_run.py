"""One pytest run of a task's eval command, confined, with its outcomes reported over a socket.

The run goes through the `minidebug_eval` driver: plugin autoloading off (the venv's own plugins are named
explicitly), no cache provider, no user site, no bytecode written, and pytest imported before any folder of
the project is on sys.path; from then on bytecode is read only from an empty folder of the run's own
(`sys.pycache_prefix`, which pytest's assertion-rewrite cache follows too), never from the tree. The outcomes
come back over a socket with a nonce, not through a file or the printed output.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.confinement import Confinement
from ..sandbox.process import episode_environ
from ..store.venv import pytest_plugins
from ..workspace.safefs import remove_entry
from ..tasks.command import pytest_arguments


@dataclass(frozen=True)
class PytestRun:
    """What one pytest run reported: outcome per test id (None when it wrote no report), and its output."""

    outcomes: dict[str, str] | None
    output: str
    collect_errors: tuple[str, ...] = ()
    collected: tuple[str, ...] = ()


def run_pytest(command: list[str], tree: Path, scratch: Path, *, venv: Path, drivers: Path, timeout: float,
               confinement: Confinement, source_layout: bool = False, extra: tuple[str, ...] = ()) -> PytestRun:
    """Run the eval command's pytest in `tree` (writable, with HOME and TMPDIR in `scratch`), confined."""
    args, cwd_on_path = pytest_arguments(command)
    sys_path = [str(tree), str(tree / "src")] if source_layout else []
    if cwd_on_path and not source_layout:
        sys_path.append(str(tree))
    preload = pytest_plugins(venv)
    plugins = [arg for plugin in preload for arg in ("-p", plugin)]
    home, tmp, pycache = scratch / "home", scratch / "tmp", scratch / "pycache"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    remove_entry(scratch, "pycache")
    pycache.mkdir()  # empty and the run's own: the driver reads bytecode only from here once pytest is in
    env = episode_environ(venv, home, tmp)
    env.update(PYTEST_ADDOPTS="", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    host, child = socket.socketpair()
    nonce = secrets.token_hex(16)
    try:
        env["MINIDEBUG_EVAL_FD"] = str(child.fileno())
        settings = {"nonce": nonce, "sys_path": sys_path, "pycache": str(pycache), "preload": list(preload),
                    "args": [*args, "-p", "no:cacheprovider", *plugins, *extra]}
        host.sendall(json.dumps(settings).encode() + b"\n")
        received: list[bytes] = []
        reader = threading.Thread(target=_read_all, args=(host, received), daemon=True)
        reader.start()
        argv = [str(venv / "bin" / "python"), "-s", "-B", str(drivers / "minidebug_eval.py")]
        try:
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
    report = _parse(b"".join(received), nonce.encode())
    if report is None:
        return PytestRun(None, output)
    return PytestRun({str(k): str(v) for k, v in report.get("tests", {}).items()}, output,
                     tuple(map(str, report.get("collect_errors", []))), tuple(map(str, report.get("collected", []))))


def _read_all(sock: socket.socket, into: list[bytes]) -> None:
    try:
        while chunk := sock.recv(1 << 16):
            into.append(chunk)
    except OSError:
        pass


def _parse(data: bytes, nonce: bytes) -> dict | None:
    for line in data.splitlines():
        if line.startswith(nonce):
            try:
                report = json.loads(line[len(nonce):])
            except ValueError:
                return None
            return report if isinstance(report, dict) else None
    return None
