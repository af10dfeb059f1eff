"""The episode's tools as a shell command, for agents that only write shell commands.

`ToolBridge(env)` serves the live episode's tools on a Unix socket and writes a small `md` command next to it;
commands run through `run()` find `md` on their PATH:

    md pdb 'b calc.py:2'        md pdb c          md view calc.py 1 20      md trace add
    md inspect calc.py:2 'a, b' md grep children  md eval                   md submit
    md help

Arguments map to the tool's arguments in order (`md view PATH START END`); a single JSON object is taken as
the arguments themselves (`md edit '{"path": ..., "old": ..., "new": ...}'`). pdb keeps its session and
breakpoints from one command to the next, since the episode lives in this process. The bridge answers only
while one of its own commands runs, one request at a time, so nothing else (an eval's test run, a program
left behind) can act through it.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import types
import typing
from typing import Any

from ..errors import ToolError

SHIM = """#!/bin/sh
exec python -I -S -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    sys.exit("md: the episode is not reachable (%s)" % exc)
s.sendall(json.dumps(sys.argv[2:]).encode() + b"\\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
reply = json.loads(data or b"{}")
sys.stdout.write(reply.get("output", "md: no answer") + "\\n")
sys.exit(0 if reply.get("ok") else 1)
' "{socket}" "$@"
"""
MAX_REQUEST = 2_000_000


class ToolBridge:
    """Serves `env`'s tools to shell commands run through `run()`.

    Args:
        env: a reset DebugEnv.
    """

    def __init__(self, env: Any):
        self.env = env
        self.folder = env.workspace.dir / "bridge"
        (self.folder / "bin").mkdir(parents=True, exist_ok=True)
        self.socket_path = self.folder / "tools.sock"
        shim = self.folder / "bin" / "md"
        shim.write_text(SHIM.replace("{socket}", str(self.socket_path)), encoding="utf-8")
        shim.chmod(0o755)
        self.submitted: tuple[str, float, dict[str, Any]] | None = None
        self._open = threading.Event()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket_path))
        self._server.listen(4)
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="minidebug-md", daemon=True)
        self._thread.start()

    def run(self, command: str, timeout: float) -> tuple[int, str]:
        """Run a shell command in the project (confined like the bash tool) with `md` on its PATH."""
        self._open.set()
        try:
            result = self.env.exec(command, timeout, env={"PATH": str(self.folder / "bin")}, writable=[self.folder])
        finally:
            self._open.clear()
        return (result.returncode if result.returncode is not None else -1), result.output

    def call(self, argv: list[str]) -> tuple[bool, str]:
        """One `md` invocation: (ok, output)."""
        if not argv or argv[0] in ("help", "-h", "--help"):
            return True, self.help()
        name, rest = argv[0], argv[1:]
        tool = self.env.tools.get(name)
        if tool is None:
            return False, f"md: unknown tool {name!r}; available: {', '.join(self.env.tools)}"
        try:
            arguments = _arguments(tool, rest)
        except ToolError as exc:
            return False, f"md {name}: {exc}"
        observation, reward, terminated, truncated, info = self.env.step({"name": name, "arguments": arguments})
        if name == "submit" and "score" in info:
            self.submitted = (observation, reward, info)
        return "error" not in info, observation

    def help(self) -> str:
        lines = ["md TOOL [ARGUMENTS...]: the episode's tools; arguments in this order (? = optional):"]
        for name, tool in self.env.tools.items():
            if name != "bash":
                fields = [f if info.is_required() else f"{f}?" for f, info in tool.Args.model_fields.items()]
                lines.append(f"  md {name} {' '.join(fields)}".rstrip())
        return "\n".join(lines)

    def close(self) -> None:
        """Stop serving and remove the socket. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()
        self._thread.join(timeout=5)
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass

    def _serve(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            with connection:
                try:
                    self._answer(connection)
                except OSError:
                    continue

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(10)
        data = b""
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        if not self._open.is_set():
            reply = {"ok": False, "output": "md: only commands of the agent may use the episode's tools"}
        else:
            try:
                argv = json.loads(data)
                if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
                    raise ValueError("not a list of strings")
                ok, output = self.call(argv)
                reply = {"ok": ok, "output": output}
            except (ValueError, RecursionError) as exc:
                reply = {"ok": False, "output": f"md: malformed request: {exc}"}
        connection.sendall(json.dumps(reply).encode())


def _arguments(tool: Any, words: list[str]) -> dict[str, Any]:
    """Positional words to the tool's arguments, in their declared order; one JSON object is taken as is."""
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = json.loads(words[0])
        except ValueError as exc:
            raise ToolError(f"malformed JSON arguments: {exc}") from None
        if not isinstance(value, dict):
            raise ToolError("JSON arguments must be an object")
        return value
    fields = list(tool.Args.model_fields.items())
    if not fields and words:
        raise ToolError("takes no arguments")
    arguments: dict[str, Any] = {}
    for index, (name, info) in enumerate(fields):
        if index >= len(words):
            break
        last = index == len(fields) - 1
        if _wants(info.annotation, list):  # a list takes one word, or, last, every word left
            arguments[name] = words[index:] if last else [words[index]]
        elif last:  # the last argument takes the rest of the line
            arguments[name] = _scalar(info.annotation, " ".join(words[index:]))
        else:
            arguments[name] = _scalar(info.annotation, words[index])
    return arguments


def _wants(annotation: Any, kind: type) -> bool:
    """True if the annotation is `kind`, `kind[...]`, or an optional or union holding one."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) \
        else (annotation,)
    return any(option is kind or typing.get_origin(option) is kind for option in options)


def _scalar(annotation: Any, word: str) -> Any:
    """An integer where the tool declares one and the word is one; else the word itself."""
    return int(word) if _wants(annotation, int) and word.lstrip("-").isdigit() else word
