"""The package's modules import each other one way: no module imports one
that imports it back, directly or around a loop, and no import hides inside
a function, where it would hide such a loop from a reader."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ringd"


def _trees() -> dict[str, ast.Module]:
    return {
        p.stem: ast.parse(p.read_text(encoding="utf-8"), str(p))
        for p in sorted(PACKAGE.glob("*.py"))
    }


def _imports(tree: ast.Module) -> set[str]:
    """The package's modules that `tree` imports relatively (`from .x import …`,
    `from . import x`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of `graph`, each once, starting from its least module."""
    loops: list[list[str]] = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            module, path = stack.pop()
            for target in sorted(graph.get(module, ())):
                if target == start:
                    loops.append([*path, start])
                elif target > start and target not in path:
                    stack.append((target, [*path, target]))
    return loops


def test_the_cycle_finder_finds_a_loop_of_three() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert import_cycles(graph) == [["a", "b", "c", "a"]]


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = {name: _imports(tree) for name, tree in _trees().items()}
    assert import_cycles(graph) == []


def test_every_import_is_at_the_top_of_its_module() -> None:
    hidden = [
        f"{name}.py:{inner.lineno}"
        for name, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for inner in ast.walk(node)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    ]
    assert hidden == []
