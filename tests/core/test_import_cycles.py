"""No two modules of SimLab import each other, directly or round a longer chain: the layers run one way.

Every import counts, wherever it is written: at module level, inside a function (a lazy import still ties the
two modules together, it only hides it until run time) and under ``if TYPE_CHECKING:`` (a type one module
borrows from another is a dependency too; a circle there says what both need lives on the wrong side). A
relative import is resolved against its package, and ``from X import Y`` points at ``X.Y`` when that is a
module. The graph's strongly connected components of more than one module are the circles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Each root is the folder holding top-level packages: SimLab itself and the example family, an outside package.
PACKAGES = (REPO / "simlab", REPO / "examples" / "hidden_tictactoe" / "hidden_tictactoe")


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` imports ``target`` at ``line`` of its file."""

    source: str
    target: str
    line: int


def module_files(package: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__.py``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from`` import names, its dots resolved against the importing module's package."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    # A package's __init__ is its own package; a plain module's package is its parent.
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is one of our modules (``a.b.func`` -> ``a.b``), or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def imports_of(module: str, tree: ast.AST, modules: Mapping[str, Path], is_package: bool) -> list[Edge]:
    """Every import of our modules anywhere in ``tree`` (module level, functions, TYPE_CHECKING blocks)."""
    edges: list[Edge] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(node, module, is_package)
            # `from pkg import sub` imports the submodule; `from mod import name` imports the module.
            names = [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        targets = (_known(name, modules) for name in names)
        # One edge per module a statement imports (`from x import a, b` is one import of x), in written order.
        edges += dict.fromkeys(Edge(module, t, node.lineno) for t in targets if t is not None and t != module)
    return edges


def import_graph(packages: Iterable[Path]) -> dict[str, list[Edge]]:
    """Each module of the packages with the imports it makes of any of them."""
    modules = {name: path for package in packages for name, path in module_files(package).items()}
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = imports_of(name, tree, modules, path.name == "__init__.py")
    return graph


def strongly_connected(graph: Mapping[str, list[Edge]]) -> list[list[str]]:
    """Tarjan's components of more than one module, each sorted, in a stable order (iterative: no recursion
    limit on long chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted({e.target for e in graph[root]})))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted({e.target for e in graph[target]}))))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
    return sorted(found)


def circle_in(component: list[str], graph: Mapping[str, list[Edge]]) -> list[Edge]:
    """One shortest chain of imports from the component's first module back to itself, to name in a failure."""
    members = set(component)
    start = component[0]
    paths: dict[str, list[Edge]] = {start: []}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in sorted(graph[node], key=lambda e: (e.target, e.line)):
                if edge.target == start:
                    return [*paths[node], edge]
                if edge.target in members and edge.target not in paths:
                    paths[edge.target] = [*paths[node], edge]
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def describe(
    component: list[str], graph: Mapping[str, list[Edge]], files: Mapping[str, Path], root: Path = REPO
) -> str:
    """The circle's modules, one chain round it, then the other imports among them: each with its file (from
    ``root``) and line, so every import to cut is named."""
    chain = circle_in(component, graph)
    members = set(component)
    others = sorted(
        (e for m in component for e in graph[m] if e.target in members and e not in chain),
        key=lambda e: (e.source, e.line),
    )

    def said(edge: Edge) -> str:
        return f"{edge.source} imports {edge.target}  ({files[edge.source].relative_to(root)}:{edge.line})"

    lines = [f"circle of {len(component)} modules: {', '.join(component)}"]
    lines += [f"  {said(e)}" for e in chain]
    lines += [f"  and {said(e)}" for e in others]
    return "\n".join(lines)


def _files(packages: Iterable[Path]) -> dict[str, Path]:
    return {name: path for package in packages for name, path in module_files(package).items()}


def test_no_module_imports_itself_round_a_circle() -> None:
    graph = import_graph(PACKAGES)
    files = _files(PACKAGES)
    circles = [describe(c, graph, files) for c in strongly_connected(graph)]
    assert not circles, "modules that import each other (cut by moving what both need):\n" + "\n".join(circles)


def test_the_graph_holds_the_whole_package() -> None:
    graph = import_graph(PACKAGES)
    assert {"simlab.cli", "simlab.core.family", "simlab.gui.main_window", "hidden_tictactoe.family"} <= set(graph)
    assert "simlab.core.recording" in {e.target for e in graph["simlab.runner.batch"]}


def _graph_of(tmp_path: Path, sources: Mapping[str, str]) -> tuple[dict[str, list[Edge]], dict[str, Path]]:
    """The graph of a package ``pkg`` made in ``tmp_path`` of ``sources`` (path -> text; an empty __init__)."""
    for relative, text in {"pkg/__init__.py": "", **sources}.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    packages = [tmp_path / "pkg"]
    return import_graph(packages), _files(packages)


def test_every_kind_of_import_is_an_edge(tmp_path: Path) -> None:
    other = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.sub.leaf import Leaf\n"
        "def late():\n    import pkg.top\n"
        "from pkg import top\n"
        "from pkg.sub import leaf, not_a_module\n"
        "from pkg.top import one, two\n"
    )
    sources = {"pkg/sub/__init__.py": "from . import leaf\n", "pkg/sub/leaf.py": "from ..top import thing\n"}
    graph, _ = _graph_of(tmp_path, {**sources, "pkg/sub/other.py": other, "pkg/top.py": "import os\n"})
    assert [(e.target, e.line) for e in graph["pkg.sub"]] == [("pkg.sub.leaf", 1)]
    assert [(e.target, e.line) for e in graph["pkg.sub.leaf"]] == [("pkg.top", 1)]
    assert sorted((e.target, e.line) for e in graph["pkg.sub.other"]) == [
        ("pkg.sub", 7),  # `not_a_module` is a name in the package's __init__
        ("pkg.sub.leaf", 3),  # under TYPE_CHECKING
        ("pkg.sub.leaf", 7),
        ("pkg.top", 5),  # inside a function
        ("pkg.top", 6),  # `from package import module`
        ("pkg.top", 8),  # once for the two names
    ]
    assert graph["pkg.top"] == []


def test_a_circle_is_named_with_the_line_of_each_import(tmp_path: Path) -> None:
    late_b = "def f():\n    from pkg import c\n"
    typed_c = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\nimport pkg.b\n"
    sources = {"pkg/a.py": "import os\nfrom pkg.b import B\n", "pkg/b.py": late_b, "pkg/c.py": typed_c}
    graph, files = _graph_of(tmp_path, {**sources, "pkg/d.py": "from pkg import a\n"})
    circles = strongly_connected(graph)
    assert circles == [["pkg.a", "pkg.b", "pkg.c"]]
    assert describe(circles[0], graph, files, root=tmp_path).splitlines() == [
        "circle of 3 modules: pkg.a, pkg.b, pkg.c",
        "  pkg.a imports pkg.b  (pkg/a.py:2)",
        "  pkg.b imports pkg.c  (pkg/b.py:2)",
        "  pkg.c imports pkg.a  (pkg/c.py:3)",
        "  and pkg.c imports pkg.b  (pkg/c.py:4)",
    ]


def test_a_graph_without_circles_has_no_components(tmp_path: Path) -> None:
    graph, _ = _graph_of(tmp_path, {"pkg/a.py": "import pkg.b\n", "pkg/b.py": ""})
    assert strongly_connected(graph) == []
