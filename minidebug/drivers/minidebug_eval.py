"""Runs the task's pytest for minidebug's eval and reports each test's outcome to the host (or, with
`runner` "django" in the settings, a unittest script such as Django's tests/runtests.py: see
minidebug_unittest, which reuses everything below).

Started as `python -s -B minidebug_eval.py` (by path, so only this folder is on sys.path) with
MINIDEBUG_EVAL_FD naming a socket. The host sends the run's settings over it as one JSON line; the
outcomes go back over the same socket, each line tagged with a key that only came over the socket (see
minidebug_protocol), so that nothing the tests import can stand in for the report by writing a file, printing
text, or writing to the socket itself (its descriptor is no secret in this process). Each outcome is
also sent the moment it is recorded, so an outcome changed in memory later shows as a mismatch. pytest is
imported before any folder of the project is put on sys.path, so no file of the project can replace it, and
from then on no bytecode is read at all: none in the project, none the run itself writes. (With
`project_pytest`, for pytest's own repository, the project's pytest runs its tests, as it does for its
developers: its folders come first and nothing is imported ahead or read from bytecode; where the agent
changed its assertion rewriter, the base's compiles the task's own test modules: see minidebug_rewriter. Its
tests write bytecode and read it back, in folders of their own, so once the watch is in place
sys.pycache_prefix is Python's default again, and the watch lets no bytecode file of the tree, the venv, the
interpreter or the driver's folder be opened: see minidebug_watch.Watch.)
minidebug_watch reports code of the agent's that reaches into the runner (see there). Before the run, every object that
exists is frozen out of the garbage collector (`gc.freeze()`): collections skip pytest's own objects, and
`gc.get_objects()` in the code under test does not list the recorder.
"""

import gc
import json
import os
import sys
from itertools import count

from minidebug_calls import new_style, old_style
from minidebug_protocol import EXIT, FRESH, INTERRUPT, KILL, PID, READY, RUN, dumps, message, tag


class _Recorded:
    """What the recorder's hooks note of a run: outcomes, collection errors, the collected items, the phases
    that ran, raised, or run now, and the item pytest runs now."""

    def __init__(self):
        self.outcomes, self.collect_errors, self.collected, self.current = {}, [], [], []
        self.ran, self.raised, self.items, self.running = set(), set(), set(), set()


def _phase(item, record, when):
    """The recorder's wrapper of one phase of the item pytest runs now: notes that it runs, that it ran and
    whether it raised (as pluggy throws the exception in: see minidebug_calls.old_style for pluggy < 1.1)."""
    current = record.current
    ours = bool(current) and item is current[0]
    if ours:
        record.running.add((item.nodeid, when))
    try:
        return (yield)
    except BaseException:
        if ours:
            record.raised.add((item.nodeid, when))
        raise
    finally:
        if ours:
            record.running.discard((item.nodeid, when))
            record.ran.add((item.nodeid, when))


def recorder(stream, flag):
    """A pytest plugin object that records each test's outcome (sending it with `stream` the moment it is
    recorded) and the collection errors, and report() giving what it recorded.

    Code under test can reach this plugin through pytest's objects, so it holds nothing that lets it speak for the
    driver: its hooks keep `stream`, `flag` and what they note as default values (reading a function's defaults is
    an audited event, which the watch reports; a closure cell is not), and only reports of test phases the runner
    itself ran count. Outermost wrappers of pytest's run of each collected item note each phase that ran and whether
    it raised: a report for a phase that did not run (made up and passed to the hook), or that says "passed" for a
    phase that raised (forged on its way, say by wrapping pytest's report class), counts as a failure, and
    `flag(finding)` says so. pytest's own report of one subtest (pytest 9 reports unittest's `subTest` and has a
    `subtests` fixture), which comes while its test's call runs, is that test's outcome unless it passed: a test
    one of whose subtests failed, was skipped or xfailed does not pass."""
    import pytest

    record = _Recorded()  # reached only through the hooks' default values (a closure's cells are not audited)

    def protocol(item, nextitem, _record=record):
        _record.current[:] = [item] if id(item) in _record.items else []
        yield
        _record.current[:] = []

    def phase(when):
        if new_style(pytest):
            def wrapper(item, _record=record, _when=when):
                return (yield from _phase(item, _record, _when))

            options = {"wrapper": True}
        else:
            def wrapper(item, _record=record, _when=when):
                yield from old_style(_phase(item, _record, _when))

            options = {"hookwrapper": True}
        wrapper.__name__ = f"pytest_runtest_{when}"
        return pytest.hookimpl(tryfirst=True, **options)(wrapper)

    def pytest_collectreport(report, _record=record):
        if report.failed:
            _record.collect_errors.append(report.nodeid or "<collection>")

    def pytest_runtest_logreport(report, _stream=stream, _flag=flag, _record=record):
        key, outcomes = (report.nodeid, report.when), _record.outcomes
        if key in _record.running and type(report) is _subtest_report():  # one subtest's, while its call runs
            # a subtest that failed, or was skipped or xfailed (its checks never made), is its test's outcome
            if report.outcome != "passed" and outcomes.get(report.nodeid, "passed") == "passed":
                outcome = report.outcome if getattr(report, "wasxfail", None) is None else "xfailed"
                outcomes[report.nodeid] = outcome
                _stream(report.nodeid, outcome)
            return
        if key not in _record.ran:
            _flag(f"{report.nodeid}: a report for its {report.when}, which the runner did not run (a made-up report)")
            outcome = "failed" if report.when == "call" else "error"
        elif report.outcome == "passed" and key in _record.raised:
            _flag(f"{report.nodeid}: its {report.when} raised, yet its report says passed (a forged report)")
            outcome = "failed" if report.when == "call" else "error"
        elif report.when != "call" and report.outcome == "passed":
            return
        elif getattr(report, "wasxfail", None) is not None:
            outcome = "xfailed" if report.outcome == "skipped" else "xpassed"
        elif report.when != "call" and report.outcome == "failed":
            outcome = "error"
        else:
            outcome = report.outcome
        if outcomes.get(report.nodeid, "passed") == "passed":
            outcomes[report.nodeid] = outcome
            _stream(report.nodeid, outcome)

    def pytest_collection_finish(session, _record=record):
        _record.collected[:] = [item.nodeid for item in session.items]
        _record.items.update(id(item) for item in session.items)

    class Recorder:
        pass

    plugin = Recorder()
    protocol.__name__ = "pytest_runtest_protocol"
    hooks = (pytest_collectreport, pytest_runtest_logreport, pytest_collection_finish,
             pytest.hookimpl(hookwrapper=True, tryfirst=True)(protocol), phase("setup"), phase("call"),
             phase("teardown"))
    for hook in hooks:
        setattr(plugin, hook.__name__, hook)
    report = lambda: {"tests": record.outcomes, "collect_errors": record.collect_errors,  # noqa: E731
                      "collected": record.collected}
    return plugin, report, hooks


def _subtest_report():
    """The class of pytest's reports of one subtest (pytest 9 reports unittest's `subTest` itself), or None."""
    return getattr(sys.modules.get("_pytest.subtests"), "SubtestReport", None)


def _receive(fd):
    chunks = []
    while not chunks or not chunks[-1].endswith(b"\n"):
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    return json.loads(b"".join(chunks).decode("utf-8"))


_PRECOMPILED_HOOKS = []  # the functions holding the code a warm interpreter compiled (see minidebug_precompiled)
_PRECOMPILED_NAMES = [None]  # and the one that holds what the watch reads of its test modules
_LEARNED_LOADED = set()  # every module importing the learned ones loaded (see _read_no_bytecode_from_now_on)
_LOST_WATCH = []  # the wrappers that see a test's result lost in its runner, and their sink (see minidebug_lost)
_WARM_STATE = []  # in a warm interpreter: the watch's snapshot and watchers every forked child starts from


def _read_no_bytecode_from_now_on(pycache, preload, learned=()):
    """Point the bytecode cache at `pycache`, a path where no file can exist, so that no .pyc in the project
    or written during the run (nor pytest's assertion-rewrite cache, which follows sys.pycache_prefix) is ever
    read. pytest's own plugins, the modules it imports in every run and the venv's plugins are imported first,
    from their bytecode as usual, so that eval does not compile them from source each time; then the venv's
    modules the task's tests load (`learned`), noting all that importing them loaded (standard library
    modules among them), which the run drops again where the project's folders would shadow it."""
    if not pycache:
        return
    from minidebug_preload import import_ahead

    import_ahead(preload)
    if not _LOST_WATCH:
        from minidebug_lost import install

        _LOST_WATCH[:] = install()
    before = set(sys.modules)
    import_ahead(learned)
    _LEARNED_LOADED.update(set(sys.modules) - before)
    sys.pycache_prefix = pycache
    _quiet_where_a_plain_run_reads_bytecode()


_QUIET_IN_EVAL = [True]  # cleared in a pdb session or a probe's run forked from a warm interpreter


def _quiet_where_a_plain_run_reads_bytecode():
    """In an eval run, compile without its compile-time warnings (an invalid escape sequence, say) a file that
    has current bytecode beside it, which a plain run reads instead of compiling (a venv module pip compiled at
    install): under `filterwarnings = error` such a warning is an error a plain run never meets. A file without
    current bytecode (the tree's) warns as in a plain run. The bytecode itself is still never read. pdb
    sessions and probes forked from the warm interpreter compile as before (with this, one of check's pdb
    probes missed its breakpoint: seen_between_calls)."""
    import warnings
    from importlib.machinery import SourceFileLoader
    from importlib.util import MAGIC_NUMBER, source_hash

    def current(path, data, _tag=sys.implementation.cache_tag, _open=open, _stat=os.stat, _hash=source_hash):
        folder, name = os.path.split(path)
        try:
            with _open(os.path.join(folder, "__pycache__", f"{name.rpartition('.')[0]}.{_tag}.pyc"), "rb") as file:
                header = file.read(16)
            stat = _stat(path)
        except (OSError, TypeError, ValueError):
            return False
        if len(header) < 16 or header[:4] != MAGIC_NUMBER:
            return False
        if int.from_bytes(header[4:8], "little") & 1:  # hash-based
            return header[8:16] == _hash(data)
        return (int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")) == \
            (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)

    def source_to_code(self, data, path, *, _optimize=-1, _original=SourceFileLoader.source_to_code,
                       _current=current, _warnings=warnings, _on=_QUIET_IN_EVAL):
        if not (_on and isinstance(path, str) and _current(path, data)):
            return _original(self, data, path, _optimize=_optimize)
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            return _original(self, data, path, _optimize=_optimize)

    SourceFileLoader.source_to_code = source_to_code


def _sender(fd, key):
    """send(kind, text): one line to the host, tagged (see minidebug_protocol) and written whole; and
    stream(test, outcome) and flag(finding), its two uses by the recorder. Each holds what it needs as default
    values, never as closure cells (see `recorder`)."""
    numbers = count()

    def send(kind, text, _fd=fd, _key=key, _number=numbers.__next__, _tag=tag, _write=os.write,
             _encode=str.encode, _replace=str.replace, _view=memoryview):
        __tracebackhide__ = True  # a failure shown never prints the key among the arguments
        line = kind + _encode(_replace(text, "\n", " "), "utf-8", "replace")
        data = _view(_tag(_key, _number(), line) + line + b"\n")
        while data:
            data = data[_write(_fd, data):]

    def stream(test, outcome, _send=send, _dumps=dumps):
        __tracebackhide__ = True
        _send(b"=", _dumps([test, outcome]))

    def flag(finding, _send=send):
        __tracebackhide__ = True
        _send(b"!", finding)

    return send, stream, flag


def run(fd, settings):
    """One pytest run with `settings`, reporting over `fd`; returns pytest's exit code. The venv modules the
    task's tests load (`learned`) are imported ahead with pytest, from their bytecode; one that the
    project's folders would shadow is dropped again, so the project's own file is imported. With `runner`
    "django", the run is of `script` (relative to the tree) with `args` instead (see minidebug_unittest)."""
    _not_dumpable()  # what the tests start (same user, no capability) cannot read or trace this process
    send, stream, flag = _sender(fd, bytes.fromhex(settings.pop("key")))
    report_text = dumps  # bound before the project is imported, as the report's lines are
    script = settings["script"] if settings.get("runner") == "django" else None
    learned = settings.get("learned", [])
    if settings.get("project_pytest"):  # the project is pytest: its own code runs its tests, from source
        sys.pycache_prefix = settings.get("pycache")
        sys.path[:0] = settings["sys_path"]
        learned = []
    import pytest  # before the project's folders are on sys.path (unless the project is pytest)

    if not settings.get("project_pytest"):
        _read_no_bytecode_from_now_on(settings.get("pycache"), settings.get("preload", [])
                                      + (["runpy"] if script else []), learned)
    rewriter, vouched = None, {}
    if settings.get("pristine_rewriter"):  # the agent changed pytest's own rewriter (see minidebug_rewriter)
        from minidebug_rewriter import install

        rewriter, vouched = install(settings["pristine_rewriter"], os.getcwd(), settings.get("agent_files", []))
    from minidebug_shadow import guard
    from minidebug_watch import Watch, hide_ctypes

    guard(settings.get("agent_created", []), os.getcwd(), flag)  # before the watch takes the import system's state

    unittest_runner = None
    if script:
        import minidebug_unittest as unittest_runner
    before, writes = (None, None) if unittest_runner or not _WARM_STATE else _WARM_STATE.pop()
    watch = Watch(flag, fd, os.getcwd(), settings.get("agent_files", []),
                  unittest_runner.GUARDED if unittest_runner else (), before, writes, _PRECOMPILED_NAMES[0], vouched,
                  sealed_bytecode=bool(settings.get("project_pytest")))
    if settings.get("project_pytest"):  # pytest's own tests write bytecode and read it, as Python does by default
        sys.pycache_prefix = None  # but none of the tree, the venv or the interpreter (the watch refuses it)
    checks = watch.plugins()
    tree = os.getcwd()
    _drop_shadowed(sorted(_LEARNED_LOADED | set(learned)),
                   settings["sys_path"] + [tree, os.path.join(tree, "src")])
    for folder in reversed(settings["sys_path"]):
        sys.path.insert(0, folder)
    inherited = [folder for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep) if folder]
    if settings.get("child_path"):  # what the tests start imports the project as pdb and bash see it
        os.environ["PYTHONPATH"] = os.pathsep.join(settings["child_path"] + inherited)
    if unittest_runner:
        recorded, holders = unittest_runner.recorder(stream, flag, watch.untrusted, settings.get("collect_only"))
    else:
        plugin, recorded, holders = recorder(stream, flag)
        watch.trust(plugin)
    lost_watch = _LOST_WATCH[0] if _LOST_WATCH else ()
    if _LOST_WATCH:
        _LOST_WATCH.pop()[0] = flag  # the sink: reached from now on through the wrappers' default values only
        _LOST_WATCH.clear()
    watch.protect(send, stream, flag, *holders, *lost_watch, *_PRECOMPILED_HOOKS, *filter(None, _PRECOMPILED_NAMES),
                  *filter(None, [rewriter]))
    hide_ctypes()
    gc.freeze()  # what exists before the project is imported is never garbage: collections skip it
    try:
        if unittest_runner:
            code = unittest_runner.run_script(os.path.join(tree, script), settings["args"])
        else:
            code = pytest.main(settings["args"], plugins=[*checks, plugin])  # the recorder last: outermost
    finally:
        try:
            watch.finish()
        except Exception as exc:  # the report goes out whatever happened to the checks
            send(b"!", f"the after-run checks failed: {exc!r}")
        learned_now = {}
        if settings.get("learn"):
            from minidebug_precompiled import tree_modules

            learned_now = {"venv_modules": _venv_modules(), "tree_modules": tree_modules(tree)}
        send(b"", report_text({**recorded(), **learned_now}))
    return int(code)


def _venv_modules():
    """The modules loaded from the venv's site-packages (what a warm interpreter may import ahead)."""
    import sysconfig

    roots = tuple({os.path.join(sysconfig.get_paths()[key], "") for key in ("purelib", "platlib")})
    found = []
    for name, module in list(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str) and filename.startswith(roots):
            found.append(name)
    return found


def _drop_shadowed(names, folders):
    """Forget the modules among `names` whose top-level package a module or package in `folders` would
    shadow (a folder without `__init__.py` would not: a regular package anywhere on the path wins)."""
    join, is_file = os.path.join, os.path.isfile
    for name in names:
        top = name.split(".", 1)[0]
        if any(is_file(join(folder, top + ".py")) or is_file(join(folder, top, "__init__.py")) for folder in folders):
            sys.modules.pop(name, None)


def serve(control):
    """Warm mode: import what every run imports first (pytest, its plugins, the venv's, the watch), then
    the venv's modules the host learned that the task's tests use (`learned`), compile the task's own files
    the host sent (`compiled`, see minidebug_precompiled), take the watch's snapshot of what every child starts
    from (each child's watch compares with it after its run), then serve runs: for each
    request on the `control` socket (`run`, with the report socket and the output pipe attached), fork a
    child (its own session, the pipe as stdout and stderr, the seccomp filter installed, not dumpable),
    send `pid N`, wait for it, end what else of the run is left in its own PID namespace (under bwrap), and
    send `exit N CODE`. Returns the report descriptor in the child only, which then runs as a fresh process
    would. The warm parent never runs code of the project, reads no file once ready and is not dumpable, so
    a run cannot change what the next child starts from. A `fork {json}`
    request (see minidebug_fork) is served the same way for the program it names (a probe's run, the output
    pipe attached; or a pdb session, its terminal attached, which `int` and `kill` lines then signal: see
    minidebug_fork); the child gets those settings instead (see _start_forked)."""
    import ctypes
    import signal
    import socket
    import threading

    settings = _receive(control)
    import pytest  # noqa: F401

    _read_no_bytecode_from_now_on(settings.get("pycache"), settings.get("preload", []), settings.get("learned", []))
    import minidebug_watch  # compiled once, here, not in the child; its snapshot is taken below
    import minidebug_calls, minidebug_fixtures, minidebug_hooks, minidebug_shadow  # noqa: F401, E401 (each run's)
    import inspect

    inspect.getmodule(compile("", "<warm>", "exec"))  # fills inspect's cache of the modules' files (tracebacks)
    _compile_patterns()
    if settings.get("rehearse"):  # one pytest run on tests of its own (see minidebug_rehearsal)
        from minidebug_rehearsal import rehearse

        _LEARNED_LOADED.update(rehearse())
    from minidebug_precompiled import compile_ahead, install, names_ahead

    compiled = compile_ahead(settings.get("compiled", []))  # the task's files, never run here
    _PRECOMPILED_HOOKS[:] = install(compiled)
    _PRECOMPILED_NAMES[:] = [names_ahead(compiled)]

    if threading.active_count() > 1:  # a pre-imported module started a thread: forking is not safe
        os.write(control, message(FRESH, "a module imported before the run started a thread"))
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # a run's orphans are ours to reap, not a PID 1's that may not
    channel = socket.socket(fileno=control)
    from minidebug_fork import become_child, fork_request, serve_session
    from minidebug_leftovers import SandboxState, in_own_pid_namespace, reap

    sandbox = SandboxState() if in_own_pid_namespace(settings.get("host_pid_namespace")) else None
    # taken once here, not in every child (copying costs it pages, watching all the modules 20 ms)
    _WARM_STATE[:] = [(minidebug_watch.snapshot(note=True), minidebug_watch.prepared_writes())]
    # A program of a run may reach this interpreter with SIGINT (under bwrap it is the namespace's pid 1, to
    # which only signals it handles are delivered, and Python handles SIGINT): it is ignored; a child gets
    # Python's handler back (see minidebug_fork). Signals it does not handle never reach a pid 1.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.write(control, message(READY))
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(channel, 1 << 16, 2)
        except OSError:
            return None
        if not request:
            return None  # the host is gone
        while request.startswith((message(INTERRUPT), message(KILL))):  # for a session that had ended
            request = request.split(b"\n", 1)[1]
        if not request and not fds:
            continue
        session = fork_request(channel, request) if len(fds) == 1 else None
        if session is None and (request != message(RUN) or len(fds) != 2):
            for fd in fds:
                os.close(fd)
            return None
        report, output = (None, fds[0]) if session is not None else fds
        reap()  # what the host killed of the last run (it counts against the process limit until reaped)
        in_session, session_made = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            channel.close()
            os.close(in_session)
            become_child(libc, output, settings.get("filter"), session_made, settings.get("scopes", 0),
                         terminal=session is not None and session["program"] == "pdb")
            if session is None:
                return report
            tree = os.getcwd()
            _drop_shadowed(sorted(_LEARNED_LOADED | set(settings.get("learned", []))),
                           session["sys_path"] + [tree, os.path.join(tree, "src")])
            return session
        for fd in (report, output, session_made):
            if fd is not None:
                os.close(fd)
        os.read(in_session, 1)  # the child leads its own session (or is gone) before the host is told its pid
        os.close(in_session)
        os.write(control, message(PID, pid))
        if session is not None and session["program"] == "pdb" and not serve_session(channel, pid):
            return None
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        reap()  # the run's orphans that have ended
        if sandbox is not None and not sandbox.restore():
            os.write(control, message(EXIT, pid, code, "unclean"))
            return None
        os.write(control, message(EXIT, pid, code))


def _compile_patterns():
    """Compile here, once, the regular expressions every run would compile on first use (the `re` module and
    tokenize keep them): argparse's, as pytest builds its command-line parser, and tokenize's, as it shows
    the source lines of a failing test's traceback. Neither reads a file."""
    import argparse
    import io
    import tokenize

    argparse.ArgumentParser(add_help=False).format_help()
    list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline))


_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36


def _not_dumpable():
    """No other process without a capability may read this one's memory (`/proc/PID/mem`,
    `process_vm_readv`), trace it, or take its descriptors (`pidfd_getfd`): not the programs the tests
    start, which run as the same user and could otherwise take the report's key and socket."""
    import ctypes

    if ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        os._exit(126)  # never run the tests in a process that others can read


def _exit(code):
    """End the process once the report is out: atexit handlers run and buffered output is written as at any
    exit, but no module or object is torn down one by one (tens of milliseconds, and in a forked child each
    page it touches is copied first). Where threads of the run are still going, a normal exit waits for them."""
    import atexit
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a stream the run closed or replaced: as at a normal exit, nothing more to write
            pass
    os._exit(code)


def main():
    fd = int(os.environ.pop("MINIDEBUG_EVAL_FD"))
    os.set_inheritable(fd, False)  # no program the tests start gets the report socket
    if sys.argv[1:] == ["--warm"]:
        fd = serve(fd)
        if fd is None:
            sys.exit(0)
        if isinstance(fd, dict):  # a pdb session or a probe's run (see minidebug_fork), started by _start_forked
            _QUIET_IN_EVAL.clear()
            return fd
        sys.argv = sys.argv[:1]
        os.set_inheritable(fd, False)
    _exit(run(fd, _receive(fd)))


_FORKED = """
import minidebug_forked
_main = minidebug_forked.prepare(_program)
try:
    _main()
except BaseException as _exception:
    minidebug_forked.end(_exception)
minidebug_forked.end(None)
"""


def _start_forked(program):
    """Run a pdb session or a probe's run (see minidebug_forked) as deep in the stack as `python -m
    minidebug_pdb` (or minidebug_probe) runs it: this frame and exec's stand for runpy's two and its exec,
    so a program meets the recursion limit where it would in a fresh process. Never returns."""
    exec(compile(_FORKED, "<minidebug_forked>", "exec"), {"__name__": "__minidebug_forked__", "_program": program})


if __name__ == "__main__":
    forked = main()
    if forked is not None:
        _start_forked(forked)
