"""Runs a program once under a tracer, inside the debugged program's interpreter, and writes JSON.

Started as `python -m minidebug_probe <script | -m module> [args...]` with MINIDEBUG_PROBE holding
{"mode": "trace" | "inspect", "root": ..., "out": ..., ...}. Uses sys.monitoring on Python 3.12+
(events only for the code that matters) and sys.settrace before. Started ahead of its run (with
MINIDEBUG_PROBE_PRELOAD instead), it imports pytest and the named modules first and then waits for that
JSON on stdin (see `_start_standby`).
"""

import json
import os
import re
import reprlib
import runpy
import sys

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class Render(reprlib.Repr):
    """reprlib with limits, no object addresses, and plain objects shown by their attributes."""

    def __init__(self, depth):
        super().__init__()
        self.maxlevel = depth
        self.maxstring = self.maxother = 120
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxdeque = 8

    def repr_instance(self, obj, level):
        cls = type(obj)
        if cls.__repr__ is object.__repr__ and hasattr(obj, "__dict__"):
            if level <= 0:
                return f"{cls.__name__}(...)"
            fields = list(vars(obj).items())
            shown = ", ".join(f"{k}={self.repr1(v, level - 1)}" for k, v in fields[: self.maxdict])
            return f"{cls.__name__}({shown}{', ...' if len(fields) > self.maxdict else ''})"
        try:
            text = repr(obj)
        except Exception as exc:  # a broken __repr__ must not stop the probe
            text = f"<{cls.__name__}: repr failed: {exc.__class__.__name__}>"
        text = _ADDRESS.sub("", text)
        return text if len(text) <= self.maxother else text[: self.maxother - 3] + "..."

    def __call__(self, value):
        try:
            return self.repr(value)
        except Exception as exc:
            return f"<unrepresentable {type(value).__name__}: {exc.__class__.__name__}>"


class Probe:
    def __init__(self, config):
        self.config = config
        self.root = os.path.realpath(config["root"])
        self.render = Render(config.get("depth", 2))
        self._rel = {}

    def rel(self, filename):
        found = self._rel.get(filename)
        if found is None:
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            inside = path.startswith(self.root + os.sep)
            found = (os.path.relpath(path, self.root) if inside else path, inside)
            self._rel[filename] = found
        return found

    def stack(self, frame):
        frames, skipped = [], 0
        while frame is not None:
            name, inside = self.rel(frame.f_code.co_filename)
            if inside:
                frames.append(f"{name}:{frame.f_lineno} in {frame.f_code.co_name}")
            else:
                skipped += 1
            frame = frame.f_back
        return frames, skipped

    def locals_of(self, frame):
        return {k: self.render(v) for k, v in frame.f_locals.items() if not (k.startswith("__") and k.endswith("__"))}

    def write(self, data):
        """Write the result as a new file: whatever the program put at that path (a FIFO, a link) is removed."""
        out = self.config["out"]
        try:
            os.unlink(out)
        except OSError:
            pass
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            print(f"minidebug_probe: cannot write the result: {exc}", file=sys.stderr)
            return
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)


class Trace(Probe):
    """Every call of the target: call site, arguments, result or exception, locals at return."""

    def __init__(self, config):
        super().__init__(config)
        target = config["target"]
        self.file_range = None
        match = re.fullmatch(r"(.+\.py):(\d+)-(\d+)", target)
        if match:
            self.file_range = (match.group(1), int(match.group(2)), int(match.group(3)))
        self.name = target
        self.calls, self.open, self.total = [], {}, 0
        self.max_calls = config.get("max_calls", 20)

    def is_target(self, code, frame=None):
        name, inside = self.rel(code.co_filename)
        if not inside:
            return False
        if self.file_range:
            file, start, end = self.file_range
            return name == file and start <= code.co_firstlineno <= end
        qualname = getattr(code, "co_qualname", None)
        if qualname is not None:
            return qualname == self.name or qualname.endswith("." + self.name) or (
                "." not in self.name and code.co_name == self.name)
        owner, _, method = self.name.rpartition(".")
        if code.co_name != method:
            return False
        if not owner or frame is None:
            return True
        this = frame.f_locals.get("self", frame.f_locals.get("cls"))
        return this is not None and owner in [c.__name__
                                              for c in (this if isinstance(this, type) else type(this)).__mro__]

    def start(self, frame):
        self.total += 1
        if len(self.calls) >= self.max_calls:
            return None
        code = frame.f_code
        caller = frame.f_back
        site = "?"
        if caller is not None:
            site = f"{self.rel(caller.f_code.co_filename)[0]}:{caller.f_lineno} in {caller.f_code.co_name}"
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        args = {name: self.render(frame.f_locals.get(name)) for name in code.co_varnames[:nargs]}
        record = {"function": getattr(code, "co_qualname", code.co_name),
                  "defined": f"{self.rel(code.co_filename)[0]}:{code.co_firstlineno}",
                  "site": site, "args": args}
        self.calls.append(record)
        return record

    def finish(self, record, frame, value=None, exception=None, yielded=False):
        if record is None:
            return
        if yielded:
            record.setdefault("yields", []).append(self.render(value))
            return
        if exception is not None:
            record["raised"] = self.render(exception)
        else:
            record["returned"] = self.render(value)
        record["locals"] = self.locals_of(frame)

    def result(self):
        return {"mode": "trace", "calls": self.calls, "total": self.total}

    # -- sys.settrace (3.10, 3.11) --
    def settrace(self, frame, event, arg):
        if event != "call" or not self.is_target(frame.f_code, frame):
            return None
        key = id(frame)
        if key not in self.open:  # a new call (a generator's resume comes back here too)
            self.open[key] = self.start(frame)
        pending = []

        def local(frame, event, arg):
            if event == "exception":
                pending[:] = [arg[1]]
            elif event == "line":
                pending.clear()
            elif event == "return":
                record = self.open.get(key)
                code = frame.f_code
                if code.co_flags & 0x20 and code.co_code[frame.f_lasti] == _YIELD_VALUE and not pending:
                    self.finish(record, frame, arg, yielded=True)
                else:
                    self.finish(record, frame, arg, pending[0] if pending else None)
                    self.open.pop(key, None)
            return local

        return local

    # -- sys.monitoring (3.12+) --
    def monitor(self):
        mon, tool = claim_monitoring()
        watched = mon.events.PY_RETURN | mon.events.PY_YIELD  # PY_UNWIND can only be global

        def on_start(code, offset):
            frame = sys._getframe(1)
            if not self.is_target(code, frame):
                return mon.DISABLE
            self.open[id(frame)] = self.start(frame)
            mon.set_local_events(tool, code, watched)

        def on_resume(code, offset):  # a generator going on: the call is already open
            if not self.is_target(code, sys._getframe(1)):
                return mon.DISABLE

        def on_return(code, offset, value):
            frame = sys._getframe(1)
            self.finish(self.open.pop(id(frame), None), frame, value)

        def on_yield(code, offset, value):
            frame = sys._getframe(1)
            self.finish(self.open.get(id(frame)), frame, value, yielded=True)

        def on_unwind(code, offset, exception):
            frame = sys._getframe(1)
            if id(frame) in self.open:
                self.finish(self.open.pop(id(frame)), frame, exception=exception)

        mon.register_callback(tool, mon.events.PY_START, on_start)
        mon.register_callback(tool, mon.events.PY_RESUME, on_resume)
        mon.register_callback(tool, mon.events.PY_RETURN, on_return)
        mon.register_callback(tool, mon.events.PY_YIELD, on_yield)
        mon.register_callback(tool, mon.events.PY_UNWIND, on_unwind)
        mon.set_events(tool, mon.events.PY_START | mon.events.PY_RESUME | mon.events.PY_UNWIND)


class Inspect(Probe):
    """The first time `at` (file.py:line, or "exception") is reached: stack, locals, expressions."""

    def __init__(self, config):
        super().__init__(config)
        self.at = config["at"]
        self.exprs = config.get("expr", [])
        if self.at != "exception":
            file, _, line = self.at.rpartition(":")
            self.file, self.line = file, int(line)

    def capture(self, frame, exception=None):
        frames, skipped = self.stack(frame)
        values = {}
        for expr in self.exprs:
            try:
                values[expr] = self.render(eval(expr, frame.f_globals, dict(frame.f_locals)))
            except BaseException as exc:  # noqa: BLE001 - any failure is shown as the value
                values[expr] = f"error: {exc.__class__.__name__}: {exc}"
        data = {"mode": "inspect", "reached": True, "where": frames[0] if frames else "?", "stack": frames,
                "skipped_frames": skipped, "locals": self.locals_of(frame), "values": values}
        if exception is not None:
            data["exception"] = self.render(exception)
        self.write(data)
        sys.stdout.flush()
        os._exit(0)

    def result(self):
        return {"mode": "inspect", "reached": False}

    def settrace(self, frame, event, arg):
        name, inside = self.rel(frame.f_code.co_filename)
        if not inside or (self.at != "exception" and name != self.file):
            return None
        pending = []

        def local(frame, event, arg):
            if self.at == "exception":
                if event == "exception":
                    pending[:] = [arg[1]]
                elif event == "line":
                    pending.clear()
                elif event == "return" and pending:
                    self.capture(frame, pending[0])
            elif event == "line" and frame.f_lineno == self.line:
                self.capture(frame)
            return local

        return local

    def monitor(self):
        mon, tool = claim_monitoring()

        def on_start(code, offset):
            name, inside = self.rel(code.co_filename)
            if inside and name == self.file:
                mon.set_local_events(tool, code, mon.events.LINE)
            return mon.DISABLE

        def on_line(code, line):
            if line == self.line:
                self.capture(sys._getframe(1))
            return mon.DISABLE

        def on_unwind(code, offset, exception):
            if self.rel(code.co_filename)[1]:
                self.capture(sys._getframe(1), exception)

        if self.at == "exception":  # PY_UNWIND can only be a global event
            mon.register_callback(tool, mon.events.PY_UNWIND, on_unwind)
            mon.set_events(tool, mon.events.PY_UNWIND)
        else:
            mon.register_callback(tool, mon.events.PY_START, on_start)
            mon.register_callback(tool, mon.events.LINE, on_line)
            mon.set_events(tool, mon.events.PY_START)


_YIELD_VALUE = __import__("dis").opmap.get("YIELD_VALUE")
MONITORING_TOOL_ID = 4  # 0-2 and 5 are taken by convention (debugger, coverage, profiler, optimizer)


def claim_monitoring():
    """sys.monitoring and the tool id this probe registers its callbacks under."""
    sys.monitoring.use_tool_id(MONITORING_TOOL_ID, "minidebug")
    return sys.monitoring, MONITORING_TOOL_ID


def main():
    preload = os.environ.pop("MINIDEBUG_PROBE_PRELOAD", None)
    config = _start_standby(json.loads(preload)) if preload is not None \
        else json.loads(os.environ.pop("MINIDEBUG_PROBE"))
    probe = (Trace if config["mode"] == "trace" else Inspect)(config)
    args = sys.argv[1:]
    if args[:1] == ["-m"]:
        module, sys.argv[:] = args[1], args[1:]
        run = lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        sys.argv[:] = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        run = lambda: runpy.run_path(args[0], run_name="__main__")  # noqa: E731
    if sys.version_info >= (3, 12):
        probe.monitor()
    else:
        sys.settrace(probe.settrace)
    code = 0
    try:
        run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the program crashed: still report what was seen
        sys.settrace(None)
        print(f"{exc.__class__.__name__}: {exc}", file=sys.stderr)
        code = 1
    finally:
        sys.settrace(None)
        probe.write(probe.result())
    sys.stdout.flush()
    os._exit(code)


def _start_standby(names):
    """Started ahead (MINIDEBUG_PROBE_PRELOAD, a JSON list): import `names` with pytest and its plugins, then
    wait for the configuration, one JSON line on stdin (the host then closes it, so the program reads an empty
    stdin, as a probe started fresh does). If the project now shadows a module imported here, exec a fresh
    interpreter with the configuration where a fresh start has it."""
    from minidebug_preload import imported_ahead, shadowed

    imported = imported_ahead(names)
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(0, 65536)
        if not chunk:
            break
        line += chunk
    if not line.strip():  # the host ended the wait without a run
        os._exit(0)
    if shadowed(imported):
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "minidebug_probe", *sys.argv[1:]],
                  {**os.environ, "MINIDEBUG_PROBE": line.decode("utf-8")})
    return json.loads(line)


if __name__ == "__main__":
    import minidebug_probe

    minidebug_probe.main()
