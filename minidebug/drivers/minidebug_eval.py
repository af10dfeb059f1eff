"""Runs the task's pytest for minidebug's eval and reports each test's outcome to the host.

Started as `python -s -B minidebug_eval.py` (by path, so only this folder is on sys.path) with
MINIDEBUG_EVAL_FD naming a socket. The host sends the run's settings over it as one JSON line; the
outcomes go back over the same socket, prefixed with a nonce that only came over the socket, so that
nothing the tests import can stand in for the report by writing a file or printing text. pytest is
imported before any folder of the project is put on sys.path, so no file of the project can replace it.
"""

import json
import os
import sys


class Recorder:
    """A pytest plugin object: each test's outcome and the collection errors."""

    def __init__(self):
        self.outcomes = {}
        self.collect_errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(report.nodeid or "<collection>")

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and report.outcome == "passed":
            return
        if getattr(report, "wasxfail", None) is not None:
            outcome = "xfailed" if report.outcome == "skipped" else "xpassed"
        elif report.when != "call" and report.outcome == "failed":
            outcome = "error"
        else:
            outcome = report.outcome
        if self.outcomes.get(report.nodeid, "passed") == "passed":
            self.outcomes[report.nodeid] = outcome

    def pytest_collection_finish(self, session):
        self.collected = [item.nodeid for item in session.items]


def _receive(fd):
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data.decode("utf-8"))


def main():
    fd = int(os.environ.pop("MINIDEBUG_EVAL_FD"))
    settings = _receive(fd)
    nonce = settings.pop("nonce").encode()
    import pytest  # noqa: F401 - before the project's folders are on sys.path

    for folder in reversed(settings["sys_path"]):
        sys.path.insert(0, folder)
    recorder = Recorder()
    try:
        code = pytest.main(settings["args"], plugins=[recorder])
    finally:
        report = {"tests": recorder.outcomes, "collect_errors": recorder.collect_errors,
                  "collected": getattr(recorder, "collected", [])}
        data = memoryview(nonce + json.dumps(report).encode() + b"\n")
        while data:
            data = data[os.write(fd, data):]
    sys.exit(int(code))


if __name__ == "__main__":
    main()
