"""The dialect's modules import each other in one direction: no cycle, counting every import (top level, inside a
function, under TYPE_CHECKING), and no project import inside a function, which is how a cycle hides."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "sluicegate.dialect"


def _modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "dialect").rglob("*.py"):
        parts = path.relative_to(ROOT / "dialect").with_suffix("").parts
        found[".".join((PACKAGE, *(p for p in parts if p != "__init__")))] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    module = node.module or ""
    return [module, *(f"{module}.{alias.name}" for alias in node.names)]


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {name: set() for name in modules}
    in_functions = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        nested = {id(sub) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for sub in ast.walk(fn)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = {target for target in _imported(node) if target in modules and target != name}
            edges[name] |= targets
            if targets and id(node) in nested:
                in_functions.append(f"{name}:{node.lineno}")
    return edges, in_functions


def _cycle_from(start: str, edges: dict[str, set[str]]) -> list[str] | None:
    path: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> list[str] | None:
        if name in path:
            return [*path[path.index(name):], name]
        if name in done:
            return None
        path.append(name)
        for target in sorted(edges[name]):
            if (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        done.add(name)
        return None

    return visit(start)


def test_no_import_cycle_in_the_dialect():
    edges, _ = _graph()
    for name in sorted(edges):
        assert _cycle_from(name, edges) is None, " -> ".join(_cycle_from(name, edges) or [])


def test_no_project_import_inside_a_function():
    _, in_functions = _graph()
    assert in_functions == []
