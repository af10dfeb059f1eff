"""A pytest plugin for `minidebug synth`, loaded in the project's interpreter with `-p minidebug_synth`.

MINIDEBUG_SYNTH holds {"root": the project folder, "out": the JSON file to write, "trace": true|false}. It
writes, for every test, its outcome ("passed", "failed", "error", "skipped") and, when it did not pass, the
exception's type, its message's first line and the frames of its traceback that lie under the root (the
exception's cause and context included), as [path relative to root, line]; the collection errors; and, when
tracing, which functions of the project's files each test reached ([path, first line of the function's code]),
through sys.monitoring on Python 3.12+ and sys.settrace before.
"""

import json
import os
import sys

import pytest

_CONFIG = json.loads(os.environ.get("MINIDEBUG_SYNTH", "{}"))
_ROOT = os.path.realpath(_CONFIG.get("root", os.getcwd())) + os.sep
_TESTS = {}
_COLLECT_ERRORS = []
_REACHED = {}
_TOOL = 4  # sys.monitoring's tool id for this plugin (ids 0-2 and 5 are taken by debuggers, coverage, profilers)


def _relative(filename):
    filename = os.path.realpath(filename) if not filename.startswith(_ROOT) else filename
    return filename[len(_ROOT):] if filename.startswith(_ROOT) else None


class _Reach:
    """The project's code objects that started running while it is on."""

    def __init__(self):
        self.seen = set()
        self.codes = set()

    def start(self):
        self.seen = set()
        self.codes = set()
        if hasattr(sys, "monitoring"):
            monitoring = sys.monitoring
            if monitoring.get_tool(_TOOL) is None:
                monitoring.use_tool_id(_TOOL, "minidebug-synth")
                monitoring.register_callback(_TOOL, monitoring.events.PY_START, self._started)
            monitoring.restart_events()
            monitoring.set_events(_TOOL, monitoring.events.PY_START)
        else:
            sys.settrace(self._traced)

    def stop(self):
        if hasattr(sys, "monitoring"):
            sys.monitoring.set_events(_TOOL, 0)
        else:
            sys.settrace(None)
        found = set()
        for filename, line in self.seen:
            rel = _relative(filename)
            if rel is not None:
                found.add((rel, line))
        return sorted(found)

    def _started(self, code, offset):
        self.seen.add((code.co_filename, code.co_firstlineno))
        return sys.monitoring.DISABLE

    def _traced(self, frame, event, arg):
        code = frame.f_code
        if code not in self.codes:
            self.codes.add(code)
            self.seen.add((code.co_filename, code.co_firstlineno))
        return None


_REACH = _Reach()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _CONFIG.get("trace"):
        _REACH.start()
    try:
        yield
    finally:
        if _CONFIG.get("trace"):
            _REACHED[item.nodeid] = _REACH.stop()


def _frames(exc):
    frames, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            rel = _relative(tb.tb_frame.f_code.co_filename)
            if rel is not None:
                frames.append([rel, tb.tb_lineno])
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    return frames


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = _TESTS.setdefault(item.nodeid, {"outcome": "passed"})
    if entry["outcome"] in ("failed", "error"):
        return
    if report.failed:
        entry["outcome"] = "failed" if call.when == "call" else "error"
        exc = call.excinfo.value if call.excinfo is not None else None
        if exc is not None:
            message = str(exc).strip().splitlines()
            entry["type"] = type(exc).__name__
            entry["message"] = message[0][:300] if message else ""
            entry["frames"] = _frames(exc)
        else:
            entry["type"], entry["message"], entry["frames"] = "Failed", str(report.longrepr)[-300:], []
    elif report.skipped and call.when in ("setup", "call"):
        entry["outcome"] = "skipped"


def pytest_collectreport(report):
    if report.failed:
        _COLLECT_ERRORS.append([report.nodeid, str(report.longrepr).strip().splitlines()[-1:]])


def pytest_sessionfinish(session, exitstatus):
    out = _CONFIG.get("out")
    if out:
        with open(out, "w") as handle:
            json.dump({"tests": _TESTS, "collect_errors": _COLLECT_ERRORS, "reached": _REACHED,
                       "exitstatus": int(exitstatus)}, handle)
