"""minidebug_eval's second runner: a test script whose tests are unittest's (Django's `tests/runtests.py`),
run in the driver's own process, each test's outcome recorded as unittest's own run of it reports it.

minidebug_eval imports this before any folder of the project is on sys.path. `recorder` puts a recording
run in place of unittest's `TextTestRunner.run` (Django's DiscoverRunner runs its suite with it); `run_script`
then runs the script as `__main__`. A run that no other run encloses records, through a result class of its
own placed ahead of the runner's: each test's outcome, keyed `name (module.Class)` as Django's runner names
it, sent the moment it is recorded; errors outside a test (a module that cannot be imported, a failing
setUpClass) as collection errors; and the tests of its suite as collected. A run inside a test (a test of a
test runner) is not recorded.

A success counts only when unittest's own `TestCase.run` reported it (the code that called addSuccess is
that function's, taken before the project was imported), for a test whose method was not replaced on its
instance, and, for a test whose code (through its decorators) is the agent's, only when its class is the one
its module defines under that name: a success reported by other code, or for a class of the agent's that
takes another test's name, or for a task's test class whose test function comes from the agent's files,
counts as a failure and `flag` says so. A success of a task's test class whose run methods
(`_callTestMethod`, `__call__`, ...) come from the agent's files counts, and `flag` says so: the fix may lie
there (Django's own django/test), or the run may have skipped the test. As in minidebug_eval's pytest recorder,
the functions that hold the report channel keep it as default values. What else reaches into the run (frame
and garbage-collector walks, changed classes of unittest) is minidebug_watch's to find.
"""

import os
import sys
import unittest
import unittest.case
import unittest.runner
import unittest.util

# The modules whose classes a run relies on: minidebug_watch compares their state after the run. (Not the
# loader's: unittest itself adds run state to its stand-in test class for a module that failed to import.)
GUARDED = ("unittest.case", "unittest.result", "unittest.runner", "unittest.suite", "minidebug_unittest")
# What unittest's TestCase.run calls of a test's class: changed there, a run need not run the test.
_RUN_METHODS = ("run", "__call__", "_callSetUp", "_callTestMethod", "_callTearDown", "_callCleanup", "doCleanups")
_FAILURES = {"addFailure": "failed", "addError": "error", "addSkip": "skipped",
             "addExpectedFailure": "xfailed", "addUnexpectedSuccess": "xpassed"}


def test_id(test):
    """`name (module.Class)`: a test's id as Django's runner prints it (before Python 3.11 added the name
    again inside the parentheses)."""
    return f"{test._testMethodName} ({unittest.util.strclass(type(test))})"


def _is_test(test):
    """A test case proper: not a loader's stand-in for a module that failed to import, nor a holder of an
    error outside any test."""
    return isinstance(test, unittest.case.TestCase) and type(test).__module__ != "unittest.loader"


def recorder(stream, flag, untrusted, collect_only=False):
    """Install the recording run; returns report() giving what it recorded, and the functions that hold
    `stream` and `flag` (for minidebug_watch to protect). `untrusted(filename)` judges a file (see
    minidebug_watch). With `collect_only`, a run records its suite's tests and runs none."""
    outcomes, collect_errors, collected, active = {}, [], [], []
    original, run_code = unittest.runner.TextTestRunner.run, unittest.case.TestCase.run.__code__
    tree = os.path.join(os.getcwd(), "")

    def where(filename):
        return filename[len(tree):] if filename.startswith(tree) else filename

    def record(test, outcome, _stream=stream):
        if isinstance(test, unittest.case._SubTest):  # a subtest's skip or failure is its test's
            test = test.test_case
        if not _is_test(test):
            if outcome in ("error", "failed"):
                collect_errors.append(str(test._testMethodName if isinstance(test, unittest.case.TestCase)
                                          else test))
            return
        key = test_id(test)
        if outcomes.get(key, "passed") == "passed":
            outcomes[key] = outcome
            _stream(key, outcome)

    def made_elsewhere(test, caller):
        """Why a success for `test` reported by `caller` (a frame) is not one to count, or ''."""
        if caller.f_code is not run_code:
            return (f"its success was reported by {where(caller.f_code.co_filename)}:{caller.f_lineno}, not by "
                    "unittest's run of the test (a made-up report)")
        cls = type(test)
        if test._testMethodName in vars(test):
            return "its test method was replaced on the test's instance (a made-up test)"
        code = _code_of(getattr(cls, test._testMethodName, None))  # the test's own function's
        if code is not None and not untrusted(code.co_filename):
            if code.co_name != test._testMethodName and defined_as(code, code.co_name):
                return f"it ran {code.co_name} of {where(code.co_filename)} under its name (a made-up test)"
            return ""
        module = sys.modules.get(cls.__module__)
        found = module
        for part in cls.__qualname__.split("."):
            found = getattr(found, part, None)
        source = where(code.co_filename) if code is not None else "code of no file"
        if found is not cls:
            return (f"its test class is not the one its module defines, and its code comes from {source} "
                    "(a made-up test)")
        if _task_file(module, untrusted):
            return f"its test function comes from {source}, not from its class's module (a made-up test)"
        return ""  # a test of the agent's own, under its own name

    def defined_as(code, name):
        """Whether a task module, or one of its classes, holds the function of `code` under `name` (a test
        function under another test's name is a swap; one made by a loop in the test file is not)."""
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or not filename.startswith(tree) or untrusted(filename):
                continue
            holders = [module] + [value for value in list(vars(module).values()) if isinstance(value, type)]
            for holder in holders:
                for klass in getattr(holder, "__mro__", (holder,)):
                    if _code_of(vars(klass).get(name)) is code:
                        return True
        return False

    def detours(test):
        """What of the test's run (the methods unittest's run calls) comes from the agent's files although its
        class is the task's: a sign, not a verdict (the fix may be in that file)."""
        cls = type(test)
        if not _task_file(sys.modules.get(cls.__module__), untrusted):
            return []
        found = []
        for name in _RUN_METHODS:
            code = _code_of(getattr(cls, name, None))
            if code is not None and untrusted(code.co_filename):
                found.append(f"{name} from {where(code.co_filename)}")
        return found

    methods, tainted = [], {}  # unittest's classes' functions as the run starts; tests run after one changed

    class Recording:
        """Placed ahead of a run's result class: records each report before the runner's result sees it."""

        def startTest(self, test, _methods=methods, _tainted=tainted, _changed=_changed):
            changed = _changed(_methods)
            if changed and _is_test(test):
                _tainted[test_id(test)] = changed
            super().startTest(test)

        def addSuccess(self, test, _record=record, _flag=flag, _why=made_elsewhere, _detours=detours,
                       _frame=sys._getframe, _tainted=tainted, _changed=_changed, _methods=methods):
            changed = _tainted.get(test_id(test)) or _changed(_methods)
            why = (f"unittest's {', '.join(changed)} had been replaced while it ran (a made-up report)"
                   if changed else _why(test, _frame(1))) if _is_test(test) else ""
            detours = _detours(test) if _is_test(test) and not why else []
            if why:
                _flag(f"{test_id(test)}: {why}")
            elif detours:
                _flag(f"{test_id(test)}: its run went through code of the agent's files ({', '.join(detours)})")
            _record(test, "failed" if why else "passed")
            super().addSuccess(test)

        def addSubTest(self, test, subtest, err, _record=record):
            if err is not None:
                _record(test, "failed" if issubclass(err[0], test.failureException) else "error")
            super().addSubTest(test, subtest, err)

    def reporting(name, outcome):
        def report(self, test, *args, _record=record):
            _record(test, outcome)
            getattr(super(Recording, self), name)(test, *args)

        report.__name__ = name
        return report

    for name, outcome in _FAILURES.items():
        setattr(Recording, name, reporting(name, outcome))

    def run(self, test, _original=original, _recording=Recording, _collected=collected, _active=active):
        if _active:
            return _original(self, test)
        _collected += [test_id(case) for case in _cases(test) if _is_test(case)]
        self.resultclass = type("RecordingResult", (_recording, self.resultclass), {})
        if collect_only:
            return self._makeResult()
        _active.append(True)
        try:
            return _original(self, test)
        finally:
            _active.clear()

    unittest.runner.TextTestRunner.run = run
    methods += _methods()
    report = lambda: {"tests": outcomes, "collect_errors": collect_errors, "collected": collected}  # noqa: E731
    return report, (record, Recording.addSuccess)


def _code_of(function):
    """The code of a function through its decorators (None for anything else)."""
    for _ in range(8):
        function = getattr(function, "__wrapped__", function)
    return getattr(function, "__code__", None)


def _methods():
    """The functions (and descriptors) of every class of unittest's run modules, as they are now."""
    found = []
    for module in (unittest.case, unittest.result, unittest.runner, unittest.suite, unittest.loader):
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                found.append((value, {name: item for name, item in vars(value).items() if _is_code(item)}))
    return found


def _is_code(item):
    return callable(item) or isinstance(item, (staticmethod, classmethod, property))


def _changed(methods):
    """The `Class.name`s of `methods` (see _methods) replaced, removed or added since."""
    changed = []
    for cls, kept in methods:
        now = vars(cls)
        changed += [f"{cls.__qualname__}.{name}" for name, item in kept.items() if now.get(name) is not item]
        changed += [f"{cls.__qualname__}.{name}" for name, item in now.items() if name not in kept and _is_code(item)]
    return changed


def _task_file(module, untrusted):
    """Whether `module` was loaded from a file that is not the agent's."""
    filename = getattr(module, "__file__", None)
    return isinstance(filename, str) and not untrusted(filename)


def _cases(test):
    """The test cases of a suite, nested suites flattened."""
    if isinstance(test, unittest.TestSuite):
        for inner in test:
            yield from _cases(inner)
    else:
        yield test


def run_script(script, args):
    """Run `script` (a path) as `__main__` with `args` as its arguments; returns its exit code."""
    import runpy

    sys.argv = [script, *args]
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            return 1
        return code or 0
    return 0
