"""The warm eval interpreter's rehearsal: one pytest run, before the interpreter is ready, on the tests below
(passing, failing, raising), so that each forked run starts from code that has run. The interpreter has then
specialized the bytecode of pytest's set-up, collection, reporting and traceback formatting, and the caches
they fill on first use are full (about 10 ms of a small run).

The rehearsal reads nothing of the project and writes nothing: its tests are this file, whose folder is the
run's rootdir, working folder and conftest cut-off (no folder above is collected), no ini file (`-c
/dev/null`) or conftest.py counts, only pytest's own plugins load, and its output goes to a pipe that is
dropped. What it changed that a run could see is put back: the working folder, the environment, sys.path,
this module and the caches that name its file. `rehearse` returns the other modules it imported, which the
driver drops again where the project's folders would shadow them, as it does the learned ones.
"""

import gc
import os
import sys

import pytest


def rehearse():
    """Run the tests of this file once; returns the names of the modules the run imported and left."""
    import inspect
    import linecache

    tests = os.path.abspath(__file__)
    here = os.path.dirname(tests)
    sys.modules.pop(__name__, None)  # pytest imports the file anew, its asserts rewritten, as a test module
    cwd, environ, path, modules = os.getcwd(), dict(os.environ), list(sys.path), set(sys.modules)
    saved = [os.dup(1), os.dup(2)]
    sink, sink_end = os.pipe()
    os.set_blocking(sink_end, False)  # more output than the pipe holds fails the rehearsal, never blocks it
    try:
        for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
            os.environ.pop(name, None)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        for target in (1, 2):
            os.dup2(sink_end, target)
        os.chdir(here)
        pytest.main(["-q", "-p", "no:cacheprovider", "--noconftest", "-c", os.devnull, "--rootdir", here,
                     "--confcutdir", here, tests])
    except Exception:  # a run that cannot rehearse starts colder, no less correct
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        for target, copy in zip((1, 2), saved):
            os.dup2(copy, target)
            os.close(copy)
        os.close(sink)
        os.close(sink_end)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path
        sys.modules.pop(__name__, None)
        linecache.cache.pop(tests, None)
        for name in (tests, os.path.realpath(tests)):
            inspect.modulesbyfile.pop(name, None)
        getattr(inspect, "_filesbymodname", {}).pop(__name__, None)
        gc.collect()
    return set(sys.modules) - modules


@pytest.fixture
def value():
    return 2


def test_passes(value):
    assert value == 2


@pytest.mark.parametrize("n", [1, 2])
def test_compares(n, value):
    assert {"a": [n, value]} == {"a": [n, 3]}


def _deeper(n):
    if n:
        return _deeper(n - 1)
    raise ValueError(n)


def test_raises():
    _deeper(3)
