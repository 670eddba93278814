"""The house's shape, checked without a JVM: every package folder is installed under the one import root, nothing
imports the project by a bare top-level name, and no two modules import each other, however indirectly (the layer
contracts themselves are import-linter's, `.importlinter`, run by `./run lint`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPOSITORY = Path(__file__).resolve().parent.parent
LAYERS = ("dialect", "catalog", "storage", "engine", "policy", "executor", "gateway")
ROOT = "sluicegate"


def _tracked_python_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=REPOSITORY, capture_output=True, text=True, check=True)
    return [REPOSITORY / name for name in listed.stdout.split()]


def test_every_package_folder_is_installed_under_the_root() -> None:
    declared = set(tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {ROOT, f"{ROOT}.conf"} | {
        ".".join((ROOT, *init.parent.relative_to(REPOSITORY).parts))
        for layer in LAYERS for init in (REPOSITORY / layer).rglob("__init__.py")
    }
    assert declared == folders, "pyproject.toml's [tool.setuptools] packages must list every package folder"


def _imported_names(path: Path) -> list[tuple[int, str]]:
    return [name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) for name in _imported_names_of(node)]


def test_nothing_imports_the_project_by_a_bare_top_level_name() -> None:
    """`import gateway` would load a second copy of a module beside `sluicegate.gateway` (two registries, two
    classes of the same name), or someone else's `catalog` package."""
    bare = [f"{path.relative_to(REPOSITORY)}:{line}: {name}"
            for path in _tracked_python_files() for line, name in _imported_names(path)
            if name.split(".")[0] in (*LAYERS, "runtime")]
    assert bare == []


def _cycles(graph: grimp.ImportGraph) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


@pytest.fixture(scope="module")
def import_graph() -> grimp.ImportGraph:
    """Every import of the installed root, at the top of a module, inside a function or under TYPE_CHECKING."""
    return grimp.build_graph(ROOT, cache_dir=None)


def test_no_module_takes_part_in_an_import_cycle(import_graph: grimp.ImportGraph) -> None:
    """A cycle, even through an import inside a function, means two modules that cannot be understood (or
    changed) one without the other: the shared part belongs in a module below both."""
    assert [sorted(component) for component in _cycles(import_graph)] == []


# Layers in which no module imports a project module inside a function: such an import is how a cycle hides (and
# what a layer's own import order should make needless). Layers join as they get there; none leaves.
NO_LAZY_PROJECT_IMPORTS = ("dialect", "catalog", "storage", "policy", "executor")


def _project_imports_inside_functions(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(function)}
    return [line for node in ast.walk(tree) if id(node) in nested
            for line, name in _imported_names_of(node) if name.split(".")[0] == ROOT]


def _imported_names_of(node: ast.AST) -> list[tuple[int, str]]:
    if isinstance(node, ast.Import):
        return [(node.lineno, alias.name) for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [(node.lineno, node.module)]
    return []


@pytest.mark.parametrize("layer", NO_LAZY_PROJECT_IMPORTS)
def test_no_project_import_inside_a_function(layer: str) -> None:
    lazy = [f"{path.relative_to(REPOSITORY)}:{line}" for path in sorted((REPOSITORY / layer).rglob("*.py"))
            for line in _project_imports_inside_functions(path)]
    assert lazy == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three"):
        graph.add_module(module)
    graph.add_import(importer="a.one", imported="a.two")
    graph.add_import(importer="a.two", imported="a.one")
    graph.add_import(importer="a.three", imported="a.one")
    assert _cycles(graph) == [{"a.one", "a.two"}]
