"""Runs `python -m pdb` with a prompt of minidebug's own, inside the debugged program's interpreter.

Started as `python -m minidebug_pdb <pdb arguments>`. The prompt carries a random marker and the current
`file:line`, so program output that looks like pdb's prompt does not confuse the driver, and it never needs
an extra command to learn where the program stands. (Code of the program that sets out to can still find the
marker in this process and print a prompt; the host trusts a prompt's location no further than the
worktree.) The marker's random part arrives as the first line on stdin (so it is in no environment variable,
argument or file the program could read), then the breakpoints to restore as JSON, in lines of at most 1,024
characters (a terminal cuts longer ones), ended by an empty line.

A session may be started ahead of its first command (MINIDEBUG_PDB_PRELOAD, a JSON list, names modules to
import first with pytest and its plugins: the venv's plugins and modules the task's tests load). It then imports
them and waits for a
`start` line. If by then a folder ahead of the venv on sys.path (the project's tree, its pip layer) holds a
module of one of those names, the program must import that one: the driver replaces itself with a fresh
interpreter (exec, in the same process and terminal), which then reads the marker and the breakpoints.
"""

import bdb
import json
import os
import pdb
import sys

_MARKER = "(Pdb) "
_BREAKS = []
_SEEN = set()  # the files (as bdb names them) whose code was compiled or run in this process
_ARMED = []  # the debugger whose tracing resumes when code of a breakpoint's file arrives (see set_continue)


class Debugger(pdb.Pdb):
    """pdb.Pdb with a machine-readable prompt, no .pdbrc and plain line input."""

    def __init__(self, *args, **kwargs):
        kwargs["readrc"] = False
        # Never stop inside the debugger itself (a SIGINT handled mid-trace would otherwise land in bdb).
        kwargs["skip"] = list(kwargs.get("skip") or []) + ["bdb", "pdb", "minidebug_pdb"]
        super().__init__(*args, **kwargs)
        self.use_rawinput = False
        self._restore(_BREAKS)
        _BREAKS.clear()

    def set_continue(self):
        """bdb's continue; and where no breakpoint's file has had code compiled or run yet (the usual `b` + `c`
        on a program that has not imported the project), run without tracing until the first code of one
        arrives (see `_audit`): pdb's tracing of every call made before, pytest's start-up among them, is what
        made reaching a breakpoint slow. (As with pdb, only this thread is debugged: a module of a breakpoint's
        file that another thread imports first is not seen.)"""
        _ARMED.clear()
        super().set_continue()
        if self.breaks and not _SEEN.intersection(self.breaks):
            sys.settrace(None)
            frame = sys._getframe().f_back
            while frame and frame is not self.botframe:
                del frame.f_trace
                frame = frame.f_back
            _ARMED[:] = [self]

    def is_skipped_module(self, module_name, _known={}):  # noqa: B006 - a cache: called for every traced call
        found = _known.get(module_name)
        if found is None:
            found = _known[module_name] = super().is_skipped_module(module_name)
        return found

    def _restore(self, breaks):
        for item in sorted(breaks, key=lambda b: b["number"]):
            # Keep the agent's breakpoint numbers: bdb hands out Breakpoint.next.
            while len(bdb.Breakpoint.bpbynumber) < item["number"]:
                bdb.Breakpoint.bpbynumber.append(None)
            bdb.Breakpoint.next = item["number"]
            error = self.set_break(item["file"], item["line"], item["temporary"], item["condition"] or None,
                                   item.get("funcname") or None)
            if error:
                print(f"*** could not restore breakpoint {item['number']}: {error}")
            elif not item.get("enabled", True):
                self.get_bpbynumber(item["number"]).disable()
        bdb.Breakpoint.next = len(bdb.Breakpoint.bpbynumber)

    def do_break(self, arg, temporary=0):
        """pdb's break, plus `b file.py:function` (or `file.py:Class.method`) before the module is imported."""
        spec, comma, condition = arg.partition(",")
        filename, colon, name = spec.strip().rpartition(":")
        if colon and name and not name.strip().isdigit() and filename.endswith(".py"):
            found = _function_line(filename, name.strip())
            if found is None:
                self.error(f"no function {name.strip()!r} in {filename}")
                return
            path, line = found
            funcname = name.strip().rsplit(".", 1)[-1]
            error = self.set_break(path, line, temporary, condition.strip() or None, funcname)
            if error:
                self.error(error)
            else:
                bp = self.get_breaks(path, line)[-1]
                self.message(f"Breakpoint {bp.number} at {bp.file}:{bp.line}")
            return
        return super().do_break(arg, temporary)

    do_b = do_break

    def do_tbreak(self, arg):
        self.do_break(arg, True)

    def sigint_handler(self, signum, frame):
        # pdb's own handler print()s, which fails ("reentrant call") when the signal lands inside the
        # program's own print; a raw write cannot.
        if self.allow_kbdint:
            raise KeyboardInterrupt
        os.write(sys.stdout.fileno(), b"\nProgram interrupted. (Use 'cont' to resume).\n")
        self.set_trace(frame)

    def _location(self):
        frame = getattr(self, "curframe", None)
        if frame is None:
            return ":0"
        return f"{frame.f_code.co_filename}:{frame.f_lineno}"

    def preloop(self):
        self.prompt = f"{_MARKER}{self._location()}{_MARKER}\n"

    def postcmd(self, stop, line):
        self.prompt = f"{_MARKER}{self._location()}{_MARKER}\n"
        return super().postcmd(stop, line)


def _audit(event, args):
    """Note each file whose code is compiled or run; resume tracing when it is a breakpoint's (set_continue)."""
    if event == "exec":
        filename = getattr(args[0], "co_filename", None)
    elif event == "compile":
        filename = args[1]
    else:
        return
    if not isinstance(filename, str) or filename[:1] == "<":
        return
    canonic = os.path.normcase(os.path.abspath(filename))  # as bdb.canonic names it
    _SEEN.add(canonic)
    if _ARMED and canonic in _ARMED[0].breaks:
        debugger = _ARMED.pop()
        sys.settrace(debugger.trace_dispatch)


def _function_line(filename, dotted):
    """(canonical path, first line of its code object) of a function defined in a file, found by parsing it."""
    import ast

    path = os.path.abspath(filename)
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    scope = tree.body
    for part in dotted.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        scope = node.body
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])  # what co_firstlineno says
    return os.path.realpath(path), first


def main():
    """Read the marker and the breakpoints from stdin, then run pdb's main with Debugger."""
    global _MARKER
    preload = os.environ.pop("MINIDEBUG_PDB_PRELOAD", None)
    if preload is not None:
        _start_standby(json.loads(preload))
    token = sys.stdin.readline().strip()  # the host's first line, read before the program starts
    _MARKER = f"\x1f<md{token}>" if token else _MARKER
    _BREAKS[:] = json.loads("".join(iter(lambda: sys.stdin.readline().rstrip("\r\n"), "")) or "[]")
    pdb.Pdb = Debugger
    _SEEN.update(os.path.normcase(os.path.abspath(module.__file__)) for module in list(sys.modules.values())
                 if isinstance(getattr(module, "__file__", None), str))
    sys.addaudithook(_audit)
    sys.argv[:] = ["pdb"] + sys.argv[1:]
    pdb.main()


def _start_standby(names):
    """Import `names` ahead (see the module's docstring), wait for the host's `start` line, and exec a fresh
    interpreter if the project now shadows a module imported here."""
    from minidebug_preload import imported_ahead, shadowed

    imported = imported_ahead(names)
    line = os.read(0, 4096)  # a terminal in canonical mode returns one line: the marker's line stays unread
    if line.strip() != b"start" or shadowed(imported):
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, "-m", "minidebug_pdb", *sys.argv[1:]])


if __name__ == "__main__":
    # pdb runs the target in __main__'s namespace and clears it, so work from the module imported by name.
    import minidebug_pdb

    minidebug_pdb.main()
