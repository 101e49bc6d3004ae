"""What an override that calls ``inherit(globals())`` runs: its lower versions, and which
of their top-level definitions it replaces.

``inherit(globals())`` executes the next lower version of the module (the next
backend's override, else the trunk's file) in the override's namespace, and
that one, when it inherits too, the next, down the chain: their module-level
statements, imports and hook calls are the override's own.  The definitions
the override binds after the call replace the lower ones of the same name,
whose bodies then never run (unless the override read the lower object
first, ``_lower = f``: a wrapper).  :func:`lower_versions` lists the lower
versions that run, each with the names replaced above it; :meth:`Lower.runs`
tells whether a line of a lower version can run at all.

The helpers that split a module's top-level statements into the names they
bind and the names they read (:func:`bound_names`, :func:`evaluated_parts`,
:func:`names_read`) are shared with the lock's per-definition digests.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Sequence
from typing import Callable, NamedTuple, Optional

from .modules import Module
from .source import Source

__all__ = [
    "Lower",
    "bound_names",
    "evaluated_parts",
    "is_inherit_call",
    "lower_versions",
    "names_read",
    "replaced_names",
]


def bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds (imports excluded); a compound statement
    (``if``, ``try``, ``for``, ``while``, ``with``, ``match``) binds those its body does."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return []
        targets = [node.target]
    elif isinstance(node, (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With)) or (
        type(node).__name__ in ("TryStar", "Match", "AsyncWith")
    ):
        names: list[str] = []
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                names.extend(bound_names(child))
            elif isinstance(child, (ast.ExceptHandler,)) or type(child).__name__ == "match_case":
                for stmt in child.body:  # type: ignore[attr-defined]
                    names.extend(bound_names(stmt))
        return names
    names = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.append(sub.id)
    return names


def is_inherit_call(node: ast.stmt) -> bool:
    """Whether top-level statement *node* is ``inherit(...)`` (or ``x = inherit(...)``)."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute):
        return func.attr == "inherit"
    return isinstance(func, ast.Name) and func.id == "inherit"


def names_read(nodes: Iterable[ast.AST]) -> set[str]:
    """Names read when *nodes* are evaluated (lambda bodies are not evaluated then)."""
    found: set[str] = set()
    pending = list(nodes)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Lambda):
            pending.extend(node.args.defaults)
            pending.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        pending.extend(ast.iter_child_nodes(node))
    return found


def evaluated_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a top-level statement evaluated when it runs, function bodies excluded."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        return [
            *node.decorator_list,
            *args.defaults,
            *(d for d in args.kw_defaults if d is not None),
        ]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
        return [node.value] if node.value is not None else []
    return [node]


def replaced_names(tree: ast.Module) -> frozenset[str]:
    """The names an override (*tree*) binds after its top-level ``inherit(...)`` call
    without reading the lower version's object first: the lower definitions of
    those names never run."""
    replaced: set[str] = set()
    captured: set[str] = set()
    seen = False
    for node in tree.body:
        if not seen:
            seen = is_inherit_call(node)
            continue
        captured.update(n for n in names_read(evaluated_parts(node)) if n not in replaced)
        replaced.update(bound_names(node))
    return frozenset(replaced - captured)


class Lower(NamedTuple):
    """A lower version that ``inherit()`` runs in an override's namespace."""

    path: str
    source: Source
    override: str  # the file that loads, whose inherit() runs this one (through the chain)
    replaced: frozenset[str]  # names the versions above it replace
    # The first and last line of each top-level statement of this file that binds
    # only replaced names: code there never runs.
    dead: tuple[tuple[int, int], ...]

    def runs(self, line: int) -> bool:
        """Whether code on *line* of this lower version can run: it is not inside a
        definition that a version above replaces."""
        dead = self.dead
        at = bisect.bisect_right(dead, (line, 1 << 30)) - 1
        return at < 0 or not dead[at][0] <= line <= dead[at][1]


def _dead_spans(tree: ast.Module, replaced: frozenset[str]) -> tuple[tuple[int, int], ...]:
    spans = []
    for node in tree.body:
        names = bound_names(node)
        if names and all(n in replaced for n in names):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            spans.append((first, node.end_lineno or node.lineno))
    return tuple(spans)


def lower_versions(
    module: Module,
    source_of: Callable[[str], Source],
    tree_of: Callable[[str], Optional[ast.Module]],
) -> list[Lower]:
    """The lower versions that run in the namespace of *module*'s file, highest first:
    none unless that file calls ``inherit(globals())``; then the next one down its
    chain of candidates, and the next while each inherits in turn.  A version that
    cannot be read or parsed ends the chain (it fails at run time: an input error or
    FTS010)."""
    found: list[Lower] = []
    if module.file is None or not module.file.endswith(".py"):
        return found
    top = source_of(module.file)
    if top.error is not None or not top.facts().inherits:
        return found
    tree = tree_of(module.file)
    replaced = replaced_names(tree) if tree is not None else frozenset()
    chain: Sequence[str] = module.candidates
    for path in chain:
        if not path.endswith(".py"):
            break
        source = source_of(path)
        lower_tree = tree_of(path) if source.error is None else None
        if lower_tree is None:
            break
        found.append(Lower(path, source, module.file, replaced, _dead_spans(lower_tree, replaced)))
        if not source.facts().inherits:
            break
        replaced = replaced | replaced_names(lower_tree)
    return found
