"""Runs the task's pytest for minidebug's eval and reports each test's outcome to the host.

Started as `python -s -B minidebug_eval.py` (by path, so only this folder is on sys.path) with
MINIDEBUG_EVAL_FD naming a socket. The host sends the run's settings over it as one JSON line; the
outcomes go back over the same socket, prefixed with a nonce that only came over the socket, so that
nothing the tests import can stand in for the report by writing a file or printing text. Each outcome is
also sent the moment it is recorded, so an outcome changed in memory later shows as a mismatch. pytest is
imported before any folder of the project is put on sys.path, so no file of the project can replace it, and
from then on no bytecode is read at all: none in the project, none the run itself writes. minidebug_watch
reports code of the agent's that reaches into the runner (see there).
"""

import json
import os
import sys


def recorder(stream):
    """A pytest plugin object that records each test's outcome (sending it with `stream` the moment it is
    recorded) and the collection errors, and report() giving what it recorded. The hooks are closures: the
    plugin object holds no attribute that code under test could swap to silence them."""
    outcomes, collect_errors, collected = {}, [], []

    def pytest_collectreport(report):
        if report.failed:
            collect_errors.append(report.nodeid or "<collection>")

    def pytest_runtest_logreport(report):
        if report.when != "call" and report.outcome == "passed":
            return
        if getattr(report, "wasxfail", None) is not None:
            outcome = "xfailed" if report.outcome == "skipped" else "xpassed"
        elif report.when != "call" and report.outcome == "failed":
            outcome = "error"
        else:
            outcome = report.outcome
        if outcomes.get(report.nodeid, "passed") == "passed":
            outcomes[report.nodeid] = outcome
            stream(report.nodeid, outcome)

    def pytest_collection_finish(session):
        collected[:] = [item.nodeid for item in session.items]

    class Recorder:
        pass

    plugin = Recorder()
    for hook in (pytest_collectreport, pytest_runtest_logreport, pytest_collection_finish):
        setattr(plugin, hook.__name__, hook)
    return plugin, lambda: {"tests": outcomes, "collect_errors": collect_errors, "collected": collected}


def _receive(fd):
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data.decode("utf-8"))


def _read_no_bytecode_from_now_on(pycache, preload):
    """Point the bytecode cache at `pycache`, a path where no file can exist, so that no .pyc in the project
    or written during the run (nor pytest's assertion-rewrite cache, which follows sys.pycache_prefix) is ever
    read. pytest's own plugins, the modules it imports in every run and the venv's plugins are imported first,
    from their bytecode as usual, so that eval does not compile them from source each time."""
    if not pycache:
        return
    import importlib

    try:
        from _pytest.config import default_plugins
    except ImportError:  # a pytest without the list: its plugins are compiled from source, which is slower
        default_plugins = ()
    # pdb and the modules below are what pytest imports after its plugins, in every run.
    lazy = ["pdb", "faulthandler", "_pytest._argcomplete"]
    for name in [f"_pytest.{name}" for name in default_plugins] + lazy + list(preload):
        try:
            importlib.import_module(name)
        except Exception:  # pytest reports it when it loads the plugin
            pass
    sys.pycache_prefix = pycache


def _sender(fd, nonce):
    """send(kind, text): one line to the host, `nonce kind text`, written whole."""
    write, encode = os.write, str.encode

    def send(kind, text):
        data = memoryview(nonce + kind + encode(text.replace("\n", " "), "utf-8", "replace") + b"\n")
        while data:
            data = data[write(fd, data):]

    return send


def main():
    fd = int(os.environ.pop("MINIDEBUG_EVAL_FD"))
    settings = _receive(fd)
    nonce = settings.pop("nonce").encode()
    send = _sender(fd, nonce)
    import pytest  # noqa: F401 - before the project's folders are on sys.path

    _read_no_bytecode_from_now_on(settings.get("pycache"), settings.get("preload", []))
    from minidebug_watch import Watch

    dumps = json.dumps
    watch = Watch(lambda finding: send(b"!", finding), fd, os.getcwd(), settings.get("agent_files", []))
    checks = watch.plugin()
    for folder in reversed(settings["sys_path"]):
        sys.path.insert(0, folder)
    inherited = [folder for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep) if folder]
    if settings.get("child_path"):  # what the tests start imports the project as pdb and bash see it
        os.environ["PYTHONPATH"] = os.pathsep.join(settings["child_path"] + inherited)
    plugin, recorded = recorder(lambda test, outcome: send(b"=", dumps([test, outcome])))
    try:
        code = pytest.main(settings["args"], plugins=[checks, plugin])
    finally:
        try:
            watch.finish()
        except Exception as exc:  # the report goes out whatever happened to the checks
            send(b"!", f"the after-run checks failed: {exc!r}")
        send(b"", dumps(recorded()))
    sys.exit(int(code))


if __name__ == "__main__":
    main()
