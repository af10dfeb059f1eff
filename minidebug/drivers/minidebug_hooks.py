"""The eval driver's check of pytest's hook machinery: which code pytest's hooks run, and how they are called.

Code under test can reach pytest's plugin manager through pytest's own objects, and from there decide what a
test's call does without touching the test: register a plugin whose wrapper of `pytest_pyfunc_call` swallows
the test's exception, one whose implementation returns before pytest's own calls the test, drop pytest's
implementation from a hook's list, or route every hook call through a function of its own. `HookCheck`, made as
pytest configures (before any code of the project is imported), takes the machinery's state then and judges it
before each test's call (the hooks that run a test, see `RUN_HOOKS`) and after the run (every hook):

- every implementation is a plain function (or a method of its plugin's class) named for the hook it
  implements, from a trusted file (pytest's, the venv's, the standard library's, the driver's) or from a
  `conftest.py` of the tree that was there before the run (the task's, or one the task hands to the agent);
  whatever its name, a file written during the run or found outside the tree is not trusted;
- no implementation present when the state was taken is gone;
- the hook relay holds pluggy's own hook callers, each calling through the manager's own function, and the
  manager's inner call (`_inner_hookexec`, what `add_hookcall_monitoring` replaces) is the one it had.
"""

import operator
import types

_FUNCTION, _METHOD, _MODULE = types.FunctionType, types.MethodType, types.ModuleType
RUN_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
             "pytest_pyfunc_call", "pytest_runtest_makereport", "pytest_runtest_logreport")
_vars = types.ModuleType.__dict__["__dict__"].__get__  # a module's namespace, never by its class's lookup


class HookCheck:
    """The state of one run's plugin manager, taken when made, and the checks of it."""

    def __init__(self, config, judge, harness, own, tree):
        """`judge(filename)`: the watch's (True: untrusted, False: trusted, None: generated code); `harness(
        filename)`: whether a file is a conftest.py of the tree that was there before the run; `own`: the
        driver's plugin objects (whose hooks are closures of the driver's); `tree`: the eval tree's folder."""
        manager = config.pluginmanager
        self._config, self._manager, self._relay = config, manager, manager.hook
        self._config_hook = vars(config).get("hook")  # the relay, or pytest 8's path-aware proxy of it
        self._judge, self._harness, self._own = judge, harness, tuple(own)
        self._tree = tree.rstrip("/") + "/"
        self._inner = vars(manager).get("_inner_hookexec")
        callers = vars(self._relay)
        sample = callers["pytest_runtest_call"]
        self._caller_type, self._impls = type(sample), type(sample).get_hookimpls
        self._impl_type = type(self._impls(sample)[0]) if self._impls(sample) else None
        self._hookexec = _function_of(getattr(sample, "_hookexec", None))
        self._before = {name: self._impls(caller) for name, caller in list(callers.items())
                        if type(caller) is self._caller_type}
        self._seen = {}  # hook name -> (its caller, its implementations) as last judged before a test's call
        self._calls_through = {}  # hook name -> its caller's `_hookexec` as last found to be the manager's own

    def before_call(self):
        """Findings about the hooks that run a test, changed since the last test (or since the state was
        taken); the state judged becomes the reference."""
        found = self._machinery(RUN_HOOKS)
        callers = vars(self._relay)
        for name in RUN_HOOKS:
            caller = callers.get(name)
            if type(caller) is not self._caller_type:
                continue  # said by _machinery
            impls = self._impls(caller)
            seen = self._seen.get(name)
            if seen is not None and seen[0] is caller and len(seen[1]) == len(impls) \
                    and all(map(operator.is_, seen[1], impls)):
                continue
            found += self._judged(name, caller, impls)
            self._seen[name] = (caller, impls)
        return found

    def after_run(self):
        """Findings about every hook, after the run."""
        callers = vars(self._relay)
        found = self._machinery(list(callers))
        for name, caller in list(callers.items()):
            if type(caller) is self._caller_type:
                found += self._judged(name, caller, self._impls(caller))
        return found

    def _machinery(self, names):
        found = []
        if vars(self._manager).get("_inner_hookexec") is not self._inner:
            found.append("pytest's hook calls are routed through other code (its plugin manager's inner call "
                         "was replaced)")
        if vars(self._config).get("hook") is not self._config_hook or vars(self._manager).get("hook") \
                is not self._relay:
            found.append("pytest's hook relay was replaced")
        callers = vars(self._relay)
        for name in names:
            caller = callers.get(name)
            if caller is None:
                if name in self._before:
                    found.append(f"pytest's hook {name} was removed")
            elif type(caller) is not self._caller_type:
                found.append(f"pytest's hook {name} is not a hook caller of pluggy's ({type(caller).__name__})")
            elif self._hookexec is not None:
                through = getattr(caller, "_hookexec", None)
                if through is not None and self._calls_through.get(name) is through:
                    continue  # the very bound method found right before (it can be neither rebound nor changed)
                if _function_of(through) is not self._hookexec or through.__self__ is not self._manager:
                    found.append(f"pytest's hook {name} calls its implementations through other code")
                else:
                    self._calls_through[name] = through
        return found

    def _judged(self, name, caller, impls):
        found = []
        for old in self._before.get(name, ()):
            if not any(_same(old, impl) for impl in impls):
                found.append(f"an implementation of pytest's hook {name} was taken out "
                             f"({self._where(getattr(old, 'function', None))})")
        for impl in impls:
            if any(impl is old for old in self._before.get(name, ())):
                continue
            why = self._impl_problem(name, impl)
            if why:
                found.append(why)
        return found

    def _impl_problem(self, name, impl):
        """Why an implementation of hook `name` is not trusted code's, or None."""
        if self._impl_type is not None and type(impl) is not self._impl_type:
            return f"pytest's hook {name} holds a {type(impl).__name__}, not one of pluggy's implementations"
        plugin, function = impl.plugin, impl.function
        if any(plugin is own for own in self._own):
            return None
        if type(function) is _METHOD:
            if function.__self__ is not plugin:
                return f"{self._where(function.__func__)}: implements the pytest hook {name} with a method of " \
                       "another object than its plugin"
            function = function.__func__
            if not any(_holds(_class_dict(klass), function) for klass in type(plugin).__mro__):
                return f"{self._where(function)}: implements the pytest hook {name} with a method its plugin's " \
                       "class does not define"
        if type(function) is not _FUNCTION:
            return f"a {type(function).__name__} implements the pytest hook {name} (not a function of a " \
                   "trusted file)"
        code = function.__code__
        if self._judge(code.co_filename) is not False and not self._harness(code.co_filename):
            return f"{self._where(function)}: implements the pytest hook {name}"
        opts = impl.opts if type(impl.opts) is dict else {}
        if code.co_name != name and opts.get("specname") != name:
            return f"{self._where(function)}: its {code.co_name} implements the pytest hook {name} (another " \
                   "function than the hook's)"
        if type(plugin) is _MODULE and not _holds(_vars(plugin), function):
            return f"{self._where(function)}: implements the pytest hook {name} for a module that does not hold it"
        return None

    def _where(self, function):
        """`file:line` of a function (its path relative to the tree if in it), or its type's name."""
        code = function.__code__ if type(function) is _FUNCTION else None
        if code is None:
            return repr(type(function).__name__)
        filename = code.co_filename
        return f"{filename[len(self._tree):] if filename.startswith(self._tree) else filename}:{code.co_firstlineno}"


def _same(first, second):
    return first is second


def _function_of(method):
    return method.__func__ if type(method) is _METHOD else None


_class_dict = type.__dict__["__dict__"].__get__


def _holds(namespace, function):
    """Whether a namespace binds `function` (as itself, or as a static or class method of a class)."""
    for value in list(namespace.values()):
        if type(value) in (staticmethod, classmethod):
            value = value.__func__
        if value is function:
            return True
    return False

