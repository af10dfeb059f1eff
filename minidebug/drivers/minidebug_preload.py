"""Imports ahead of a run: pytest's own plugins, what pytest imports in every run, and named modules.

Shared by the eval driver (before its run, and in a warm interpreter) and the pdb driver (in a session
started ahead of its first command). A module that fails to import is left for the run to report.
"""

import importlib


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
