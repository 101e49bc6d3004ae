"""No import cycle anywhere in the package, function-level imports included.

The graph is built from the code: every ``import`` and ``from ... import``
statement of every module of ``flagtree_spec``, wherever it stands (module
level or inside a function); a second graph also holds those under ``if
TYPE_CHECKING:``, which never run but tie the modules together for a reader
and a type checker all the same.  An import of ``a.b.c`` is an edge to the module ``a.b.c`` (a name
imported from a package is an edge to the submodule when one has that name,
else to the package).  ``lint-imports`` (the contracts in ``pyproject.toml``)
holds the direction of the layers; this test holds the absence of cycles,
which the contracts do not cover inside a layer.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import flagtree_spec

PACKAGE = Path(flagtree_spec.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        elif not (path.parent / "__init__.py").is_file():
            continue  # a file put on sys.path by itself (_startup/sitecustomize.py)
        found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the statements under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _graph(type_checking: bool = False) -> dict[str, set[str]]:
    """The import graph; with *type_checking*, imports only type checkers run count too."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else _type_checking_only(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    origin = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    origin = node.module or ""
                targets = [
                    f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                    for a in node.names
                ]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
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
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycle_in_the_package_function_level_imports_included() -> None:
    graph = _graph()
    # The graph sees imports inside functions (the command line loads the tools in one).
    assert "flagtree_spec._tools.cli.commands" in graph["flagtree_spec._cli"], graph[
        "flagtree_spec._cli"
    ]
    assert len(graph) > 50, sorted(graph)
    assert _cycles(graph) == []


def test_no_import_cycle_in_the_package_type_only_imports_included() -> None:
    """A module may import another only for its annotations (``if TYPE_CHECKING:``),
    and never one that imports it: shared types live where both can import them."""
    graph = _graph(type_checking=True)
    runtime = _graph()
    # The graph sees type-only imports (the rules name MirrorFile in annotations only).
    only = {(a, b) for a in graph for b in graph[a] if b not in runtime[a]}
    assert (
        "flagtree_spec._tools.check.registry",
        "flagtree_spec._tools.model.overrides",
    ) in only, sorted(only)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_rule_families_depend_on_the_model_never_on_the_driver() -> None:
    graph = _graph()
    check = "flagtree_spec._tools.check."
    families = [m for m in graph if m.startswith(check) and m != check + "driver"]
    assert check + "registry" in families and check + "overrides" in families
    assert [m for m in families if check + "driver" in graph[m]] == []
    model = [m for m in graph if m.startswith("flagtree_spec._tools.model")]
    assert [m for m in model if any(t.startswith(check) for t in graph[m])] == []


def test_the_forbidden_contract_names_every_runtime_module() -> None:
    """pyproject.toml's contract that the runtime never imports the tools lists the
    runtime's modules one by one: a new module must be added there."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    pyproject = PACKAGE.parent / "pyproject.toml"
    if not pyproject.is_file():  # the installed package: the contract is the checkout's
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
    forbidden = next(c for c in contracts if c["type"] == "forbidden")
    assert forbidden["forbidden_modules"] == ["flagtree_spec._tools"]
    runtime = sorted(m for m in _modules() if not m.startswith("flagtree_spec._tools"))
    assert sorted(forbidden["source_modules"]) == runtime
