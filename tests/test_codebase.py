"""The shape of the code, checked on the source with `ast`: no module of memoryui/, bench/ or
tests/ is over 400 lines, and no two modules of memoryui/ import each other, directly or round
a longer circle.

An import counts when it is at module level: every `import`/`from … import` outside a
function or class body, including `from . import x` (a module of the package) and
`from package import name` (the package's `__init__`), and those under `if TYPE_CHECKING:` (a
circle of types is a circle all the same: neither module can be read without the other). An
import inside a function does not count, nor does the parent package a submodule import loads
(Python runs it first, whatever imports it, so it cannot close a circle on its own)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memoryui"
MAX_LINES = 400

def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts}


def module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a module body (not in a def or class), looking into
    if/try/with blocks."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            yield from module_level_imports(node.body)
            yield from module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from module_level_imports(block)
            for handler in node.handlers:
                yield from module_level_imports(handler.body)
        elif isinstance(node, ast.With):
            yield from module_level_imports(node.body)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of memoryui/ that `name` imports at module level."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in module_level_imports(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            found.add(sub if sub in modules else target)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected group of modules (Tarjan), as a path that starts and
    ends at the same module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.add(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_in(graph, group) for group in groups]


def _circle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest circle through the group's first module (breadth-first inside the group)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in sorted(graph[node] & group):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no circle in the group {sorted(group)}")


def _long_modules() -> dict[str, int]:
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
             for folder in (PACKAGE, ROOT / "bench", ROOT / "tests")
             for path in sorted(folder.rglob("*.py")) if "__pycache__" not in path.parts}
    return {name: n for name, n in sizes.items() if n > MAX_LINES}


def test_the_graph_sees_what_it_must() -> None:
    graph = import_graph()
    assert "memoryui.store.budgets" in graph["memoryui.tools.zerostack"]
    # `from memoryui.store import Store` is the package; `from . import x` is the module.
    assert "memoryui.store" in graph["memoryui.tools.registry"]
    assert "memoryui.store.workspace" in graph["memoryui.store"]
    # the registry's dialect import runs at first use, inside a function
    assert "memoryui.tools.zerostack" not in graph["memoryui.tools.registry"]
    circle = find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert circle == [["a", "b", "c", "a"]]


def test_no_module_is_over_400_lines() -> None:
    offenders = _long_modules()
    assert offenders == {}, "modules over 400 lines:\n" + "\n".join(
        f"{name}: {n} lines" for name, n in sorted(offenders.items()))


def test_no_import_circle() -> None:
    circles = find_cycles(import_graph())
    assert circles == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)
