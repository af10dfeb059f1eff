"""Watches an eval's pytest run for code of the agent's that reaches into the test runner (in-memory forgery).

minidebug_eval imports this before any folder of the project is on sys.path. Each finding is a line
`file:line: what`, sent to the host at once over the eval's socket, so code that later forges or kills
the report cannot take it back. Three checks:

- an audit hook (`sys.addaudithook`; it cannot be removed) sees frame walking (`sys._getframe`, a
  traceback's or generator's frame), garbage-collector walks, trace and profile functions, ctypes, code
  objects built or unmarshalled at run time, bytecode files written during the run, special attributes
  (`__class__`, `__bases__`, ...: Python audits no others) of classes of pytest, pluggy, the driver or a test
  module set, a function's code replaced, opens of the report socket or of process memory, and reads of the
  default values of the driver's report functions (where it keeps its report channel), when code from an
  untrusted file caused them; in a run that reads bytecode (pytest's own repository), it also makes every open
  of a bytecode file of the tree, the interpreter, the venv or the driver's folder fail;
- pytest's hook machinery (see minidebug_hooks): implementations of untrusted code (a conftest.py counts only
  if it was in the tree before the run), implementations taken out, hook calls routed elsewhere;
- after the run, the module and class attributes of pytest, pluggy, builtins and the driver compared with
  those they had before the project was imported (a value replaced, a class attribute added), and the
  agent's functions and classes looked for in every module of the standard library and the venv, and in the
  attributes of the objects those modules hold (see minidebug_modules.planted_in_objects).

The audit hook also notes the namespace each file of the tree runs in (see minidebug_identity), and the
watch's pytest plugins check each test's call (see minidebug_calls) and the modules the agent does not own
(see minidebug_modules).

A file is untrusted when the agent changed or added it, when it was written during the run, or when it lies
outside the eval tree, the interpreter and the venv. Generated code (`<string>`, `<frozen ...>`) is judged by
the code that called it; a file name given to `compile()` or to a code object by untrusted code is untrusted
from then on. Every function and value the hook uses is bound when it is installed, so code under test that
patches a module (os, builtins, this one) cannot blind it.
"""

import os
import sys
import types

from minidebug_identity import Genuine, namespace_of_exec
from minidebug_pristine import HOOKS, Pristine, poisoned_caches
from minidebug_writes import Writes, deferred_calls, import_system_code
from minidebug_modules import (RAW_MEMORY, ModuleState, agent_code, agent_values, class_file, class_namespace,
                               classes_in, note_version, objects_in, planted_in_objects, protected_names, quiet,
                               raw_memory, unwrapped)

# event -> (how the cause is found, what it means). "stack": any untrusted frame on the stack caused it;
# "caller": the code that made the call did (inspect and traceback helpers, and generated code, looked through).
_EVENTS = {
    "sys._getframe": ("caller", "walks the stack (sys._getframe)"),
    "sys._current_frames": ("stack", "reads every thread's frame (sys._current_frames)"),
    "object.__getattr__": ("caller", "reads a frame ({name})"),
    "gc.get_objects": ("stack", "lists live objects through the garbage collector (gc.get_objects)"),
    "gc.get_referrers": ("stack", "walks object references (gc.get_referrers)"),
    "gc.get_referents": ("stack", "walks object references (gc.get_referents)"),
    "sys.settrace": ("stack", "installs a trace function (sys.settrace)"),
    "sys.setprofile": ("stack", "installs a profile function (sys.setprofile)"),
    "sys._settraceallthreads": ("stack", "installs a trace function (sys._settraceallthreads)"),
    "sys._setprofileallthreads": ("stack", "installs a profile function (sys._setprofileallthreads)"),
    "code.__new__": ("caller", "builds a code object at run time"),
    "marshal.loads": ("caller", "loads bytecode (marshal.loads)"),
    "marshal.load": ("caller", "loads bytecode (marshal.load)"),
    "object.__setattr__": ("stack", "sets {name} on {target}"),
    "object.__delattr__": ("stack", "deletes {name} from {target}"),
    "open": ("stack", "opens {name}"),
    "os.symlink": ("stack", "links to {name} (process memory or descriptors)"),
    "sys.addaudithook": ("stack", "adds an audit hook (sys.addaudithook), which is handed the frames and objects "
                                  "of every audited event"),
    "compile": ("taint", ""),
}
_FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back")
FORKED_REACH = 86  # the exit status of a process forked from the run that reached into it (see _hook)
GUARDED = ("_pytest", "pytest", "pluggy", "builtins", "minidebug_eval", "minidebug_watch", "__main__")
_LOOKED_THROUGH = ("inspect.py", "traceback.py")
# traceback's functions that read frames and give back text or summaries only, never a frame: called by the
# agent's code (a fix that logs `traceback.format_exc()`), their reads are theirs, not the caller's.
_FRAMES_KEPT_IN = ("format_exc", "print_exc", "format_exception", "print_exception", "format_tb", "print_tb",
                   "extract_tb", "extract_stack", "format_stack", "print_stack", "print_last")
# ... and inspect's, which read a generator's or coroutine's frame and give back its state's name
_STATE_OF = ("getgeneratorstate", "getcoroutinestate", "getasyncgenstate")
vars_of = types.ModuleType.__dict__["__dict__"].__get__  # a module's namespace, never by its class's lookup
_RUN_STATE = frozenset({"_pytest_diamond_inheritance_warning_shown"})  # class attributes pytest itself adds


def hide_ctypes():
    """Take ctypes out of sys.modules before the project's code runs, after the driver's own last use of it: a
    foreign function's call (`ctypes.memmove` over a test's code object, say) raises no audit event, but an
    import that must load the module again does, and the watch judges who asked for it. (The driver keeps
    the references it holds.)"""
    for name in [name for name in sys.modules if name.partition(".")[0] in RAW_MEMORY]:
        del sys.modules[name]


class Watch:
    """The audit hook of one run and the state it compares after the run."""

    def __init__(self, send, fd, tree, agent_files, also_guarded=(), before=None, writes=None, names_ahead=None,
                 vouched=None, sealed_bytecode=False):
        """`also_guarded`: modules, by full name, whose state `finish` compares too (a runner's other than
        pytest's). `before`: the state to compare with, if taken already (`snapshot(also_guarded)` of this
        very state: a warm interpreter takes it once, and each forked child starts from that state);
        `writes`: the watchers of writes, made by `prepared_writes()` likewise; `names_ahead`: what a warm
        interpreter read of the task's test modules ahead (see minidebug_precompiled.names_ahead); `vouched`:
        the code objects the driver compiled from the task's own files, by id (see minidebug_rewriter);
        `sealed_bytecode`: no bytecode file of the tree, the interpreter, the venv or the driver's folder is
        opened from now on (an open of one fails as if it were not there), for a run that reads bytecode
        elsewhere (see minidebug_eval: pytest's own repository)."""
        self.findings = []
        self._fd, self._socket = fd, _identity(fd)
        self._tree = tree.rstrip("/") + "/"
        self._judge = _judge_maker(tree, agent_files)
        self._agent_files = frozenset(os.path.realpath(path) for path in agent_files)
        self._report = _reporter(send, self.findings, tree)
        self._before = snapshot(also_guarded) if before is None else before
        self._protected = set()
        self._own = []  # the driver's pytest plugin objects
        self.genuine = Genuine(self._judge, names_ahead, vouched)
        self.state = ModuleState(self._judge, protected_names(), tree)
        self.state.start()
        outside = self.outside
        self.writes = prepared_writes() if writes is None else writes
        for name, module in list(sys.modules.items()):  # those the project's set-up imported since
            if issubclass(type(module), types.ModuleType) and outside(module):
                self.writes.watch_module(name, module)
        self.writes.activate(self._report, self._judge, lambda value: agent_code(value, self._judge),
                             deferred_calls())
        self.pristine = Pristine(outside, self.writes.watch_module)
        self.pristine.start()
        sealed = (self._tree,) + _trusted_folders() if sealed_bytecode else ()
        sys.addaudithook(_hook(self._judge, self._report, fd, self._protected, self.genuine, tree, sealed))

    def outside(self, module):
        """Whether a module is not the tree's (the standard library's, the venv's, the driver's)."""
        return not str(vars_of(module).get("__file__") or "").startswith(self._tree)

    def untrusted(self, filename):
        """Whether code from `filename` is untrusted (generated code, judged by no caller here, is)."""
        return self._judge(filename) is not False

    def protect(self, *functions):
        """Report untrusted code that reads these functions' default values (where the driver keeps its
        report channel)."""
        self._protected.update(functions)

    def plugins(self):
        """The pytest plugin objects of the watch: one that learns the run's plugin manager as pytest
        configures (before any code of the agent's is imported), so that `finish` can check where every hook
        implementation comes from, and the module state once the tests are collected; and the checks of each
        test's call (see minidebug_calls). Code under test can reach these objects through pytest, but not what
        they use: their hooks hold it as default values, whose reading the audit hook reports (a closure's
        cells it could read and rewrite unaudited), and the manager is kept in a generator's frame, which only
        the first value sent sets."""
        from _pytest.python import Function
        from minidebug_calls import plugin
        from minidebug_fixtures import fixture_findings

        self._fixture_findings, self._fixtures = fixture_findings, None  # the manager: see _collected
        keeper = _keeper()
        next(keeper)
        self._keeper, self._hooks, judge = keeper, [], self._judge  # _hooks: the checks before each test's call
        watch = self

        class Plugin:
            def pytest_configure(self, config, _watch=watch):
                _watch._configured(config)

            def pytest_collection_finish(self, session, _watch=watch):
                _watch._collected(session)

        calls, functions = plugin(self.genuine, self.state, lambda finding: self._report("", 0, finding), Function,
                                  _path, lambda value: agent_code(value, judge), self._hooks, self._agent_files)
        self.protect(Plugin.pytest_configure, Plugin.pytest_collection_finish, *functions)
        plugins = [Plugin(), calls]
        self._own.extend(plugins)
        return plugins

    def _configured(self, config):
        """pytest configures: the plugin manager and the state of its hooks, before any code of the agent's."""
        from minidebug_hooks import HookCheck

        self._keeper.send((config.pluginmanager, HookCheck(config, self._judge, self._judge.harness, self._own,
                                                           self._tree)))
        self._hooks.append(HookCheck(config, self._judge, self._judge.harness, self._own, self._tree))

    def _collected(self, session):
        """The tests are collected: the task's files, whose test modules' namespaces are watched from now on."""
        task_files = {_path(item) for item in session.items} | {str(module.__file__)
                                                                  for module in config_modules(session)}
        self.state.task_files(task_files)
        self.genuine.settle_imports({_path(item) for item in session.items})
        for name, module in list(sys.modules.items()):
            if issubclass(type(module), types.ModuleType) and vars_of(module).get("__file__") in task_files:
                self.writes.watch_module(name, module)  # the task's test modules
        for change in self.state.changes():
            self._report("", 0, change)
        self._fixtures = vars(session).get("_fixturemanager")
        self._check_fixtures()

    def _check_fixtures(self):
        """Where each fixture pytest registered comes from (see minidebug_fixtures)."""
        if getattr(self, "_fixtures", None) is not None:
            for finding in self._fixture_findings(self._fixtures, self._judge, self._judge.harness, self._tree):
                self._report("", 0, finding)

    def trust(self, *plugins):
        """The driver's other plugin objects (the recorder), whose hooks `finish` does not judge."""
        self._own.extend(plugins)

    def finish(self):
        """The after-run checks: hook implementations and the state of pytest, pluggy, builtins and the driver."""
        self.writes.stop()
        try:
            kept = next(self._keeper)
        except BaseException:  # closed or thrown into: only code that reached into it can have done that
            self._report("", 0, "the watch's record of pytest's plugin manager was tampered with")
            kept = None
        if kept is not None:
            for finding in kept[1].after_run():
                self._report("", 0, finding)
        self._check_fixtures()  # one registered while the tests ran
        written = quiet()  # what nothing wrote during the run is not looked into (Python < 3.12)
        for change in changed_since(self._before, self._judge, written):
            self._report("", 0, change)
        for change in self.state.changes():
            self._report("", 0, change)
        outside = [(name, module) for name, module in list(sys.modules.items())
                   if issubclass(type(module), types.ModuleType) and self.outside(module)]
        before = {**self.pristine.copies, **{name: copy for name, _, copy in self._before}}
        for change in agent_values(outside, self._judge, before, self._tree, written):
            self._report("", 0, change)
        for change in planted_in_objects(outside, self._judge, before, written):
            self._report("", 0, change)
        if _identity(self._fd) != self._socket:  # what the driver sends goes elsewhere (see minidebug_protocol)
            self._report("", 0, "the eval's report socket was replaced during the run")
        if not self.pristine.intact():
            self._report("", 0, "importlib's loading of modules (_load_unlocked) was replaced during the run")
        for change in poisoned_caches():
            self._report("", 0, change)


def _identity(fd):
    """The file a descriptor refers to, or None."""
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _path(item):
    """The file of a collected test (`fspath` before pytest 7)."""
    return str(getattr(item, "path", None) or item.fspath)


def config_modules(session):
    """The conftest modules pytest loaded in `session`."""
    return [plugin for plugin in session.config.pluginmanager.get_plugins()
            if isinstance(plugin, types.ModuleType) and str(getattr(plugin, "__file__", "")).endswith("conftest.py")]


def _keeper():
    """A generator that keeps the first value sent to it and gives it back on every next()."""
    kept = yield
    while True:
        yield kept


def prepared_writes():
    """The watchers of writes into the namespaces of every module imported so far (and their classes), not
    yet judging any (see minidebug_writes): a warm interpreter makes them once, before it forks."""
    writes = Writes(HOOKS)
    writes.start()
    for name, module in list(sys.modules.items()):
        if issubclass(type(module), types.ModuleType):
            writes.watch_module(name, module)
    return writes


def snapshot(also=(), note=False):
    """The attribute namespaces of the guarded modules (and of those named in `also`) and of the classes they
    define, each with a copy: [(name, live namespace, copy)]. Copies are made by C code, so taking one costs
    little. With `note` (a warm interpreter's snapshot, which every run it forks compares with), the version
    tag of each namespace and class is noted too, so that the comparison after a run skips what nothing wrote
    (see minidebug_modules.note_version)."""
    state = []
    protected_names()
    for name, module in list(sys.modules.items()):
        if not issubclass(type(module), types.ModuleType):
            continue
        namespace = types.ModuleType.__dict__["__dict__"].__get__(module)  # never the module class's own lookup
        guarded = name.split(".", 1)[0] in GUARDED or name in also
        state.append((name, namespace if guarded else None, dict(namespace)))  # else compared by agent_values
        found = classes_in(name, state[-1][2])  # agent_values looks into these modules' classes too
        objects_in(name, state[-1][2], note)  # and planted_in_objects into the objects they hold
        if note:
            note_version(namespace, namespace)
            for _, (_, klass, _, _) in found:
                note_version(klass, class_namespace(klass))
        if not guarded:
            continue
        for attribute, value in list(namespace.items()):
            if issubclass(type(value), type) and class_namespace(value).get("__module__") == name:
                live = class_namespace(value)
                state.append((f"{name}.{attribute}", live, dict(live)))
                if note:
                    note_version(live, live)
    return state


def changed_since(before, judge, quiet=frozenset()):
    """What changed in the guarded state since `before`, unless trusted code (pytest's plugins, the venv's)
    made the change: an attribute whose value is no longer the same object, or a class attribute added.
    Namespaces whose id is in `quiet` (see minidebug_modules.quiet) are as they were."""
    missing, changed = object(), []
    for name, live, copy in before:
        if live is None or id(live) in quiet:
            continue
        for key, value in copy.items():
            now = live.get(key, missing)
            if now is not value and _from_untrusted_code(now, judge):
                changed.append(f"{name}.{key} was changed during the run")
        if type(live) is not dict:  # a class: what was added counts too
            for key in live.keys() - copy.keys():
                if key not in _RUN_STATE and _from_untrusted_code(live[key], judge):
                    changed.append(f"{name}.{key} was added during the run")
    return sorted(changed)


def _from_untrusted_code(value, judge):
    """False only for a function, method, property or class whose code comes from a trusted file."""
    value = unwrapped(value)
    code = value.__code__ if type(value) is types.FunctionType else None
    if code is not None:
        return judge(code.co_filename) is not False
    if isinstance(value, type):
        filename = class_file(value)
        return not isinstance(filename, str) or judge(filename) is not False
    return True


def _trusted_folders():
    """The folders whose files are trusted wherever they are judged: the driver's, the interpreter's and the
    venv's, the standard library's; each ending in "/"."""
    return tuple(sorted({os.path.dirname(os.path.abspath(__file__)) + "/"} | {
        path.rstrip("/") + "/" for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                                            os.path.dirname(os.__file__))}))  # the last: the standard library


def _judge_maker(tree, agent_files):
    """judge(filename): True if untrusted, False if trusted, None for generated code (judged by its caller)."""
    stat, started = os.stat, _now_ns()
    tree_prefix = tree.rstrip("/") + "/"
    agent = frozenset(agent_files)
    trusted = _trusted_folders()
    tainted, known = set(), {}

    def written(filename):
        """Whether a file of the tree was written while the tests ran (or is gone), or lies outside it."""
        if not filename.startswith(tree_prefix):
            return True
        try:
            return stat(filename).st_ctime_ns >= started
        except OSError:
            return True

    def judge(filename):
        if filename in tainted:
            return True
        if filename[:1] == "<":
            return None
        if filename[:1] != "/":
            filename = tree_prefix + filename
        if filename in agent:
            return True
        if filename.startswith(tree_prefix):
            try:
                return stat(filename).st_ctime_ns >= started  # written while the tests ran
            except OSError:
                return True
        if filename not in known:
            known[filename] = not filename.startswith(trusted)
        return known[filename]

    judge.taint = tainted.add
    judge.harness = lambda filename: filename.rsplit("/", 1)[-1] == "conftest.py" and not written(filename)
    return judge


def _now_ns():
    import time

    return time.time_ns()


def _reporter(send, findings, tree):
    """report(filename, line, what): record a finding once and send it to the host at once. In a process forked
    from the run (a test's `os.fork`, multiprocessing's workers) it does nothing: such a process shares the
    report socket but not the run's count of lines, and what it changes of its own memory is not the run's."""
    prefix, seen, limit, length = tree.rstrip("/") + "/", set(), 50, len
    run_pid, getpid = os.getpid(), os.getpid

    def report(filename, line, what):
        if getpid() != run_pid:
            return
        where = filename[length(prefix):] if filename.startswith(prefix) else filename
        finding = f"{where}:{line}: {what}" if where else what
        finding = finding.replace("\n", " ")
        if finding in seen or length(seen) >= limit:
            return
        seen.add(finding)
        findings.append(finding)
        send(finding)

    return report


def _text_only_code():
    """The code objects of traceback's functions that read frames and return text or frame summaries only
    (_FRAMES_KEPT_IN, and TracebackException's making) and of inspect's that return a state's name
    (_STATE_OF), as the modules define them before any code of the project runs ({id(code): code}): a function
    put in their place later has other code."""
    import inspect
    import traceback

    functions = [getattr(module, name, None) for module, names in ((traceback, _FRAMES_KEPT_IN), (inspect, _STATE_OF))
                 for name in names]
    klass = class_namespace(traceback.TracebackException)
    functions += [klass.get("__init__"), getattr(klass.get("from_exception"), "__func__", None)]
    return {id(function.__code__): function.__code__ for function in functions
            if type(function) is types.FunctionType}  # by identity: code equal to theirs may run in other globals


def _hook(judge, report, fd, protected, genuine, tree, sealed=()):
    """The audit hook. Everything it calls is bound here, before any code of the project runs. `sealed`: the
    folders (each ending in "/") whose bytecode files it lets nothing open (see `refused`)."""
    events, frame_attributes, guarded = dict(_EVENTS), frozenset(_FRAME_ATTRIBUTES), frozenset(GUARDED)
    defaults = frozenset(("__defaults__", "__kwdefaults__"))
    run_pid, getpid, end_now = os.getpid(), os.getpid, os._exit
    looked_through = tuple("/" + name for name in _LOOKED_THROUGH)
    logging_lambda = "/logging/__init__.py"  # `currentframe = lambda: sys._getframe(1)`: its caller asks
    getframe, is_instance, length, type_of, failure = sys._getframe, isinstance, len, type, Exception
    getprofile, setprofile = sys.getprofile, sys.setprofile
    function_type, code_type, module_type = types.FunctionType, types.CodeType, types.ModuleType
    class_dict = class_namespace
    module_dict = types.ModuleType.__dict__["__dict__"].__get__
    tree_prefix, modules = tree.rstrip("/") + "/", sys.modules
    no_bytecode, exists = (sys.pycache_prefix or "\0").rstrip("/") + "/", os.path.exists
    fd_paths = (f"/proc/self/fd/{fd}", f"/dev/fd/{fd}", f"/proc/thread-self/fd/{fd}")
    fd_name, fsdecode, realpath = str(fd), os.fsdecode, os.path.realpath
    getcwd, join, normpath = os.getcwd, os.path.join, os.path.normpath
    from pathlib import PosixPath, PurePosixPath

    plain_paths, bytecode = (PosixPath, PurePosixPath), (".pyc", ".pyo")
    busy = []

    deferred, stdlib, import_system = deferred_calls(), os.path.dirname(os.__file__) + "/", import_system_code()
    verdicts = {}  # code object -> (judge's verdict on its file, whether it is looked through)
    text_only = _text_only_code()

    def verdict(code):
        found = verdicts.get(code)
        if found is None:
            filename = code.co_filename
            found = verdicts[code] = (judge(filename), filename.endswith(looked_through)
                                      or code.co_name == "currentframe"
                                      or (code.co_name == "<lambda>" and filename.endswith(logging_lambda)),
                                      import_system.get(id(code)) is code)
        return found

    def cause(frame, policy):
        """The frame of the untrusted code that caused the event, or None."""
        if policy == "stack":
            armed = frame  # the standard library's own frames down to a finalizer or a thread's target: what
            while armed is not None and armed.f_code not in deferred and armed.f_code.co_filename.startswith(
                    stdlib) and "-packages/" not in armed.f_code.co_filename:  # they do acts for whoever armed it
                armed = armed.f_back
            if armed is not None and armed.f_code in deferred:
                return armed
            while frame is not None:
                untrusted, _, importing = verdict(frame.f_code)
                if importing:
                    return None  # what a module does as it is imported is its own, whoever imported it
                if untrusted:
                    return frame
                frame = frame.f_back
            return None
        while frame is not None:
            untrusted, through, _ = verdict(frame.f_code)
            if untrusted is None or (through and not untrusted):
                if text_only.get(id(frame.f_code)) is frame.f_code:
                    return None  # traceback formats what it reads: no frame reaches its caller
                frame = frame.f_back
                continue
            return frame if untrusted else None
        return None

    def described(event, args, text):
        """What the event means here, or None when it is not one to watch."""
        if event == "object.__getattr__":
            if args[1] in frame_attributes:
                return text.format(name=args[1])
            return "reads the eval's report channel (the driver's defaults)" if args[1] in defaults else None
        if event == "os.symlink":  # a link into /proc opens what the open's path does not name
            target = fsdecode(args[0]) if is_instance(args[0], (str, bytes)) else ""
            return text.format(name=target) if "/proc" in target or "/fd" in target or "mem" in target else None
        if event in ("object.__setattr__", "object.__delattr__"):
            target, name = args[0], args[1]
            if is_instance(target, type):
                module = class_dict(target).get("__module__")
                if not is_instance(module, str):
                    return None
                top, last = module.split(".", 1)[0], module.rsplit(".", 1)[-1]
                qualname = f"{module}.{class_dict(target).get('__qualname__')}"
                if top in guarded or last.startswith("test") or last.endswith("_test") or last == "conftest":
                    return text.format(name=name, target=f"the class {qualname}")
                owner = modules.get(module)
                if not is_instance(owner, module_type):
                    return None
                filename = module_dict(owner).get("__file__")
                if filename is None or (is_instance(filename, str) and not filename.startswith(tree_prefix)
                                        and judge(filename) is False):  # the standard library's or the venv's
                    return text.format(name=name, target=f"the class {qualname}"), "caller"
                return None
            if name == "__class__" and is_instance(target, module_type):
                return text.format(name=name, target=f"the module {module_dict(target).get('__name__')}")
            if name == "__class__":  # an object of the standard library's or the venv's given another class
                home = modules.get(class_dict(type_of(target)).get("__module__"))
                filename = module_dict(home).get("__file__", "") if is_instance(home, module_type) else None
                if filename is None or (is_instance(filename, str) and not filename.startswith(tree_prefix)
                                        and judge(filename) is False):
                    return text.format(name=name, target=f"an object of {type_of(target).__qualname__}")
                return None
            if type_of(target) is function_type and name in defaults and target in protected:
                return text.format(name=name, target="a function of the driver's (where it keeps its report channel)")
            if type_of(target) is function_type and name == "__code__":
                return text.format(name="__code__", target="a function (its code replaced)")
            return None
        if event == "open":
            path = args[0]
            if is_instance(path, bytes):
                path = fsdecode(path)
            low_level = args[1] is None  # os.open, which a folder's descriptor may lead (`open` itself: no)
            if path == fd or (is_instance(path, str) and (path in fd_paths or reaches(path, fd_name, low_level))):
                return text.format(name="the eval's report socket")
            if is_instance(path, str):
                if reaches(path, "mem", low_level):
                    return text.format(name=f"process memory ({path})")
                if path.endswith((".pyc", ".pyo")) and not path.startswith(no_bytecode) and exists(path) \
                        and judge(path):
                    return text.format(name=f"bytecode written during the run ({path.rsplit('/', 1)[-1]})")
            return None
        return text

    def reaches(path, name, low_level):
        """Whether `path`, opened as given (relative to the working folder, or, by os.open, to a folder
        descriptor the event does not show), may be /proc's file `name` (a process's `mem`, or the report
        socket's fd): any spelling through links to folders (a link to the file itself is judged when it is
        made: os.symlink)."""
        head, _, last = path.rstrip("/").rpartition("/")
        if last != name:
            return False
        if low_level and path[:1] != "/" and not exists(path):
            return True  # not a file of the tree: a name under a folder descriptor, /proc's as likely as not
        real = realpath(head or ".")
        return real.startswith("/proc/") and (name == "mem" or real.endswith("/fd"))

    def refused(path):
        """Whether `path`, an open's, is a bytecode file in a sealed folder, by its name or where its links
        lead: none is ever read (the import system and pytest's rewriter then compile the source)."""
        if type_of(path) is bytes:
            path = fsdecode(path)
        elif type_of(path) in plain_paths:
            path = str(path)
        if type_of(path) is not str or not path.endswith(bytecode):
            return False
        if path[:1] != "/":
            try:
                path = join(getcwd(), path)
            except OSError:  # the working folder is gone: where it leads cannot be told
                return True
        path = normpath(path)
        return path.startswith(sealed) or realpath(path).startswith(sealed)

    def genuine_exec(code, frame):
        """A trusted loader runs the module code of a file of the tree that nothing untrusted wrote: its
        namespace and code are the file's own (see minidebug_identity). Code the driver compiled from such a
        file itself (see minidebug_rewriter) is the file's whoever runs it; the namespace it runs in is read
        from its own frame as it starts (see starting_globals), not from the loader's."""
        if judge(code.co_filename) is not False:
            return
        untrusted, _, importing = verdict(frame.f_code)
        if untrusted is False or importing:
            namespace = namespace_of_exec(frame, code)
            if namespace is not None:
                genuine.record(code, namespace)
        elif genuine.vouched(code):
            starting_globals(code)

    def starting_globals(code):
        """Record the globals the frame of `code` starts with: a profile function set for this thread alone,
        taken out again at the next frame that starts, which is that code's as exec() runs it next (one that
        is not, when exec() failed first, records nothing). Not where another profile function is set."""
        if getprofile() is not None:
            return

        def started(frame, event, arg):
            if event != "call":  # the returns of the frames that set it, and the built-ins they call
                return
            busy.append(1)  # its own removal is no event of the program's
            try:
                setprofile(None)
            finally:
                busy.clear()
            if frame.f_code is code:
                genuine.record(code, frame.f_globals)

        setprofile(started)

    def hook(event, args):
        if event == "object.__getattr__":
            if args[1] not in frame_attributes:
                if not (args[1] in defaults and args[0] in protected):
                    return  # the most frequent event by far: pytest reads functions' __code__ and __defaults__
            elif busy:
                return
            else:  # a traceback's frames, read by pytest thousands of times: a known trusted reader ends it here
                busy.append(1)
                try:
                    known = verdicts.get(getframe(1).f_code)
                finally:
                    busy.clear()
                if known is not None and known[0] is False and not known[1]:
                    return
        entry = events.get(event)
        if entry is None:
            if event == "exec" and not busy:
                code = args[0] if args else None
                if type_of(code) is code_type and code.co_name == "<module>" \
                        and code.co_filename.startswith(tree_prefix):
                    busy.append(1)
                    try:
                        genuine_exec(code, getframe(1))
                    except failure:
                        pass
                    finally:
                        busy.clear()
                return
            if event == "import":  # ctypes is out of sys.modules when the run starts (see hide_ctypes)
                if not (args and is_instance(args[0], str) and raw_memory(args[0])):
                    return
                entry = ("stack", f"imports {args[0]} (raw memory and C functions)")
            elif event[:7] != "ctypes.":
                return
            else:
                entry = ("caller", f"uses ctypes ({event})")
        if busy:
            return
        busy.append(1)
        sealed_file = False
        try:
            if sealed and event == "open":
                sealed_file = refused(args[0])
            policy, text = entry
            if policy == "taint":  # compile(source, filename): code compiled by untrusted code stays untrusted
                filename = args[1] if length(args) > 1 else None
                if is_instance(filename, str) and filename[:1] != "<" and verdict(getframe(1).f_code)[0]:
                    judge.taint(filename)
                return
            what = described(event, args, text)
            if what is None:
                return
            if type_of(what) is tuple:
                what, policy = what
            frame = cause(getframe(1), policy)
            if frame is None:
                return
            if event == "code.__new__" and length(args) > 1 and is_instance(args[1], str):
                judge.taint(args[1])
            if getpid() != run_pid:  # a process forked from the run reached into it (to read a test's frame, say):
                end_now(FORKED_REACH)  # it ends here, before anything it read leaves it (its finding could not)
            report(frame.f_code.co_filename, frame.f_lineno, what)
        except failure:  # a finding is never worth breaking the program under test
            pass
        finally:
            busy.clear()
            if sealed_file:
                raise PermissionError(13, "minidebug: no bytecode of the tree, the venv or the interpreter is "
                                          "read in this run", args[0])

    return hook
