"""One pytest run of a task's eval command, confined, with its outcomes reported over a socket.

The run goes through the `minidebug_eval` driver: plugin autoloading off (the venv's own plugins are named
explicitly), no cache provider, no user site, no bytecode written, and pytest imported before any folder of
the project is on sys.path; from then on no bytecode is read at all (`sys.pycache_prefix`, which pytest's
assertion-rewrite cache follows too, points where no file can exist), so none that the tree holds or that the
run itself writes is ever run. The outcomes come back over a socket with a nonce, not through a file or the printed output.
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
from ..tasks.command import pytest_arguments


# Where the driver points sys.pycache_prefix once pytest is imported: a path below a character device, where
# no folder can ever be made, so no bytecode is read (nor written) for any module imported from then on.
NO_BYTECODE = "/dev/null/minidebug-no-bytecode"


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
    home, tmp = scratch / "home", scratch / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    env = episode_environ(venv, home, tmp)
    env.update(PYTEST_ADDOPTS="", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    host, child = socket.socketpair()
    nonce = secrets.token_hex(16)
    try:
        env["MINIDEBUG_EVAL_FD"] = str(child.fileno())
        settings = {"nonce": nonce, "sys_path": sys_path, "child_path": sys_path if source_layout else [],
                    "pycache": NO_BYTECODE, "preload": list(preload),
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
