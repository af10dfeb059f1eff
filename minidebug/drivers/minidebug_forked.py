"""A pdb session or a probe's run in a child forked from a warm eval interpreter (see minidebug_eval.serve,
whose `_start_forked` calls `prepare`, the driver's main() and `end`).

The child becomes what `python -m minidebug_pdb ARGV` (or `minidebug_probe`) started in the room's copy of
the worktree would be: the program's environment (`env`), the folders ahead of the standard library's on
sys.path (`sys_path`: the tree, then PYTHONPATH's), its argv; for pdb, the terminal it was given is stdin,
stdout and stderr, with the streams an interpreter makes for a terminal. pytest and what the warm
interpreter imported ahead are imported already (a module of those that the tree shadows was dropped).
"""

import io
import os
import sys


def prepare(program):
    """Become `program["program"]`'s driver process as described above; returns the driver's main()."""
    os.environ.clear()
    os.environ.update(program["env"])
    sys.path[:] = [str(folder) for folder in program["sys_path"]] + sys.path[1:]  # not the eval driver's folder
    name = program["program"]
    sys.argv[:] = [f"minidebug_{name}", *program["argv"]]
    if name == "pdb":
        _terminal_streams()
        import minidebug_pdb as driver
    else:
        import minidebug_probe as driver
    return driver.main


def end(exception):
    """End the process as an interpreter ends after its main module raised `exception` (or returned: None)."""
    code = 0
    if isinstance(exception, SystemExit):
        code = exception.code if isinstance(exception.code, int) else (0 if exception.code is None else 1)
        if not isinstance(exception.code, (int, type(None))):
            print(exception.code, file=sys.stderr)
    elif exception is not None:
        import traceback

        traceback.print_exception(exception)
        code = 1
    import atexit

    atexit._run_exitfuncs()  # as at an interpreter's exit; no module is torn down one by one
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream the program closed
            pass
    os._exit(code)


def _terminal_streams():
    """sys.stdin, stdout and stderr over descriptors 0, 1 and 2 (now the terminal) as an interpreter makes
    them for a terminal: stdout line-buffered, stderr with backslash escapes."""
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        stream = io.open(fd, mode, buffering=-1 if fd == 0 else 1, encoding="utf-8",
                         errors="backslashreplace" if fd == 2 else "strict", closefd=False)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
