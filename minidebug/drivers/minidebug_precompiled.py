"""The task's own files compiled ahead by a warm eval interpreter, for every run it forks.

A fresh eval compiles each file of the project it imports, and pytest rewrites the asserts of each test
module and compiles that, every time: no bytecode is ever read (see minidebug_eval). On a real repository
that is most of an eval. So the host sends the warm interpreter the task's own (pristine) bytes of the tree's
files its tests import (learned from a run of the task's own tree: `tree_modules`), and the interpreter
compiles each as a run would (a module as the import system does, a test module or conftest as pytest's
assertion rewriting does), running none of it. In a run, a file whose bytes at import are exactly those gets
that code, which is what compiling it again would give; any other file (the agent changed it, or it is not
known) is compiled as usual, and so is a file whose compiling warned (the warning belongs to the run).

The code is held as the default values of the two functions that use it (reading a function's defaults is
an audited event, which minidebug_watch reports), never in a closure or a module global.
"""

import ast
import base64
import importlib.util
import os
import sys
import warnings

from minidebug_identity import names_in

PLAIN, REWRITTEN = "plain", "rewrite"


def compile_ahead(files):
    """{path: (kind, source bytes, code, names)} for the [path, kind, base64 bytes] the host sent, `names`
    what the watch reads of a test module or conftest (see minidebug_identity.names_in), else None; a file
    that does not compile, or whose compiling warned, is left out."""
    rewrite_asserts = _rewrite_asserts()
    compiled = {}
    for path, kind, data in files:
        source = base64.b64decode(data)
        if kind == REWRITTEN and rewrite_asserts is None:
            continue
        try:
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                names = None
                if kind == REWRITTEN:  # as pytest's _rewrite_test does, without a config: no assertion-pass hook
                    tree = ast.parse(source, filename=path)
                    names = names_in(tree)  # what the watch reads of a test module, before the rewriting
                    rewrite_asserts(tree, source, path, None)
                    code = compile(tree, path, "exec", dont_inherit=True)
                else:  # as SourceLoader.source_to_code does
                    code = compile(source, path, "exec", dont_inherit=True)
        except Exception:  # noqa: BLE001 - the run compiles it and meets the error itself
            continue
        if not warned:
            compiled[path] = (kind, source, code, names)
    return compiled


def _rewrite_asserts():
    """pytest's rewrite_asserts, where its _rewrite_test is the one this module stands in for (pytest 6 to 9:
    `(fn, config)`, read, parse, rewrite, compile); else None."""
    import inspect

    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return None
    try:
        if list(inspect.signature(rewrite._rewrite_test).parameters) != ["fn", "config"] \
                or _first_value(rewrite) is None:
            return None
    except (AttributeError, TypeError, ValueError):
        return None
    return getattr(rewrite, "rewrite_asserts", None)


def _first_value(rewrite):
    """What _rewrite_test returns beside the code: the file's stat ("stat", pytest ≤ 8) or its source hash
    ("hash", pytest 9), as its _write_pyc takes."""
    import inspect

    parameters = inspect.signature(rewrite._write_pyc).parameters
    return "stat" if "source_stat" in parameters else "hash" if "source_hash" in parameters else None


def install(compiled):
    """Put the compiled code to use in this process and the runs it forks: the import system's
    `source_to_code` and pytest's `_rewrite_test` give it for a file of exactly those bytes. Returns the two
    functions (whose defaults hold the code), for the watch to protect; none where nothing was compiled."""
    if not compiled:
        return []
    from importlib.machinery import SourceFileLoader

    plain = {path: entry for path, entry in compiled.items() if entry[0] == PLAIN}
    rewritten = {path: entry for path, entry in compiled.items() if entry[0] == REWRITTEN}
    original_source_to_code = SourceFileLoader.source_to_code

    def source_to_code(self, data, path, *, _optimize=-1, _plain=plain, _original=original_source_to_code):
        entry = _plain.get(path)
        if entry is not None and _optimize == -1 and entry[1] == data:
            return entry[2]
        return _original(self, data, path, _optimize=_optimize)

    SourceFileLoader.source_to_code = source_to_code
    hooks = [source_to_code]
    if rewritten:
        from _pytest.assertion import rewrite

        original_rewrite_test = rewrite._rewrite_test

        def _rewrite_test(fn, config, _rewritten=rewritten, _original=original_rewrite_test,
                          _first=_first_value(rewrite), _stat=os.stat, _hash=importlib.util.source_hash):  # noqa: B008 (held as defaults, see the docstring)
            entry = _rewritten.get(os.fspath(fn))
            if entry is not None and not config.getini("enable_assertion_pass_hook"):
                info = _stat(fn)
                with open(os.fspath(fn), "rb") as file:
                    source = file.read()
                if source == entry[1]:
                    return (info if _first == "stat" else _hash(source)), entry[2]
            return _original(fn, config)

        rewrite._rewrite_test = _rewrite_test
        hooks.append(_rewrite_test)
    return hooks


def names_ahead(compiled):
    """A function giving, for a file's path and bytes, what minidebug_identity.names_in found in exactly those
    bytes ahead (None for any other), holding them as its default value; None where there are none."""
    known = {path: (entry[1], entry[3]) for path, entry in compiled.items() if entry[3] is not None}
    if not known:
        return None

    def ahead(path, source, _known=known):
        entry = _known.get(path)
        return entry[1] if entry is not None and entry[0] == source else None

    return ahead


def tree_modules(tree):
    """[relative path, kind] of the modules this run imported from files of `tree` (what the host sends a
    warm interpreter to compile ahead): REWRITTEN where pytest's assertion rewriting loaded them."""
    prefix = os.path.join(tree, "")
    found = []
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str) or not filename.startswith(prefix) or not filename.endswith(".py"):
            continue
        loader = type(getattr(module, "__loader__", None))
        kind = REWRITTEN if loader.__module__ == "_pytest.assertion.rewrite" else PLAIN
        found.append([filename[len(prefix):], kind])
    return sorted(found)
