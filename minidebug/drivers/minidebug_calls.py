"""The eval driver's pytest plugin for each test's call: what is called is the task's test, and it is called.

Around each test's call (`pytest_runtest_call`, outermost but for the recorder's), before it: the modules
the agent does not own and the import system are as trusted code left them since the last test (see
minidebug_modules; the watch checks once more after the run); at the first test of each file or class,
the classes pytest runs the item through (`type(item).__mro__`: `Function.runtest`, its `obj`, ...) hold no
code of the agent's; and what pytest is about to call is the task's test as its file defines it (see
minidebug_identity). Around the call of the function itself (`pytest_pyfunc_call`, where pytest's own
implementation calls it), the same identity is checked again (unless it is the very object just checked)
and whether it returned normally is noted, by the call itself: pytest's own implementation calls, in the test
function's place, a stand-in of the driver's that calls it (a coroutine function, which a plugin runs its
own way, excepted). Both wrappers learn a call's exception as pluggy throws it into them (`wrapper=True`,
pluggy >= 1.1), never from pluggy's result object; with an older pluggy they can only read it there (see
`old_style`). What pluggy's dispatch passes on (whose classes project code can patch and put back within one
call on Python <= 3.11) therefore cannot hide that the function raised: the two disagreeing is a finding.
After the call: a plain test function (not a unittest case, which unittest calls) that was never called that
way, or that raised while the call phase did not, counts as a failure, and so does any check above that
fails, and so does a write to the test module's namespace while the test ran where its file declares no
`global` (project code that plants `sum` there for the test's own reads and takes it back, say; the registry
`warnings` keeps there excepted; Python < 3.12, whose dict watchers see each write anyway); each is a finding.
"""

import operator
import types

from minidebug_modules import _is, class_namespace as _class_dict

_mro = type.__dict__["__mro__"].__get__
_WARNINGS_OWN = {"__warningregistry__"}  # what `warnings` writes into the namespace of the code that warns
_FUNCTION, _METHOD = types.FunctionType, types.MethodType
_NAMES = ("__name__", "__qualname__", "__module__", "__doc__")
_ASYNC = 0x80 | 0x100 | 0x200  # CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR: run by a plugin


class NotTheTasksTest(Exception):
    """What pytest ran for a counted test is not the task's test, called as its file defines it."""


class _Checks:
    """The checks around each test's call, and what they keep between tests. Code under test reaches the
    plugin object through pytest, but this object only through the default values of its hooks (reading
    them is an audited event, which the watch reports): a closure's cells would be open to it unaudited."""

    def __init__(self, genuine, state, report, function_type, path_of, agents, hooks, agent_files=frozenset()):
        self.genuine, self.state, self.report, self.function_type = genuine, state, report, function_type
        self.path_of, self.agents, self.hooks, self.agent_files = path_of, agents, hooks, agent_files
        self.called, self.classes = {}, {}  # id(item) -> whether its function returned normally
        self.checked = []  # the item whose call runs now, and what pytest was to call for it, as checked
        self.last = [None, None]  # the class and parent of the item whose classes were last checked
        self.calling = []  # the item whose function runs now, and that function
        self.called_once = False  # whether a test's call was checked already
        self.call = _recording_call(self)
        self.changed_classes(function_type, "")  # pytest's test function items, as before the project is imported

    def problem(self, item, path=None):
        if not isinstance(item, self.function_type):
            return None
        path = self.path_of(item) if path is None else path
        if self.genuine.real(path) in self.agent_files:
            return None  # a test file of the agent's own: its code is the project's, and no test of it counts
        return self.genuine.problem(item, item.nodeid, path)

    def changed_classes(self, item_class, nodeid):
        """The classes of `item_class` (its bases included) given an attribute of the agent's code since last
        seen here (pytest sets some itself as it configures: `Node.fspath`)."""
        found, classes, is_ = [], self.classes, operator.is_
        # `or`: __mro__ is None for a static type not readied yet (unicodedata.UCD before 3.10)
        for klass in _mro(item_class) or (item_class,):
            namespace = _class_dict(klass)
            entry = classes.get(id(klass))
            if entry is not None and entry[0] is klass and len(entry[1]) == len(namespace) \
                    and all(map(is_, entry[2], map(namespace.get, entry[1]))):
                continue
            before = dict(zip(entry[1], entry[2])) if entry is not None and entry[0] is klass else namespace
            if any(before.get(key, before) is not value and self.agents(value)
                   for key, value in list(namespace.items())):
                found.append(f"pytest's class {klass.__qualname__} was changed: {nodeid} may not run as written")
            classes[id(klass)] = (klass, tuple(namespace), tuple(namespace.values()))
        return found

    def runtest_call(self, item):
        __tracebackhide__ = True  # the failure shows what was refused, not this plugin's code
        genuine, report, function_type = self.genuine, self.report, self.function_type
        findings = self.state.changes(signals=not self.called_once)  # after each call they are read anyway
        self.called_once = True
        if self.hooks:
            findings += self.hooks[0].before_call()
        if type(item) is not self.last[0] or item.parent is not self.last[1]:  # a new class or file of tests
            findings += self.changed_classes(type(item), item.nodeid)
            self.last[:] = [type(item), item.parent]
        path = self.path_of(item) if isinstance(item, function_type) else None  # read once a test
        why = self.problem(item, path)
        if why:
            findings.append(f"{item.nodeid}: {why}")
        for finding in findings:
            report(finding)
        if why:
            raise NotTheTasksTest(f"minidebug: {item.nodeid} is not run: {why}")
        self.called.pop(id(item), None)
        self.checked[:] = [item, getattr(item, "obj", None)]
        version = genuine.namespace_mark(path) if path is not None else None
        raised = result = None
        try:
            result = yield
        except BaseException as exc:  # thrown in by pluggy itself (never read from its result object)
            raised = exc
        self.checked[:] = []
        why = self._after_call(item, path, version, raised)
        if why:
            raise NotTheTasksTest(f"minidebug: {why}")
        if raised is not None:
            raise raised
        return result

    def _after_call(self, item, path, version, raised):
        """Why the call of `item` (of file `path`) that just ended (raising `raised`, or not) does not count,
        reported; else None."""
        genuine, report = self.genuine, self.report
        if version is not None and genuine.namespace_version(path) != version \
                and not genuine.writes_its_globals(path) and genuine.written_names(path) - _WARNINGS_OWN:
            why = f"{item.nodeid}: its module's namespace was written while it ran (by code other than its own)"
            report(why)
            return why
        for finding in self.state.frame_hooks():  # one set while the test ran (a trace function rewrites its frames)
            report(f"{item.nodeid}: {finding}")
        returned = self.called.pop(id(item), None)
        if not isinstance(item, self.function_type) or type(item).__name__ == "TestCaseFunction":
            return None
        if returned is None:
            why = f"{item.nodeid}: its function was never called by pytest's own call of it"
        elif returned is False and raised is None:
            why = f"{item.nodeid}: its function raised, yet its call did not"
        else:
            return None
        report(why)
        return why

    def pyfunc_call(self, pyfuncitem):
        __tracebackhide__ = True
        checked, function = self.checked, pyfuncitem.obj  # read once: what is checked is what is called
        same = checked and checked[0] is pyfuncitem and checked[1] is function  # as just checked
        why = None if same else self.problem(pyfuncitem)
        if not why and not same and pyfuncitem.obj is not function:
            why = "what it calls changed while it was checked"
        if why:
            self.report(f"{pyfuncitem.nodeid}: {why}")
            raise NotTheTasksTest(f"minidebug: {pyfuncitem.nodeid} is not run: {why}")
        called = self.called
        plain = function.__func__ if _is(function, _METHOD) else function
        swapped = _is(plain, _FUNCTION) and not plain.__code__.co_flags & _ASYNC
        if swapped:
            self.calling[:] = [pyfuncitem, function]
            call = self.call  # pytest's own implementation calls the function through it
            for name in _NAMES:  # what a test reading `request.function` sees of it
                setattr(call, name, getattr(plain, name))
            call.__wrapped__ = function
            pyfuncitem.obj = call
        try:
            result = yield
        except BaseException:
            if not swapped:  # a coroutine function, which a plugin (pytest-asyncio) runs its own way
                called[id(pyfuncitem)] = False
            raise
        finally:
            if swapped:
                self.calling[:] = []
                pyfuncitem.obj = function
        if not swapped:
            called[id(pyfuncitem)] = called.get(id(pyfuncitem), True)
        return result


def _recording_call(checks):
    """What pytest calls for a test function in its place: the test's own function, called here, so that
    whether it returned is known from the call itself, not from what pytest's hooks (whose classes project
    code can patch and put back within the call) pass on. It holds `checks` as a default value (audited)."""

    def call(*args, _minidebug_checks=checks, **kwargs):
        __tracebackhide__ = True
        item, function = _minidebug_checks.calling
        _minidebug_checks.called[id(item)] = False
        result = function(*args, **kwargs)
        _minidebug_checks.called[id(item)] = True
        return result

    return call


def new_style(pytest):
    """Whether pluggy throws a wrapped call's exception into a hook wrapper (`wrapper=True`, pluggy >= 1.1)."""
    import inspect

    return "wrapper" in inspect.signature(pytest.hookimpl).parameters


def old_style(body):
    """Runs `body`, a wrapper written for `wrapper=True` (`result = yield` raises what the call raised; what it
    returns is the result), as an old-style hook wrapper, for pluggy < 1.1: there the exception can only be
    read from pluggy's result object."""
    __tracebackhide__ = True
    next(body)
    outcome = yield
    excinfo = outcome.excinfo
    try:
        if excinfo is None:
            body.send(outcome.get_result())
        else:
            body.throw(excinfo[1])
    except StopIteration as stop:
        if excinfo is None:
            outcome.force_result(stop.value)
    except BaseException as exc:
        if excinfo is None or exc is not excinfo[1]:
            raise  # the call's outcome becomes this error (pluggy < 1.1 lets a wrapper's teardown raise)


def plugin(genuine, state, report, function_type, path_of, agents, hooks, agent_files=frozenset()):
    """The plugin object, and its hook functions (whose default values the watch guards: see `_Checks`).
    `genuine`: minidebug_identity.Genuine; `state`: minidebug_modules.ModuleState; `report(finding)`;
    `function_type`: pytest's Function item class; `path_of(item)`: an item's file; `agents(value)`: whether a
    value is code of the agent's (see minidebug_modules.agent_code); `hooks`: a list that holds a
    minidebug_hooks.HookCheck once pytest has configured; `agent_files`: the real paths of the files the agent
    changed or made (a test file among them is the agent's own, whose tests are not the task's)."""
    import pytest

    checks = _Checks(genuine, state, report, function_type, path_of, agents, hooks, agent_files)

    if new_style(pytest):
        class Calls:
            @pytest.hookimpl(wrapper=True, tryfirst=True)
            def pytest_runtest_call(self, item, _checks=checks):
                __tracebackhide__ = True
                return (yield from _checks.runtest_call(item))

            @pytest.hookimpl(wrapper=True, tryfirst=True)
            def pytest_pyfunc_call(self, pyfuncitem, _checks=checks):
                __tracebackhide__ = True
                return (yield from _checks.pyfunc_call(pyfuncitem))
    else:
        class Calls:
            @pytest.hookimpl(hookwrapper=True, tryfirst=True)
            def pytest_runtest_call(self, item, _checks=checks):
                __tracebackhide__ = True
                yield from old_style(_checks.runtest_call(item))

            @pytest.hookimpl(hookwrapper=True, tryfirst=True)
            def pytest_pyfunc_call(self, pyfuncitem, _checks=checks):
                __tracebackhide__ = True
                yield from old_style(_checks.pyfunc_call(pyfuncitem))

    return Calls(), (Calls.pytest_runtest_call, Calls.pytest_pyfunc_call, checks.call)
