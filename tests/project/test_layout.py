"""The package's layout holds: subpackages along the data path, imports pointing one way, no import circle.

Every import is counted, including those made inside functions, so a circle cannot hide in one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

PACKAGE = Path(__file__).resolve().parents[2] / "minidebug"
README = PACKAGE.parent / "README.md"

# Lower ranks are further down the data path. A module may import its own subpackage and subpackages of a
# lower rank, never one of its own rank or above.
RANKS = {
    "drivers": 0,  # scripts run inside the program's interpreter: they import nothing of the package
    "errors": 0,
    "sandbox": 1,
    "tasks": 2,
    "store": 3,
    "workspace": 4,
    "runner": 5,  # the execution engine: warm interpreters, rooms and their pool, forked pdb and probe starts
    "scoring": 6,
    "tools": 7,
    "core": 8,
    "agents": 9,
    "report": 9,
    "taskcheck": 10,
    "integrations": 10,
    "synth": 10,  # tasks from procedural bugs: tasks, store and sandbox below it, the CLI above
    "run": 11,
}
SKIPPED = {"smoke_tasks"}  # task data
ENTRY_POINTS = {"minidebug", "minidebug.__main__"}  # the public names and `python -m minidebug`: above every room


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if not SKIPPED & set(path.relative_to(PACKAGE).parts):
            found[module_name(path)] = path
    return found


def imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
                       for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("minidebug") and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: imports(name, path, modules) for name, path in modules.items()}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_lives_in_a_known_room():
    stray = [name for name in package_modules() if name not in ENTRY_POINTS and room(name) not in RANKS]
    assert stray == [], f"modules outside the layout (add them to a subpackage): {stray}"


def test_no_import_circle_even_through_function_level_imports():
    assert cycles(graph()) == []


def test_imports_point_down_the_data_path():
    wrong = []
    for module, targets in graph().items():
        for target in targets:
            if module in ENTRY_POINTS:
                continue  # they may import every room
            if target in ENTRY_POINTS:
                wrong.append(f"{module} imports minidebug itself (import from the room that defines the name)")
            elif room(target) != room(module) and RANKS[room(target)] >= RANKS[room(module)]:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_the_checker_catches_a_circle_and_an_upward_import():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    edges = {"minidebug.sandbox.x": {"minidebug.core.env"}}
    upward = [(m, t) for m, ts in edges.items() for t in ts if RANKS[room(t)] >= RANKS[room(m)]]
    assert upward == [("minidebug.sandbox.x", "minidebug.core.env")]


def test_function_level_imports_are_seen(tmp_path):
    module = tmp_path / "minidebug" / "tasks" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text("def f():\n    from ..scoring.evaluate import evaluate\n")
    known = {"minidebug.tasks.x": module, "minidebug.scoring.evaluate": module}
    package_path = module.relative_to(tmp_path)
    assert package_path.parts[0] == "minidebug"
    assert imports("minidebug.tasks.x", module, known) == {"minidebug.scoring.evaluate"}


def test_each_room_says_what_it_owns_and_readme_names_it():
    layout = README.read_text().split("## Layout", 1)
    assert len(layout) == 2, "README.md has no Layout section"
    section = layout[1].split("\n## ", 1)[0]
    for name in RANKS:
        if name == "errors":
            continue
        assert re.search(rf"`{name}/`", section), f"README's Layout section does not name {name}/"
        if name == "drivers":
            continue  # a folder of scripts, not a package: README says what it owns
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and len(doc.split()) >= 15, f"minidebug/{name}/__init__.py needs a docstring saying what it owns"


def test_the_layout_section_links_the_page_of_each_room_that_has_one():
    section = README.read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    pages = sorted(path.relative_to(PACKAGE.parent).as_posix() for path in PACKAGE.glob("*/README.md"))
    assert pages, "no minidebug/*/README.md"
    assert [page for page in pages if f"]({page})" not in section] == []
