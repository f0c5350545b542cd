"""Layers point one way: api/pages -> services -> figures -> experiments -> probes -> models -> config -> the base modules.

Walks every import in app/ (module level, inside functions, under TYPE_CHECKING alike) with ast, so a lower layer
importing a higher one fails here even when the import hides in a function, and so does any circle between modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"

# Highest first. A module may import its own layer or any lower one, never a higher one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("app", "app.main", "app.__main__", "app.cli", "app.notebook"),  # app: the public facade (rx.trace ...)
    ("app.api", "app.pages", "app.security"),
    ("app.services",),
    ("app.figures",),  # answer -> chart: reads what experiments answer, never runs a model or a service
    ("app.experiments",),
    ("app.probes",),
    ("app.models",),
    ("app.config", "app.errors"),
    ("app.settings", "app.paths", "app.i18n", "app.jsonsafe", "app.assets", "app.numbers"),
)


def module_name(path: Path) -> str:
    parts = ["app", *path.relative_to(APP).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in APP.rglob("*.py")}


def _resolve(target: str, name: str | None) -> str:
    """`from target import name`: the submodule when name is one, else the package."""
    if name and f"{target}.{name}" in MODULES:
        return f"{target}.{name}"
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(_resolve(a.name, None) for a in node.names if a.name.split(".")[0] == "app")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "app":
                found.update(_resolve(target, a.name) for a in node.names)
    found.discard(module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def layer(module: str) -> int:
    """Index in LAYERS (0 = highest) of the longest matching prefix."""
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            # "app" names the package's own __init__ (the public facade) only, not everything under it
            matches = module == prefix or (prefix != "app" and module.startswith(prefix + "."))
            if matches and len(prefix) > best:
                best, rank = len(prefix), index
    return rank


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer(m) < 0] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    upward = sorted(t for t in GRAPH[module] if layer(t) < layer(module))
    assert upward == [], f"{module} (layer {LAYERS[layer(module)]}) imports a higher layer: {upward}"


def test_no_import_circles() -> None:
    """Tarjan's strongly connected components: any with more than one module is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in GRAPH[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert circles == [], f"import circles: {circles}"
