"""pytest's own repository, its assertion rewriter changed by the agent: the task's own test modules and
conftests are compiled by the base's rewriter.

When the project is pytest (`project_pytest`, see minidebug_eval), its own rewriter compiles the test
modules and conftests it imports, and runs their code itself (`exec(co, module.__dict__)` in its loader's
`exec_module`). A rewriter the agent changed is the agent's code: what it compiles under a test file's name
cannot be told from the file (compile() called from it marks that name as the agent's), and the namespace its
loader runs code in is its own say (the watch records a file's namespace only where a trusted loader runs the
file's code), so every test of every module it loads would be refused.

So the host sends the base's bytes of the rewriter (`pristine_rewriter`), the driver runs them as a module of
its own (under the name `<pristine PATH>`, never in sys.modules) and stands in for the project's
`_rewrite_test`: a file of the tree that is not the agent's is read, rewritten and compiled by the base's
`_rewrite_test`, which is what the base's own run makes of those bytes, and every other file (pytester's, the
agent's) by the project's own, whose behaviour is what the tests test. Each code object the base's rewriter
compiled is vouched for (see minidebug_identity.Genuine.vouched): whoever runs it, the watch records the
namespace it runs in, read from its own frame as it starts, never from the loader's (see minidebug_watch).
Code the changed rewriter compiles for a test file is still refused, as any other code compiled under the name
of a task's file by code of the agent's is.
"""

import base64
import inspect
import os
import types

_module_dict = types.ModuleType.__dict__["__dict__"].__get__


def install(rewriter, tree, agent_files):
    """Stand in for the project's `_pytest.assertion.rewrite._rewrite_test` with the base's (`rewriter`: [its
    path relative to `tree`, its base64 bytes], sent by the host where the agent changed it), for the tree's
    files that are not among `agent_files` (absolute paths). Returns (the stand-in, whose defaults hold what it
    uses, for the watch to protect; the dict the code objects it compiled are kept in, by id); (None, {}) where the
    project's module is not the tree's file, or the base's module does not run or has no `_rewrite_test`
    that takes a file (the project's rewriter then compiles everything, as without this)."""
    import sys

    made = {}
    rel, data = rewriter
    module = sys.modules.get("_pytest.assertion.rewrite")
    if not issubclass(type(module), types.ModuleType):
        return None, made
    own = _module_dict(module)  # never through the module's class, which the project's code may have set
    if own.get("__file__") != os.path.join(tree, rel) or not callable(own.get("_rewrite_test")):
        return None, made
    name = f"<pristine {rel}>"
    namespace = {"__name__": "minidebug_pristine_rewrite", "__file__": name, "__builtins__": __builtins__}
    try:
        exec(compile(base64.b64decode(data), name, "exec", dont_inherit=True), namespace)
        pristine = namespace["_rewrite_test"]
        parameters = list(inspect.signature(pristine).parameters)
    except Exception:  # noqa: BLE001 - a rewriter the base's interpreter cannot run: the project's compiles
        return None, made
    if "fn" not in parameters:
        return None, made
    prefix, agents, at = os.path.join(tree, ""), frozenset(agent_files), parameters.index("fn")

    def _rewrite_test(*args, _pristine=pristine, _original=own["_rewrite_test"], _made=made,
                      _at=at, _prefix=prefix, _agents=agents, _fspath=os.fspath,
                      _code=types.CodeType):
        try:
            fn = _fspath(args[_at])
        except (IndexError, TypeError):
            fn = None
        if type(fn) is not str or not fn.startswith(_prefix) or fn in _agents:
            return _original(*args)
        result = _pristine(*args)
        code = result[1] if type(result) is tuple and len(result) == 2 else None
        if type(code) is _code:
            _made[id(code)] = code
        return result

    own["_rewrite_test"] = _rewrite_test
    return _rewrite_test, made
