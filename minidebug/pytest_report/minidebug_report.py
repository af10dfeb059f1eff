"""A pytest plugin, loaded into the task's own pytest run, that writes each test's outcome as JSON.

minidebug scores eval from this file rather than from pytest's printed output.
"""

import json
import os

_outcomes = {}
_collect_errors = []


def pytest_collectreport(report):
    if report.failed:
        _collect_errors.append(report.nodeid or "<collection>")


def pytest_runtest_logreport(report):
    nodeid = report.nodeid
    if report.when == "call" or report.outcome != "passed":
        if getattr(report, "wasxfail", None) is not None:
            outcome = "passed" if report.outcome == "skipped" else "failed"  # xfail ok, xpass(strict) not
        else:
            outcome = report.outcome
        if nodeid not in _outcomes or outcome != "passed":
            _outcomes[nodeid] = "error" if report.when != "call" and outcome == "failed" else outcome


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("MINIDEBUG_REPORT")
    if not path:
        return
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"tests": _outcomes, "collect_errors": _collect_errors, "exitstatus": int(exitstatus)}, handle)
