"""No file or folder the agent created becomes the import of a module it does not own.

A path the agent created (one not in the task's base) is imported only under a name that nothing else on the
search path answers to: not a module of the standard library or the venv, not the task's test module or
conftest beside it, not a folder of the task's that a namespace package spans. `guard` wraps the finder that
every import from a folder goes through (`FileFinder.find_spec`, used by importlib's PathFinder and by
pytest's assertion rewriter alike), so whatever put the folder on the path (the tree's root, a folder pytest
inserts, a `sys.path` entry the project adds) and whatever the form (a module, a package, a namespace
portion, an extension), such an import fails with an ImportError that names both paths, and the finding is
sent to the host. (A plain `python -m pytest` lets a project file named like a pure-Python module of the
standard library win; eval does not.)
"""

import os
import sys
import types
from importlib import machinery

_module_dict = types.ModuleType.__dict__["__dict__"].__get__


def guard(created, tree, flag):
    """Refuse imports of the paths in `created` (absolute, files and folders) that would shadow another
    module of the same name; `flag(finding)` tells the host. Paths are shown relative to `tree`."""
    created = frozenset(path.rstrip("/") for path in created) | frozenset(
        os.path.realpath(path) for path in created)
    if not created:
        return
    finder = machinery.FileFinder
    original = finder.find_spec
    suffixes = tuple(machinery.all_suffixes())
    exists, isdir, join, listdir, modules = os.path.exists, os.path.isdir, os.path.join, os.listdir, sys.modules
    prefix = os.path.join(tree, "")

    def shown(path):
        return path[len(prefix):] if path.startswith(prefix) else path

    def holds_modules(folder):
        try:
            return any(name.endswith(suffixes) for name in listdir(folder))
        except OSError:
            return False

    def elsewhere(fullname):
        """A path of another module or namespace portion that `fullname` answers to on its search path."""
        parent, _, tail = fullname.rpartition(".")
        try:
            entries = list(_module_dict(modules[parent]).get("__path__") or ()) if parent else list(sys.path)
        except (KeyError, TypeError):
            entries = []
        for entry in entries:
            if not isinstance(entry, str):
                continue
            folder = entry or os.getcwd()
            for candidate in [join(folder, tail, "__init__" + suffix) for suffix in suffixes] + \
                    [join(folder, tail + suffix) for suffix in suffixes]:
                if candidate not in created and exists(candidate):
                    return candidate
            portion = join(folder, tail)
            if portion not in created and isdir(portion) and holds_modules(portion):
                return portion
        return None

    def find_spec(self, fullname, target=None):
        spec = original(self, fullname, target)
        if spec is None:
            return None
        mine = spec.origin if spec.origin in created else next(
            (location for location in spec.submodule_search_locations or () if location in created), None)
        if mine is None:
            return spec
        other = elsewhere(fullname)
        if other is None:
            return spec
        flag(f"{shown(mine)}: the agent's new path would be imported as {fullname}, which is {shown(other)} "
             "(not the agent's); eval does not import it")
        if spec.loader is None:
            return None  # a namespace portion: left out of the package
        raise ImportError(f"minidebug: {shown(mine)} would shadow {shown(other)} as {fullname}; eval does not "
                          "import a new file under a name another module has", name=fullname)

    find_spec.__qualname__ = "FileFinder.find_spec"
    finder.find_spec = find_spec
