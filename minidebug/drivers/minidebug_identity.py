"""What a counted test calls is the task's own code, as its file defines it.

The watch (see minidebug_watch) tells `Genuine` each time a trusted loader (importlib's, pytest's assertion
rewriter) runs the code compiled from a file of the tree that nothing of the agent's wrote, or any loader runs
the code the driver itself compiled from such a file (see minidebug_rewriter): the namespace that code ran in is
the file's genuine namespace, and each code object compiled with it is the file's. Before each
test's call, `Genuine.problem` resolves the test's node id in that namespace (a function at module level, or
a method found through its class's bases, as it was bound at the file's first test) and requires that pytest
is about to call exactly that: a plain function compiled from that file (or from another of the task's),
running in that file's genuine namespace, bound to an instance of the genuine class for a method, and for a
test the file defines with `def` under its own name, not another function the file defines by name; and
each name the file binds by a module-level import alone must still be what that import gives (the module,
or its attribute as that module holds it), not something project code rebound it to. A wrapper from a trusted file (a
decorator of the venv's) is looked through by its `__wrapped__`. Whatever else an attribute lookup, a module
of another class, a replaced `sys.modules` entry or a made-up function produced is a failure of the test and
a finding. Nothing here calls code of the project: attributes are read through the types' own descriptors.
"""

import os
import sys
import types

_FUNCTION, _METHOD, _CODE = types.FunctionType, types.MethodType, types.CodeType
_WRAPPERS = (staticmethod, classmethod)
from minidebug_modules import class_namespace as _class_dict
from minidebug_modules import dict_version_reader
_mro = type.__dict__["__mro__"].__get__
_qualname = type.__dict__["__qualname__"].__get__
_module_dict = types.ModuleType.__dict__["__dict__"].__get__
_OPTIMIZED = 0x1  # CO_OPTIMIZED: a function's code, not a class body's


def namespace_of_exec(frame, code):
    """The globals that `code` is being run in, from the frame of the loader that called exec(): importlib's
    `_call_with_frames_removed(exec, code, namespace)` or a loader's `exec(code, module.__dict__)`; None when
    neither is found."""
    for value in frame.f_locals.values():
        if type(value) is tuple and len(value) >= 2 and value[0] is code and type(value[1]) is dict:
            return value[1]
    for value in frame.f_locals.values():
        if issubclass(type(value), types.ModuleType):
            namespace = _module_dict(value)
            if namespace.get("__file__") == code.co_filename:
                return namespace
    return None


def _qualnames(code, prefix, into):
    """Every code object nested in `code`, keyed by id: (code, its qualified name)."""
    for const in code.co_consts:
        if type(const) is _CODE:
            name = getattr(const, "co_qualname", prefix + const.co_name)
            into[id(const)] = (const, name)
            _qualnames(const, name + (".<locals>." if const.co_flags & _OPTIMIZED else "."), into)


class Genuine:
    """The genuine namespaces and code of the tree's files, and the check of what a test calls."""

    def __init__(self, judge, names_ahead=None, vouched=None):
        """`judge(filename)`: True for an untrusted file (see minidebug_watch), False for a trusted one;
        `names_ahead`: see _file_names; `vouched`: {id(code): code} of the module code the driver compiled
        from the task's own files itself (see minidebug_rewriter)."""
        self._judge, self._names_ahead = judge, names_ahead
        self._vouched = {} if vouched is None else vouched
        self._namespaces = {}  # real path -> [namespace]: the globals its code ran in
        self._codes = {}  # id(code) -> (code, real path, qualified name)
        self._defined = {}  # real path -> qualified names of the functions the file defines
        self._bindings = {}  # (real path, names) -> (owner class or None, value), at the file's first test
        self._clean = {}  # id(class) -> (class, None or why its bases hold code of the agent's)
        self._real = {}
        self._imports = {}  # real path -> [(name, [(module, attribute or None)])] (see _module_imports)
        self._unbound = {}  # real path -> the names the file reads and never binds (see _unbound_reads)
        self._names = {}  # real path -> what _file_names read of it (each file is parsed once a run)
        self._version = dict_version_reader()
        self._copies = {}  # real path -> (version tag, a copy of its namespace): see namespace_mark
        self._clean_at = {}  # real path -> its namespace's version tag when its imports and names last held
        self._ordered = {}  # real path -> None, or why its namespace's order is not its file's (see _order_problem)
        self._bound = {}  # real path -> {name: what it bound, found to be what its import gave} (see settle_imports)

    def real(self, path):
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = os.path.realpath(path)
        return found

    def vouched(self, code):
        """Whether the driver compiled `code` from its file itself: whoever runs it, it is the file's."""
        return self._vouched.get(id(code)) is code

    def record(self, code, namespace):
        """The module code `code`, compiled from its file, runs in `namespace`."""
        path = self.real(code.co_filename)
        self._namespaces.setdefault(path, []).append(namespace)
        found = {}
        _qualnames(code, "", found)
        for key, (nested, name) in found.items():
            self._codes[key] = (nested, path, name)
        self._defined.setdefault(path, set()).update(name for nested, name in found.values()
                                                     if nested.co_flags & _OPTIMIZED)

    def problem(self, item, nodeid, path):
        """Why what pytest is about to call for test `item` (its node id, its file) is not the task's test
        as its file defines it; None when it is."""
        path = self.real(path)
        namespaces = self._namespaces.get(path)
        if not namespaces:
            return "no code compiled from its file ran (something else stood in for the test module)"
        version = self._version(namespaces[0]) if self._version is not None else None
        if version is None or self._clean_at.get(path) != version:  # its namespace was written since
            why = self._imports_problem(path, namespaces[0]) or self._shadow_problem(path, namespaces[0])
            if why:
                return why
            self._clean_at[path] = version
        if path not in self._ordered:  # once: pytest collected the file's tests in its namespace's order
            self._ordered[path] = self._order_problem(path, namespaces[0])
        if self._ordered[path]:
            return self._ordered[path]
        names = tuple(nodeid.split("[", 1)[0].split("::")[1:])
        if not names:
            return None
        key = (path, names)
        binding = self._bindings.get(key)
        if binding is None:
            binding = self._bindings[key] = _resolve(namespaces[0], names)
        owner, expected = binding
        if expected is None:
            return f"its file defines nothing named {'.'.join(names)}"
        try:
            called = item.obj
        except Exception as exc:  # what pytest would call cannot even be found
            return f"what it calls could not be found ({type(exc).__name__})"
        if type(called) is _METHOD:
            instance, called = called.__self__, called.__func__
            if owner is None or type(instance) is not owner:
                return "it is called on an instance of another class than the one its file defines"
        elif owner is not None and getattr(item, "cls", None) is not owner:
            return "its class is not the one its file defines"
        if owner is not None:
            why = self._class_problem(owner)
            if why:
                return why
        if type(expected) in _WRAPPERS:
            expected = expected.__func__
        if called is not expected:
            return "what pytest calls is not the function its file binds to that name"
        return self._function_problem(called, path, ".".join(names))

    def _order_problem(self, path, namespace):
        """Why the file's own functions and classes are not in its namespace in the file's order (a name put
        there by other code before the file bound it keeps its early place, and pytest collects, and runs, the
        tests in the namespace's order); None when they are."""
        order = self._file(path)[5]
        place = {name: index for index, name in enumerate(order)}
        places = [place[name] for name in list(namespace) if name in place]
        if places != sorted(places):
            return "its module's names are not in its file's order (one was put there before the file bound it), " \
                   "so its tests would not run in the file's order"
        return None

    def settle_imports(self, paths):
        """Note what the test modules of `paths` bind by their imports, where it is what each import gives, as
        the tests are collected and before any runs: a module of the project that later rebinds its own name
        (a function that puts another in its place when first called) leaves the test module's binding as its
        import gave it, which stays the test's."""
        for path in paths:
            path = self.real(path)
            namespaces = self._namespaces.get(path)
            if namespaces:
                self._imports_problem(path, namespaces[0])

    def _imports_problem(self, path, namespace):
        """Why a name the file binds by a module-level import (and nowhere else) is not what that import gives
        (the imported module, or its attribute as the module itself holds it), say rebound in the test module
        by project code while the test module was being imported; None when each is."""
        imports = self._imports.get(path)
        if imports is None:
            if self._judge(path) is not False:  # written while the tests ran: not the source that was run
                return "its file was written during the run"
            imports = self._imports[path] = _module_imports(self._file(path))
        settled = self._bound.setdefault(path, {})
        for name, sources in imports:
            if name not in namespace:  # an import that did not run (under an `if`): it bound nothing to judge
                continue
            bound, known = namespace[name], False
            if name in settled and settled[name] is bound:
                continue  # as its import gave it when last seen so
            for module_name, attribute in sources:
                expected = _imported(module_name, attribute, namespace)
                if expected is None:
                    continue
                known = True
                if bound is expected:
                    settled[name] = bound
                    break
            else:
                if known:
                    return f"its module's {name} is not what its import gives (it was rebound)"
        return None

    def namespace_version(self, path):
        """A number that changes whenever the file's genuine namespace is written (Python < 3.12, whose dict
        watchers see each write as it happens; see minidebug_writes), or None."""
        namespaces = self._namespaces.get(self.real(path))
        if not namespaces or self._version is None:
            return None
        return self._version(namespaces[0])

    def namespace_mark(self, path):
        """namespace_version(path), with a copy of the namespace as it is now (made again only when it was
        written since the last copy), for `written_names` after the test."""
        version = self.namespace_version(path)
        if version is not None:
            path = self.real(path)
            copy = self._copies.get(path)
            if copy is None or copy[0] != version:
                self._copies[path] = (version, dict(self._namespaces[path][0]))
        return version

    def written_names(self, path):
        """The names of the file's namespace added, removed or rebound since `namespace_mark(path)`."""
        path = self.real(path)
        namespace, (_, before) = self._namespaces[path][0], self._copies[path]
        now = dict(namespace)
        return {name for name in before.keys() | now.keys() if before.get(name, before) is not now.get(name, now)}

    def writes_its_globals(self, path):
        """Whether the file's own code may write its namespace as a test runs (a `global` statement)."""
        return bool(self._file(self.real(path))[4])

    def _file(self, path):
        found = self._names.get(path)
        if found is None:
            found = self._names[path] = _file_names(path, self._names_ahead)
        return found

    def _shadow_problem(self, path, namespace):
        """Why the module's namespace holds a name its file reads but never binds (a built-in's, say: `sum`),
        which only other code can have put there: the file's reads of it now get that instead; None when it
        holds none."""
        unbound = self._unbound.get(path)
        if unbound is None:
            unbound = self._unbound[path] = _unbound_reads(self._file(path))
        for name in unbound:
            if name in namespace:
                return f"its module holds {name}, which its file reads but never binds (put there by other code)"
        return None

    def _function_problem(self, function, path, qualname):
        for _ in range(16):
            if type(function) is not _FUNCTION:
                return f"it calls a {type(function).__name__}, not a function compiled from the task's files"
            code = function.__code__
            entry = self._codes.get(id(code))
            if entry is not None and entry[0] is code:
                _, where, name = entry
                if not any(namespace is function.__globals__ for namespace in self._namespaces.get(where, ())):
                    return "its function runs in another namespace than its file's"
                if where == path and name != qualname and "<locals>" not in name \
                        and qualname in self._defined.get(path, ()):  # another test of the file, not a wrapper
                    return f"it calls the file's {name}, not its {qualname}"
                return None
            if self._judge(code.co_filename) is not False:
                return f"it calls code of {code.co_filename.rsplit('/', 1)[-1]}, not the task's test"
            wrapped = function.__dict__.get("__wrapped__") if type(function.__dict__) is dict else None
            if wrapped is None:
                return None  # a trusted file's function (a decorator's wrapper) bound under the test's name
            function = wrapped
        return "its wrappers go on too deep"

    def _class_problem(self, owner):
        entry = self._clean.get(id(owner))
        if entry is None or entry[0] is not owner:
            entry = self._clean[id(owner)] = (owner, self._untrusted_in(owner))
        return entry[1]

    def _assigned_in(self, klass):
        """The names a class of one of the task's files binds in its body by a statement other than `def` or
        `class` (`DECORATOR = staticmethod(func.lru_cache)`), as its file says; empty for any other class."""
        name = _class_dict(klass).get("__module__")
        module = sys.modules.get(name) if type(name) is str else None
        filename = _module_dict(module).get("__file__") if issubclass(type(module), types.ModuleType) else None
        if type(filename) is not str or self.real(filename) not in self._namespaces:
            return ()
        return self._file(self.real(filename))[6].get(_qualname(klass), ())

    def _untrusted_in(self, owner):
        # `or`: __mro__ is None for a static type not readied yet (unicodedata.UCD before 3.10)
        for klass in _mro(owner) or (owner,):
            assigned = self._assigned_in(klass)
            for name, value in _class_dict(klass).items():
                if name in assigned:
                    continue  # what the class body's own statement made of the project's code, as a test may
                if type(value) in _WRAPPERS:
                    value = value.__func__
                if type(value) is _FUNCTION and self._judge(value.__code__.co_filename) is not False:
                    return f"its class's {name} comes from {value.__code__.co_filename.rsplit('/', 1)[-1]}"
        return None


def _module_imports(names):
    """[(name, [(absolute or relative module name, attribute or None)])]: the names the file (`names`: what
    _file_names read of it) binds by module-level imports only (not `*`, not also assigned, defined or declared
    global anywhere)."""
    imports, other = names[0], names[1]
    if "*" in other:
        return []  # a star import may bind anything
    return [(name, sources) for name, sources in imports.items() if name not in other]


def _unbound_reads(names):
    """The names the file (`names`: what _file_names read of it) reads that no module-level statement of it
    binds (nor a `global`, nor an import):
    what it means as the built-ins (or as nothing). Empty when a star import may bind anything."""
    imports, other, module_level, read = names[:4]
    if "*" in other:
        return frozenset()
    return frozenset(name for name in read - module_level - set(imports)
                     if not (name.startswith("__") and name.endswith("__")))  # `__file__`: the import system's


def _file_names(path, ahead):
    """(module-level imports as in _module_imports, the names bound anywhere (with "*" for a star import), the
    names bound at module level or declared global, the names read anywhere, the names declared `global`, the
    names of the module's own `def` and `class` statements in the file's order, each bound there alone, and
    for each class (by qualified name) the names its body binds by other statements than `def` and `class`);
    for a file that cannot be read, a star import and a `global` (nothing can be told of it). `ahead(path,
    source)`: what names_in found in those very bytes ahead of the run (see minidebug_precompiled), or None."""
    import ast

    try:
        with open(path, "rb") as file:
            source = file.read(1 << 24)
        found = ahead(path, source) if ahead is not None else None
        return found if found is not None else names_in(ast.parse(source, filename=path))
    except (OSError, SyntaxError, ValueError):
        return {}, {"*"}, set(), set(), {"*"}, (), {}


def names_in(tree):
    """What _file_names tells of a module's syntax tree (as parsed, before any rewriting)."""
    import ast

    imports, other, module_level, read, declared = {}, set(), set(), set(), set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        compound = isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) \
            or type(node).__name__ == "TryStar"
        if compound:
            for field in ("body", "orelse", "finalbody"):
                statements += getattr(node, field, [])
            statements += [statement for handler in getattr(node, "handlers", []) for statement in handler.body]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module_level.add(node.name)
        else:
            for child in ast.walk(node):  # its targets (and a walrus's), not a nested scope's
                if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                    module_level.add(child.id)
                elif isinstance(child, ast.ExceptHandler) and child.name:
                    module_level.add(child.name)
        if compound:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                imports.setdefault(bound, []).append((alias.name if alias.asname else bound, None))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                imports.setdefault(alias.asname or alias.name, []).append((module, alias.name))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.Name):
            (other if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, ast.Global):
            other.update(node.names)
            module_level.update(node.names)
            declared.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.alias) and node.name == "*":
            other.add("*")
    return imports, other, module_level, read, declared, _defined_in_order(tree), _class_assignments(tree.body, "")


def _class_assignments(body, prefix):
    """{qualified name of a class: the names its body binds by statements other than `def` and `class`} for
    the classes of `body` and those nested in them."""
    import ast

    found = {}
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        name, assigned = prefix + node.name, set()
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for child in ast.walk(statement):
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                    assigned.add(child.id)
                elif isinstance(child, ast.alias):
                    assigned.add((child.asname or child.name).split(".", 1)[0])
        found[name] = frozenset(assigned)
        found.update(_class_assignments(node.body, name + "."))
    return found


def _defined_in_order(tree):
    """The names that a `def` or `class` statement of the module's body binds, in the file's order, where no
    other statement of the file binds, deletes or declares the name: the order in which running the file
    puts them in its namespace (in which pytest collects its tests)."""
    import ast

    bound = {}
    for node in ast.walk(tree):
        names = ()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = (node.name,)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = (node.id,)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = node.names
        elif isinstance(node, ast.alias):
            names = ((node.asname or node.name).split(".", 1)[0],)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names = (node.name,)
        for name in names:
            bound[name] = bound.get(name, 0) + 1
    return tuple(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef)) and bound[node.name] == 1)


def _imported(module_name, attribute, namespace):
    """What `import module_name` or `from module_name import attribute` gives now, read from the module's own
    namespace (no code of a module runs here); None where that cannot be told."""
    import sys

    if module_name.startswith("."):
        level = len(module_name) - len(module_name.lstrip("."))
        package = namespace.get("__package__")
        if not isinstance(package, str) or not package:
            return None
        parts = package.split(".")
        if level > len(parts):
            return None
        base = ".".join(parts[:len(parts) - level + 1])
        module_name = base + ("." + module_name[level:] if module_name[level:] else "")
    module = sys.modules.get(module_name)
    if not issubclass(type(module), types.ModuleType):
        return None
    if attribute is None:
        return module
    found = _module_dict(module).get(attribute)
    if found is None:
        submodule = sys.modules.get(f"{module_name}.{attribute}")
        return submodule if issubclass(type(submodule), types.ModuleType) else None
    return found


def _resolve(namespace, names):
    """(the class that owns the last name or None, the value bound to the last name) in `namespace`."""
    owner, value = None, namespace.get(names[0])
    for name in names[1:]:
        if not issubclass(type(value), type):
            return None, None
        owner, value = value, None
        # `or`: __mro__ is None for a static type not readied yet (unicodedata.UCD before 3.10)
        for klass in _mro(owner) or (owner,):
            found = _class_dict(klass).get(name)
            if found is not None:
                value = found
                break
    return owner, value
