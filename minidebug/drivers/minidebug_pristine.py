"""What the standard library's and the venv's modules held before code of the agent's could reach them, and
which later values in them only a patch puts there.

`Pristine` keeps a copy of each such module's namespace as its import completes (importlib's `_load_unlocked`
is wrapped for the run), so that a module first imported by the project (or by the agent's own code, which
then patches it) is compared with what it was, not with nothing. The warm interpreter's modules are copied
by the watch's snapshot (see minidebug_watch).

`replaced(...)` judges one attribute of such a module or class whose value is no longer the one it had: a
patch, when a definition there (a function, class or other callable) now holds
- a mock (`unittest.mock`'s), a built-in function of another module or a `functools.partial`, whoever bound
  it (trusted code binds none of these over a definition of the venv's or the standard library's; a test's
  own `monkeypatch` is undone before the after-run check);
- in a module of the standard library, any callable that is not the module's own or the task's project's
  (a function of another module, such as `max` or `ast.literal_eval`), except at the hooks the standard
  library documents as replaceable (`warnings.showwarning`, ...);
or, in a module of the standard library, when a public number or string constant (`math.pi`) changed.
A function or class of the agent's is judged by `agent_values` (see minidebug_modules) before this.
"""

import os
import sys
import types

_PARTIAL = None
HOOKS = frozenset({  # (module, attribute) pairs the standard library documents as replaceable
    ("warnings", "showwarning"), ("warnings", "formatwarning"), ("warnings", "_showwarnmsg_impl"),
    ("warnings", "_showwarnmsg"), ("warnings", "filters"), ("threading", "excepthook"),
    ("threading", "_profile_hook"), ("threading", "_trace_hook"), ("builtins", "_"), ("site", "quit"),
    ("logging", "_loggerClass"), ("logging", "_logRecordFactory"),  # logging.setLoggerClass, setLogRecordFactory
    ("sys", "stdout"), ("sys", "stderr"),  # contextlib.redirect_stdout and redirect_stderr
    ("tempfile", "tempdir"),
    ("time", "tzname"), ("time", "timezone"), ("time", "altzone"), ("time", "daylight"),  # time.tzset
})
_CONSTANTS = (int, float, complex, str, bytes)
_STDLIB = os.path.dirname(os.__file__) + "/"
WRAPPER_NAME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<importlib's _load_unlocked, wrapped>")
_VENV_DIRS = ("site-packages/", "dist-packages/")


def is_stdlib(module):
    """Whether `module` (a module object) is of the standard library: built in, or from its folder but not
    from a venv's packages there."""
    filename = types.ModuleType.__dict__["__dict__"].__get__(module).get("__file__")
    if filename is None:
        return True
    return type(filename) is str and filename.startswith(_STDLIB) and not any(d in filename for d in _VENV_DIRS)


class Pristine:
    """Copies of the namespaces of the modules the agent does not own, taken as each import completes."""

    def __init__(self, outside, imported=None):
        """`outside(module)`: whether a module is the standard library's or the venv's (not the tree's);
        `imported(name, module)`, if given, is called for each such module as its import completes."""
        self.copies = {}
        self._outside, self._imported = outside, imported
        self._bootstrap = sys.modules.get("_frozen_importlib")
        self._real = getattr(self._bootstrap, "_load_unlocked", None)

    def start(self):
        """Wrap importlib's loading of a module found by a spec (every import goes through it)."""
        real, copies, outside, imported, module_dict = self._real, self.copies, self._outside, self._imported, \
            types.ModuleType.__dict__["__dict__"].__get__
        if real is None:
            return

        def _load_unlocked(spec):
            __tracebackhide__ = True  # in a test's failure as pytest shows it (see WRAPPER_NAME for the others)
            module = real(spec)
            try:
                if issubclass(type(module), types.ModuleType) and outside(module):
                    copies.setdefault(spec.name, dict(module_dict(module)))
                    if imported is not None:
                        imported(spec.name, module)
            except Exception:  # a copy is never worth breaking an import
                pass
            return module

        # Named in the driver's folder (trusted code) but as generated code ("<...>"), which pytest's filter of
        # the tracebacks of a module or conftest that cannot be imported hides as it hides importlib's own
        # frames: a traceback through an import, as pytest shows it, has no frame of the driver's (pytest's own
        # test of a conftest's import error compares every line).
        _load_unlocked.__code__ = _load_unlocked.__code__.replace(co_filename=WRAPPER_NAME)
        self._bootstrap._load_unlocked = _load_unlocked
        self._wrapper = _load_unlocked

    def intact(self):
        """Whether the wrapper is still where `start` put it (code that put it back blinds the copies)."""
        return self._real is None or getattr(self._bootstrap, "_load_unlocked", None) is self._wrapper


def replaced(module_name, key, old, new, stdlib, own_code):
    """Why `new`, where `old` was (`module_name.key`, a module's or a class's attribute), is a patch (what
    happened to the attribute, as "was replaced by a mock (MagicMock)"); None
    when it may be trusted code's. `stdlib`: the namespace is the standard library's; `own_code(value)`:
    whether a callable is the module's own or the task's project's (trusted code of the tree)."""
    if not callable(old):
        if stdlib and type(old) in _CONSTANTS and not key.startswith("_") and \
                (type(new) is not type(old) or new != old):
            return "was changed (a constant of the standard library)"
        return None
    kind = type(new)
    if kind.__module__ in ("unittest.mock", "mock") or kind.__name__.endswith("Mock"):
        return f"was replaced by a mock ({kind.__name__})"
    top = module_name.split(".", 1)[0]
    if kind is types.BuiltinFunctionType and str(getattr(new, "__module__", None)).split(".", 1)[0] != top:
        return f"was replaced by the built-in function {getattr(new, '__name__', '?')}"
    if kind is _partial():
        return "was replaced by a functools.partial"
    if stdlib and (top, key) not in HOOKS and callable(new) and not own_code(new):
        return f"was replaced by {getattr(new, '__qualname__', kind.__name__)} (not the module's own)"
    return None


def _partial():
    global _PARTIAL
    if _PARTIAL is None:
        import functools

        _PARTIAL = functools.partial
    return _PARTIAL


def poisoned_caches():
    """Entries of the standard library's caches that are not what their key makes: `re`'s compiled patterns
    (a pattern's text mapped to another's compiled form makes every match of it succeed)."""
    found = []
    module = sys.modules.get("re")
    for name in ("_cache", "_cache2"):
        cache = (types.ModuleType.__dict__["__dict__"].__get__(module).get(name)
                 if issubclass(type(module), types.ModuleType) else None)
        if type(cache) is not dict:
            continue
        for key, value in list(cache.items()):
            if type(key) is tuple and len(key) >= 3 and \
                    (type(value).__name__ != "Pattern" or value.pattern != key[1]):
                found.append(f"re.{name} holds another pattern for {str(key[1])[:60]!r}")
    return found[:5]
