"""Writes into the namespaces of modules and classes the agent does not own, seen as they happen (Python 3.12+).

Python audits no write to a module's or a class's attribute, and a patch that code of the agent's makes and
undoes within a test (a self-restoring one: the patched function puts the original back when called) leaves
nothing for a check between tests or after the run. From Python 3.12 the interpreter calls watchers on every
change of a watched dict (`PyDict_AddWatcher`) and of a watched class (`PyType_AddWatcher`); `Writes` watches
the namespaces of the standard library's and the venv's modules, of the classes they define and of the task's
test modules, and reports a write as it happens when
- the code that made it is untrusted (the agent's; generated code is judged by its caller), or
- trusted code made it for untrusted code further down the stack (`mock.patch` called by the agent's code),
  except at the hooks the standard library documents as replaceable, or
- it binds a function or class of the agent's, whoever bound it.
A module writing its own namespace (its globals) is never a finding, nor what a module does while it is
imported. On Python 3.8 to 3.11 `Writes.start` does nothing (see minidebug_pristine for what is still seen).
"""

import sys
import types

_ADDED, _MODIFIED, _DELETED = 0, 1, 2  # PyDict_WatchEvent
AVAILABLE = sys.version_info >= (3, 12)


class Writes:
    """The watchers of one run. `report(filename, line, what)` records a finding; `judge(filename)` is the
    watch's (True: untrusted, False: trusted, None: generated); `agent_code(value)` says whether a value is a
    function or class of the agent's; `hooks` are (module, attribute) pairs any code may set."""

    def __init__(self, report, judge, agent_code, hooks):
        self._report, self._judge, self._agent_code, self._hooks = report, judge, agent_code, hooks
        self._names = {}  # id(namespace) -> what it is the namespace of ("json", "json.JSONDecoder")
        self._kept = []  # the namespaces and classes watched, kept alive while their ids name them
        self._dict_watcher = self._type_watcher = None

    def start(self):
        """Add the watchers (no-op before Python 3.12)."""
        if not AVAILABLE:
            return
        import ctypes

        api = ctypes.pythonapi
        on_dict = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        on_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
        api.PyDict_AddWatcher.argtypes, api.PyDict_AddWatcher.restype = [on_dict], ctypes.c_int
        api.PyDict_Watch.argtypes, api.PyDict_Watch.restype = [ctypes.c_int, ctypes.py_object], ctypes.c_int
        api.PyType_AddWatcher.argtypes, api.PyType_AddWatcher.restype = [on_type], ctypes.c_int
        api.PyType_Watch.argtypes, api.PyType_Watch.restype = [ctypes.c_int, ctypes.py_object], ctypes.c_int
        self._callbacks = (on_dict(self._dict_written), on_type(self._type_written))  # kept: C holds pointers
        self._dict_watcher = api.PyDict_AddWatcher(self._callbacks[0])
        self._type_watcher = api.PyType_AddWatcher(self._callbacks[1])
        self._api, self._object_at = api, lambda address: ctypes.cast(address, ctypes.py_object).value
        self._getframe, self._busy = sys._getframe, []

    def watch_module(self, name, module):
        """Watch module `name`'s namespace and those of the classes it defines."""
        if self._dict_watcher is None or self._dict_watcher < 0:
            return
        namespace = types.ModuleType.__dict__["__dict__"].__get__(module)
        if id(namespace) in self._names:
            return
        self._names[id(namespace)] = name
        self._kept.append(namespace)
        self._api.PyDict_Watch(self._dict_watcher, namespace)
        if self._type_watcher is None or self._type_watcher < 0:
            return
        for key, value in list(namespace.items()):
            if issubclass(type(value), type) and type.__dict__["__dict__"].__get__(value).get("__module__") == name \
                    and id(value) not in self._names:
                self._names[id(value)] = f"{name}.{key}"
                self._kept.append(value)
                self._api.PyType_Watch(self._type_watcher, value)

    def _dict_written(self, event, namespace, key, value):
        if event not in (_ADDED, _MODIFIED, _DELETED) or self._busy:
            return 0
        self._busy.append(1)
        try:
            name = self._names.get(namespace)
            if name is not None:
                key = self._object_at(key)
                new = self._object_at(value) if value else None
                self._judge_write(self._getframe(1), name, namespace, key, new)
        except Exception:  # a finding is never worth breaking the program under test
            pass
        finally:
            self._busy.clear()
        return 0

    def _type_written(self, klass):
        if self._busy:
            return 0
        self._busy.append(1)
        try:
            name = self._names.get(klass)
            if name is not None:
                home = sys.modules.get(name.rsplit(".", 1)[0])
                own = types.ModuleType.__dict__["__dict__"].__get__(home) if home is not None else None
                self._judge_write(self._getframe(1), name, id(own), None, None)
        except Exception:
            pass
        finally:
            self._busy.clear()
        return 0

    def _judge_write(self, frame, name, own, key, new):
        """Report the write to `name`'s `key` (None: an attribute of a class), made in `frame`, if it is one
        of the agent's. `own`: the id of the namespace whose own code may write it."""
        what = f"{name}.{key}" if key is not None else f"the class {name}"
        if id(frame.f_globals) == own:
            return  # a module's own code
        writer = frame
        while writer is not None and self._judge(writer.f_code.co_filename) is None:
            if writer.f_code.co_filename.startswith("<frozen importlib"):
                return  # the import system binding a module it imported (a submodule on its package)
            writer = writer.f_back  # other generated code: its caller's
        if writer is not None and self._judge(writer.f_code.co_filename):
            self._report(writer.f_code.co_filename, writer.f_lineno, f"sets {what}")
            return
        if new is not None and self._agent_code(new):
            self._report("", 0, f"{what} was set to code of the agent's")
            return
        if (name.split(".", 1)[0], key) in self._hooks:
            return
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith("<frozen importlib"):
                return  # what a module does as it is imported is its own
            if self._judge(filename):
                through = writer.f_code.co_name if writer is not None else "generated code"
                self._report(filename, frame.f_lineno, f"has {what} set (through {through})")
                return
            frame = frame.f_back
