"""Writes into the namespaces of modules and classes the agent does not own, seen as they happen (Python 3.12+).

Python audits no write to a module's or a class's attribute, and a patch that code of the agent's makes and
undoes within a test (a self-restoring one: the patched function puts the original back when called) leaves
nothing for a check between tests or after the run. From Python 3.12 the interpreter calls a watcher on every
change of a watched dict (`PyDict_AddWatcher`); `Writes` watches the namespaces of the standard library's and
the venv's modules, of the classes they define (a class's own dict) and of the task's test modules, and
reports a write as it happens when
- the code that made it is untrusted (the agent's; generated code is judged by its caller), or
- it binds a function or class of the agent's, whoever bound it, or
- a built-in called by a finalizer or as a thread's target made it (for whoever armed it), or
- trusted code made it for untrusted code further down the stack (`mock.patch` called by the agent's code),
  except at the hooks the standard library documents as replaceable.
A module writing its own namespace (its globals) is never a finding, nor what a module does while it is
imported. On Python 3.8 to 3.11 `Writes.start` does nothing (see minidebug_pristine for what is still seen).
"""

import sys
import types

_ADDED, _MODIFIED, _DELETED = 0, 1, 2  # PyDict_WatchEvent
AVAILABLE = sys.version_info >= (3, 12)
# what the standard library caches on any class (copyreg, for copy), and the registry `warnings` keeps in the
# namespace of the code that warns (of its caller's caller, with stacklevel=2)
_CACHES = frozenset({"__slotnames__", "__warningregistry__"})


def deferred_calls():
    """The code of the standard library's that calls what someone armed earlier, with no frame of theirs on the
    stack: a `weakref.finalize` firing, a thread's or a timer's target. A built-in it calls directly (setattr,
    sys.settrace) acts for whoever armed it."""
    import threading
    import weakref

    return frozenset({weakref.finalize.__call__.__code__, threading.Thread.run.__code__,
                      threading.Timer.run.__code__})


def import_system_code():
    """{id(code): code} of every function of the import system's own (`_frozen_importlib` and its external
    part, nested code included), taken before any code of the project runs: what it does as it imports a
    module is that module's, not its caller's. Known by identity, never by its file's name, which any
    `compile()` can give (`"<frozen importlib._bootstrap>"`)."""
    found, pending = {}, []
    for name in ("_frozen_importlib", "_frozen_importlib_external"):
        module = sys.modules.get(name)
        values = list(types.ModuleType.__dict__["__dict__"].__get__(module).values()) if module is not None else []
        for value in values:
            items = list(type.__dict__["__dict__"].__get__(value).values()) if isinstance(value, type) else [value]
            for item in items:
                item = getattr(item, "__func__", item) if isinstance(item, (staticmethod, classmethod)) else item
                if isinstance(item, property):
                    pending.extend(function.__code__ for function in (item.fget, item.fset, item.fdel)
                                   if isinstance(function, types.FunctionType))
                elif isinstance(item, types.FunctionType):
                    pending.append(item.__code__)
    while pending:
        code = pending.pop()
        if id(code) not in found:
            found[id(code)] = code
            pending.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return found


class Writes:
    """The watchers of one interpreter: made and fed the modules before a run (in a warm interpreter, once,
    before it forks), then `activate`d for the run. Until then every write is let be."""

    def __init__(self, hooks):
        """`hooks`: (module, attribute) pairs any code may set (see minidebug_pristine.HOOKS)."""
        self._hooks = hooks
        self._report = None
        self._names = {}  # id(namespace) -> (what it is the namespace of: "json", "json.JSONDecoder"; the id
        #                    of the module namespace whose own code may write it)
        self._kept = []  # the namespaces watched, kept alive while their ids name them
        self._watcher = None

    def start(self):
        """Add the watcher (no-op before Python 3.12)."""
        if not AVAILABLE:
            return
        import ctypes
        import gc

        api = ctypes.pythonapi
        on_dict = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        api.PyDict_AddWatcher.argtypes, api.PyDict_AddWatcher.restype = [on_dict], ctypes.c_int
        api.PyDict_Watch.argtypes, api.PyDict_Watch.restype = [ctypes.c_int, ctypes.py_object], ctypes.c_int
        api.PyDict_ClearWatcher.argtypes = [ctypes.c_int]
        self._callback = on_dict(self._written)  # kept: the interpreter holds a pointer to it
        watcher = api.PyDict_AddWatcher(self._callback)
        self._watcher = watcher if watcher >= 0 else None
        self._api, self._object_at = api, lambda address: ctypes.cast(address, ctypes.py_object).value
        self._getframe, self._busy, self._referents = sys._getframe, [], gc.get_referents

    def activate(self, report, judge, agent_code, deferred=frozenset(), importing=None):
        """Judge every write from now on. `report(filename, line, what)` records a finding; `judge(filename)`
        is the watch's (True: untrusted, False: trusted, None: generated); `agent_code(value)` says whether a
        value is a function or class of the agent's; `deferred`: the code objects that call what someone
        armed earlier (a finalizer, a thread's target: see `deferred_calls`), whose writes are
        reported as such; `importing`: the import system's code (see `import_system_code`)."""
        self._judge, self._agent_code, self._deferred, self._report = judge, agent_code, deferred, report
        self._importing = import_system_code() if importing is None else importing

    def stop(self):
        """Remove the watcher (before the interpreter's own teardown writes to every module's namespace)."""
        if self._watcher is not None:
            self._report = None
            self._api.PyDict_ClearWatcher(self._watcher)
            self._watcher = None

    def watch_module(self, name, module):
        """Watch module `name`'s namespace and those of the classes it defines."""
        if self._watcher is None:
            return
        namespace = types.ModuleType.__dict__["__dict__"].__get__(module)
        if id(namespace) in self._names:
            return
        self._watch(namespace, name, id(namespace))
        for key, value in list(namespace.items()):
            if issubclass(type(value), type) and type.__dict__["__dict__"].__get__(value).get("__module__") == name:
                for inner in self._referents(type.__dict__["__dict__"].__get__(value)):  # the class's own dict
                    if type(inner) is dict and id(inner) not in self._names:
                        self._watch(inner, f"{name}.{key}", id(namespace))

    def _watch(self, namespace, name, own):
        self._names[id(namespace)] = (name, own)
        self._kept.append(namespace)
        self._api.PyDict_Watch(self._watcher, namespace)

    def _written(self, event, namespace, key, value, _writes=(_ADDED, _MODIFIED, _DELETED)):
        if self._report is None or event not in _writes or self._busy:
            return 0
        self._busy.append(1)
        try:
            entry = self._names.get(namespace)
            frame = self._getframe(1)
            if entry is not None and id(frame.f_globals) != entry[1]:  # not a module's own code (most writes)
                self._judge_write(frame, entry[0], self._object_at(key), self._object_at(value) if value else None)
        except Exception:  # a finding is never worth breaking the program under test
            pass
        finally:
            self._busy.clear()
        return 0

    def _judge_write(self, frame, name, key, new):
        """Report the write of `new` to `name`'s `key`, made in `frame`, if it is one of the agent's."""
        what = f"{name}.{key}"
        if (name.split(".", 1)[0], key) in self._hooks or key in _CACHES:
            return  # documented as replaceable, by whoever: handed the module's own data
        writer = frame
        while writer is not None and self._judge(writer.f_code.co_filename) is None:
            if self._importing.get(id(writer.f_code)) is writer.f_code:
                return  # the import system binding a module it imported (a submodule on its package)
            writer = writer.f_back  # other generated code: its caller's
        if writer is not None and self._judge(writer.f_code.co_filename):
            self._report(writer.f_code.co_filename, writer.f_lineno, f"sets {what}")
            return
        if new is not None and self._agent_code(new):
            self._report("", 0, f"{what} was set to code of the agent's")
            return
        if writer is not None and writer.f_code in self._deferred:
            armed_by = writer.f_code.co_qualname
            self._report(writer.f_code.co_filename, writer.f_lineno, f"has {what} set (by {armed_by}, for whoever "
                         "armed it)")
            return
        while frame is not None:
            filename = frame.f_code.co_filename
            if self._importing.get(id(frame.f_code)) is frame.f_code:
                return  # what a module does as it is imported is its own
            if self._judge(filename):
                through = writer.f_code.co_name if writer is not None else "generated code"
                self._report(filename, frame.f_lineno, f"has {what} set (through {through})")
                return
            frame = frame.f_back
