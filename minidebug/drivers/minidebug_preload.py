"""Imports ahead of a run: pytest's own plugins, what pytest imports in every run, and named modules.

Shared by the eval driver (before its run, and in a warm interpreter) and the pdb and probe drivers (in a
process started ahead of its first command). A module that fails to import is left for the run to report.
"""

import importlib
import os
import sys


def import_ahead(names):
    """Import pytest, its default plugins, the modules it imports lazily in every run, then `names`."""
    import pytest  # noqa: F401

    try:
        from _pytest.config import default_plugins
    except ImportError:  # a pytest without the list: its plugins are imported when the run loads them
        default_plugins = ()
    # pdb and the modules below are what pytest imports after its plugins, in every run.
    lazy = ["pdb", "faulthandler", "_pytest._argcomplete"]
    for name in [f"_pytest.{name}" for name in default_plugins] + lazy + list(names):
        try:
            importlib.import_module(name)
        except Exception:  # the run reports it when it imports the module itself
            pass


def imported_ahead(names):
    """import_ahead(names); returns the top-level names of the modules it imported (see `shadowed`)."""
    before = set(sys.modules)
    import_ahead(names)
    return {name.partition(".")[0] for name in set(sys.modules) - before}


def shadowed(names):
    """Whether a folder ahead of the venv's site-packages on sys.path holds a module or regular package of
    one of the top-level `names` (a namespace folder would not shadow it): then the program must import
    that one, and a process started ahead execs a fresh interpreter instead."""
    from importlib.machinery import PathFinder

    ahead = []
    for entry in sys.path:
        if "site-packages" in entry or entry.startswith(sys.base_prefix):
            break
        ahead.append(entry or os.getcwd())
    for name in names:
        spec = PathFinder.find_spec(name, ahead)
        if spec is not None and spec.origin not in (None, "namespace"):
            return True
    return False
