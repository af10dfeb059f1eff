"""Procedural bugs: each modifier finds its sites in a module's syntax tree (libcst, so that everything but the
changed code keeps its formatting) and makes one mutated source text per site.

A site is inside a function (its body, nested functions included), or, for the class modifiers, a class. Each
mutation names the modifier, the enclosing function or class (`Class.method`), that scope's lines (which tests
reach it is read from the coverage map) and the lines it changes.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..errors import MinidebugError

try:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
except ImportError as exc:  # pragma: no cover - the tests that need libcst skip without it
    raise MinidebugError("minidebug synth needs libcst: pip install 'minidebug[synth]'") from exc


@dataclass(frozen=True)
class Mutation:
    """One procedural bug in one file: the file's text with the bug, and where it is."""

    modifier: str
    path: str  # the file, relative to the repository root
    function: str  # the enclosing function (`Class.method`, `outer.inner`) or, for class modifiers, the class
    scope: tuple[int, int]  # first and last line of that function or class in the original file
    lines: tuple[int, int]  # first and last changed line in the original file
    buggy_lines: tuple[int, int]  # the same change's lines in the mutated file (a removal: the line after it)
    source: str  # the mutated file


@dataclass(frozen=True)
class _Scope:
    kind: str  # "function" or "class"
    name: str
    node: cst.CSTNode
    span: tuple[int, int]


# A replacement of a site: the node that takes the original's place, or cst.RemoveFromParent().
_Replace = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel"]
_Finder = Callable[[cst.CSTNode, Sequence[_Scope]], list[_Replace]]


def _same_spacing(kind: type) -> Callable[[cst.BaseCompOp], cst.BaseCompOp]:
    return lambda op: kind(whitespace_before=op.whitespace_before,  # type: ignore[attr-defined]
                           whitespace_after=op.whitespace_after)  # type: ignore[attr-defined]


_COMPARISONS: dict[type, Callable[[cst.BaseCompOp], cst.BaseCompOp]] = {
    cst.LessThan: _same_spacing(cst.LessThanEqual), cst.LessThanEqual: _same_spacing(cst.LessThan),
    cst.GreaterThan: _same_spacing(cst.GreaterThanEqual), cst.GreaterThanEqual: _same_spacing(cst.GreaterThan),
    cst.Equal: _same_spacing(cst.NotEqual), cst.NotEqual: _same_spacing(cst.Equal),
    cst.Is: _same_spacing(cst.IsNot), cst.IsNot: _same_spacing(cst.Is),
    cst.In: _same_spacing(cst.NotIn), cst.NotIn: _same_spacing(cst.In),
}
_ARITHMETIC = {"Add": "Subtract", "Subtract": "Add", "Multiply": "FloorDivide", "FloorDivide": "Multiply",
               "Divide": "Multiply"}
_AUGMENTED = {"AddAssign": "SubtractAssign", "SubtractAssign": "AddAssign", "MultiplyAssign": "FloorDivideAssign",
              "FloorDivideAssign": "MultiplyAssign", "DivideAssign": "MultiplyAssign"}
# Expressions that stay one operand when a wrapper call around them is removed (no parentheses needed).
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.ConcatenatedString,
          cst.FormattedString, cst.Integer, cst.Float, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp,
          cst.SetComp, cst.DictComp, cst.GeneratorExp)
_NOT_WRAPPERS = {"super", "print", "iter", "next", "type", "isinstance", "id", "len", "hasattr", "vars", "locals"}


def _in_function(scopes: Sequence[_Scope]) -> bool:
    return bool(scopes) and scopes[-1].kind == "function"


def _flip_comparison(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.Comparison) and _in_function(scopes)):
        return []
    flip = _COMPARISONS.get(type(node.comparisons[0].operator))
    if flip is None:
        return []

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(original, cst.Comparison)
        target = original.comparisons[0]
        return original.with_changes(comparisons=[target.with_changes(operator=flip(target.operator)),
                                                  *original.comparisons[1:]])
    return [replace]


def _flip_boolean(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.BooleanOperation) and _in_function(scopes)):
        return []

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(original, cst.BooleanOperation)
        op = original.operator
        kind = cst.Or if isinstance(op, cst.And) else cst.And
        return original.with_changes(operator=kind(whitespace_before=op.whitespace_before,
                                                   whitespace_after=op.whitespace_after))
    return [replace]


def _flip_arithmetic(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not _in_function(scopes):
        return []
    if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in _ARITHMETIC:
        table = _ARITHMETIC
    elif isinstance(node, cst.AugAssign) and type(node.operator).__name__ in _AUGMENTED:
        table = _AUGMENTED
    else:
        return []

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        op = original.operator  # type: ignore[attr-defined]
        kind = getattr(cst, table[type(op).__name__])
        return original.with_changes(operator=kind(whitespace_before=op.whitespace_before,
                                                   whitespace_after=op.whitespace_after))
    return [replace]


def _invert_if_else(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.If) and isinstance(node.orelse, cst.Else) and _in_function(scopes)):
        return []

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(original, cst.If) and isinstance(original.orelse, cst.Else)
        return original.with_changes(body=original.orelse.body,
                                     orelse=original.orelse.with_changes(body=original.body))
    return [replace]


def _remove(node: cst.CSTNode) -> cst.RemovalSentinel:
    return cst.RemoveFromParent()


def _remove_loop(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    return [_remove] if isinstance(node, (cst.For, cst.While)) and _in_function(scopes) else []


def _remove_conditional(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    return [_remove] if isinstance(node, cst.If) and node.orelse is None and _in_function(scopes) else []


def _remove_assignment(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and _in_function(scopes)):
        return []
    statement = node.body[0]
    if isinstance(statement, (cst.Assign, cst.AugAssign)) or (
            isinstance(statement, cst.AnnAssign) and statement.value is not None):
        return [_remove]
    return []


def _remove_wrapper(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.Call) and _in_function(scopes) and len(node.args) == 1):
        return []
    arg = node.args[0]
    if arg.keyword is not None or arg.star or not isinstance(arg.value, _ATOMS):
        return []
    name = node.func.value if isinstance(node.func, cst.Name) else (
        node.func.attr.value if isinstance(node.func, cst.Attribute) else None)
    if name is None or name in _NOT_WRAPPERS:
        return []

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(original, cst.Call)
        value = original.args[0].value
        return value.with_changes(lpar=[*original.lpar, *value.lpar], rpar=[*value.rpar, *original.rpar])
    return [replace]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _shuffle_lines(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    """Two neighbouring simple statements of a block swapped (neither a docstring, a return or a raise)."""
    if not (isinstance(node, cst.IndentedBlock) and _in_function(scopes)):
        return []
    body = list(node.body)
    found: list[_Replace] = []
    for index in range(len(body) - 1):
        first, second = body[index], body[index + 1]
        if not all(isinstance(s, cst.SimpleStatementLine) and not _is_docstring(s)
                   and not isinstance(s.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break, cst.Pass))
                   for s in (first, second)):
            continue
        if cst.Module([]).code_for_node(first).strip() == cst.Module([]).code_for_node(second).strip():
            continue

        def replace(original: cst.CSTNode, index: int = index) -> cst.CSTNode:
            assert isinstance(original, cst.IndentedBlock)
            statements = list(original.body)
            one, two = statements[index], statements[index + 1]
            # Each statement keeps the blank lines and comments above its position, not above itself.
            statements[index] = two.with_changes(leading_lines=one.leading_lines)  # type: ignore[attr-defined]
            statements[index + 1] = one.with_changes(leading_lines=two.leading_lines)  # type: ignore[attr-defined]
            return original.with_changes(body=statements)
        found.append(replace)
    return found


def _change_constant(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not (isinstance(node, cst.Integer) and _in_function(scopes)):
        return []
    value = node.evaluated_value
    changed = value - 1 if value >= 1 else value + 1

    def replace(original: cst.CSTNode) -> cst.CSTNode:
        return original.with_changes(value=str(changed))
    return [replace]


def _drop_base_class(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    if not isinstance(node, cst.ClassDef):
        return []
    found: list[_Replace] = []
    for index, base in enumerate(node.bases):
        if isinstance(base.value, cst.Name) and base.value.value == "object" or base.star:
            continue

        def replace(original: cst.CSTNode, index: int = index) -> cst.CSTNode:
            assert isinstance(original, cst.ClassDef)
            bases = [b for i, b in enumerate(original.bases) if i != index]
            if bases and index == len(original.bases) - 1:  # the new last base keeps the old last one's comma
                bases[-1] = bases[-1].with_changes(comma=original.bases[-1].comma)
            if bases or original.keywords:
                return original.with_changes(bases=bases)
            return original.with_changes(bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT,
                                         whitespace_before_colon=cst.SimpleWhitespace(""))
        found.append(replace)
    return found


def _drop_method(node: cst.CSTNode, scopes: Sequence[_Scope]) -> list[_Replace]:
    # scopes[-1] is this method's own scope; the one below it is the class.
    if isinstance(node, cst.FunctionDef) and len(scopes) >= 2 and scopes[-2].kind == "class":
        return [_remove]
    return []


# The modifiers, by name (the order in which a site's mutations are made). Class modifiers' scope is the class.
MODIFIERS: dict[str, _Finder] = {
    "flip_comparison": _flip_comparison,
    "flip_boolean": _flip_boolean,
    "flip_arithmetic": _flip_arithmetic,
    "invert_if_else": _invert_if_else,
    "remove_loop": _remove_loop,
    "remove_conditional": _remove_conditional,
    "remove_assignment": _remove_assignment,
    "remove_wrapper": _remove_wrapper,
    "shuffle_lines": _shuffle_lines,
    "change_constant": _change_constant,
    "drop_base_class": _drop_base_class,
    "drop_method": _drop_method,
}
CLASS_MODIFIERS = {"drop_base_class", "drop_method"}


class _Sites(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, modifiers: Sequence[str]):
        super().__init__()
        self.modifiers = modifiers
        self.scopes: list[_Scope] = []
        self.found: list[tuple[str, cst.CSTNode, _Replace, _Scope]] = []

    def _span(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.get_metadata(PositionProvider, node)
        start = position.start.line
        for decorator in getattr(node, "decorators", ()):
            start = min(start, self.get_metadata(PositionProvider, decorator).start.line)
        return start, position.end.line

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            outer = [scope.name for scope in self.scopes]
            kind = "function" if isinstance(node, cst.FunctionDef) else "class"
            self.scopes.append(_Scope(kind, ".".join([*outer, node.name.value]), node, self._span(node)))
        for name in self.modifiers:
            replaces = MODIFIERS[name](node, self.scopes)
            if not replaces:
                continue
            scope = self.scopes[-2] if name == "drop_method" else self.scopes[-1]
            for replace in replaces:
                self.found.append((name, node, replace, scope))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.scopes and self.scopes[-1].node is original_node:
            self.scopes.pop()


class _Replacer(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replace: _Replace):
        super().__init__()
        self.target, self.replace = target, replace

    def on_leave(self, original_node, updated_node):
        if original_node is self.target:
            return self.replace(original_node)
        return updated_node


@dataclass(frozen=True)
class Site:
    """Where one modifier can make one mutation; `mutate` makes it (a full pass over the module, so sites are
    found for every modifier at once and only the mutations tried are made)."""

    modifier: str
    path: str
    function: str
    scope: tuple[int, int]
    _module: cst.Module
    _node: cst.CSTNode
    _replace: _Replace
    _source: str

    def mutate(self) -> Mutation | None:
        """The mutation, or None when it would not change the code or not compile."""
        try:
            mutated = self._module.visit(_Replacer(self._node, self._replace)).code
            compile(mutated, self.path, "exec")
        except (SyntaxError, ValueError, cst.CSTValidationError):
            return None
        if mutated == self._source:
            return None
        lines, buggy = changed_lines(self._source, mutated)
        return Mutation(self.modifier, self.path, self.function, self.scope, lines, buggy, mutated)


def sites(path: str, source: str, modifiers: Sequence[str] | None = None) -> list[Site]:
    """Every site of the named modifiers (default: all) in a module's text `source` (at `path`), in the order
    of the file; none when the text does not parse.

    Raises:
        MinidebugError: a modifier name is unknown.
    """
    names = list(modifiers) if modifiers is not None else list(MODIFIERS)
    unknown = [name for name in names if name not in MODIFIERS]
    if unknown:
        raise MinidebugError(f"unknown modifier(s) {', '.join(unknown)}; known: {', '.join(MODIFIERS)}")
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return []
    found = _Sites(names)
    wrapper.visit(found)
    return [Site(name, path, scope.name, scope.span, wrapper.module, node, replace, source)
            for name, node, replace, scope in found.found]


def mutations(path: str, source: str, modifiers: Sequence[str] | None = None) -> Iterator[Mutation]:
    """Every mutation of `source` by the named modifiers (default: all), in the order of their sites; one that
    would not change the code, or not compile, is left out."""
    for site in sites(path, source, modifiers):
        mutation = site.mutate()
        if mutation is not None:
            yield mutation


def changed_lines(before: str, after: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first and last changed line of `before`, and of `after` (a removal's: the line that follows it)."""
    old, new = before.splitlines(), after.splitlines()
    blocks = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not blocks:
        return (0, 0), (0, 0)
    i1, j1 = blocks[0][1], blocks[0][3]
    i2, j2 = blocks[-1][2], blocks[-1][4]
    return (i1 + 1, max(i2, i1 + 1)), (j1 + 1, max(j2, j1 + 1))
