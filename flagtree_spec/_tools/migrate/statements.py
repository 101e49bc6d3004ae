"""The top-level statements of a module: what each binds, and what it reads when it runs.

:class:`File` parses a module into :class:`Stmt` records, one per top-level
statement: its kind (``doc``, ``future``, ``import``, ``def`` or
``effect``), the names it binds with the syntax tree of each binding
(``sigs``), the names it reads when the module runs (``now``: decorators,
defaults, class bodies, annotations without ``from __future__ import
annotations``) and later (``uses``), and the module-level objects its
decorators write to (``reaches``).  Nothing is executed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from typing import Optional

__all__ = [
    "DEFS",
    "FUNCS",
    "PURE",
    "File",
    "Stmt",
    "decorators",
    "line_of",
    "lost_names",
    "module_names",
    "signatures",
    "writers",
]

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Calls that make a value and touch nothing else: running one again after
# inherit() (trunk's statement, then the copy's) leaves only the copy's value
# (Triton's T = TypeVar("T") in every language module).
PURE = frozenset(
    (
        "TypeVar",
        "typing.TypeVar",
        "ParamSpec",
        "typing.ParamSpec",
        "NewType",
        "typing.NewType",
        "namedtuple",
        "collections.namedtuple",
        "re.compile",
        "frozenset",
        "set",
        "dict",
        "list",
        "tuple",
        "int",
        "float",
        "str",
        "bool",
        "object",
    )
)
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Stmt:
    """One top-level statement: what it binds, and which names it reads when it runs."""

    __slots__ = (
        "effect",
        "first",
        "kind",
        "last",
        "names",
        "node",
        "now",
        "reaches",
        "sigs",
        "uses",
        "whole",
    )

    def __init__(self, node: ast.stmt, kind: str, future_annotations: bool) -> None:
        self.node = node
        self.kind = kind  # "doc", "future", "import", "def" or "effect"
        self.first = min([node.lineno, *(d.lineno for d in decorators(node))])
        self.last = node.end_lineno or node.lineno
        self.sigs: dict[str, str] = {}
        self.whole = ""  # the dump of a "def" or "effect" statement
        self.effect = ""  # why a differing "def" has effects when it runs
        self.reaches: frozenset[str] = frozenset()  # module-level objects it writes to
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    self.kind = "effect"
                    continue
                if isinstance(node, ast.Import):
                    bound = alias.asname or alias.name.partition(".")[0]
                    single: ast.stmt = ast.Import(names=[alias])
                else:
                    bound = alias.asname or alias.name
                    single = ast.ImportFrom(module=node.module, names=[alias], level=node.level)
                self.sigs[bound] = ast.dump(single)
        if self.kind in ("def", "effect"):
            self.whole = ast.dump(node)
            self.sigs.update(dict.fromkeys(_bound(node), self.whole))
        self.names = tuple(self.sigs)
        self.uses = _loads(node)
        self.now = _import_time(node, future_annotations)
        if self.kind == "def" and not isinstance(node, DEFS):
            value = getattr(node, "value", None)
            calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)] if value else []
            if any(ast.unparse(c.func) not in PURE for c in calls):
                self.effect = "its value is computed by a call"
        for decorator in decorators(node):
            if "register" in ast.unparse(decorator).lower():
                self.effect = f"decorator @{ast.unparse(decorator)} registers it"


def decorators(node: ast.stmt) -> list[ast.expr]:
    return list(node.decorator_list) if isinstance(node, DEFS) else []


def _bound(node: ast.stmt) -> list[str]:
    """Names a module-level statement binds in the module's namespace."""
    found: list[str] = []

    def target(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            found.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for elt in t.elts:
                target(elt)
        elif isinstance(t, ast.Starred):
            target(t.value)

    def visit(body: Iterable[ast.stmt]) -> None:
        for s in body:
            if isinstance(s, DEFS):
                found.append(s.name)
            elif isinstance(s, ast.Assign):
                for t in s.targets:
                    target(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                if not (isinstance(s, ast.AnnAssign) and s.value is None):
                    target(s.target)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for alias in s.names:
                    if alias.name != "*":
                        found.append(alias.asname or alias.name.partition(".")[0])
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                target(s.target)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        target(item.optional_vars)
            elif isinstance(s, ast.Delete):
                for t in s.targets:
                    target(t)
            elif isinstance(s, ast.Global):
                found.extend(s.names)
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(s, DEFS):
                    visit(getattr(s, field, ()))
            for handler in getattr(s, "handlers", ()):
                if handler.name:
                    found.append(handler.name)
                visit(handler.body)
            for case in getattr(s, "cases", ()):
                visit(case.body)
        for n in _module_scope(body):
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                found.append(n.target.id)

    visit([node])
    return list(dict.fromkeys(found))


_MUTATORS = frozenset(("append", "extend", "update", "add", "insert", "setdefault", "register"))


def _writes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The global names whose objects *fn* writes to when called.

    ``setattr(X, ...)``, ``X.a = ...``, ``X[k] = ...`` and ``X.append(...)``
    (and the other mutating methods) where ``X`` is no parameter or local.
    """
    local = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    local.update(a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None)
    found: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
        target: Optional[ast.expr] = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args:
            if n.func.id in ("setattr", "delattr"):
                target = n.args[0]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in _MUTATORS:
                target = n.func.value
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            target = n.value
        if isinstance(target, ast.Name):
            found.add(target.id)
    return frozenset(found - local)


def _module_scope(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of *body* that run in the module's own scope.

    Not the bodies of functions, lambdas and classes: a name an assignment
    expression binds there (``if (n := len(x))`` in a method) is theirs,
    never the module's.  Comprehensions are walked: an assignment expression
    inside one binds in the enclosing scope.
    """
    pending: list[ast.AST] = list(body)
    while pending:
        n = pending.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(n.decorator_list)
            pending.extend(n.args.defaults)
            pending.extend(d for d in n.args.kw_defaults if d is not None)
        elif isinstance(n, ast.ClassDef):
            pending.extend([*n.decorator_list, *n.bases, *(k.value for k in n.keywords)])
        elif isinstance(n, ast.Lambda):
            pending.extend(n.args.defaults)
        else:
            pending.extend(ast.iter_child_nodes(n))


def _loads(node: ast.AST) -> frozenset[str]:
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _import_time(node: ast.stmt, future_annotations: bool) -> frozenset[str]:
    """The names a statement reads while the module runs (an over-approximation).

    Function bodies run later; their decorators, defaults and (without
    ``from __future__ import annotations``) annotations run now.  A class
    body runs now, except the bodies of its methods.
    """
    if isinstance(node, FUNCS):
        parts: list[ast.AST] = [*node.decorator_list, *node.args.defaults]
        parts.extend(d for d in node.args.kw_defaults if d is not None)
        if not future_annotations:
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            args.extend(a for a in (node.args.vararg, node.args.kwarg) if a is not None)
            parts.extend(a.annotation for a in args if a.annotation is not None)
            if node.returns is not None:
                parts.append(node.returns)
        found: set[str] = set()
        for part in parts:
            found.update(_loads(part))
        return frozenset(found)
    if isinstance(node, ast.ClassDef):
        found = set()
        for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            found.update(_loads(part))
        for s in node.body:
            found.update(_import_time(s, future_annotations))
        return frozenset(found)
    return _loads(node)


class File:
    """The top-level statements of one parsed file."""

    def __init__(self, tree: ast.Module) -> None:
        future = any(
            isinstance(s, ast.ImportFrom)
            and s.module == "__future__"
            and any(a.name == "annotations" for a in s.names)
            for s in tree.body
        )
        self.stmts: list[Stmt] = []
        for i, node in enumerate(tree.body):
            if (
                i == 0
                and isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                kind = "doc"
            elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
                kind = "future"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                kind = "import"
            elif isinstance(node, DEFS) or (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and node.value is not None
                and all(isinstance(t, ast.Name) for t in _targets(node))
            ):
                kind = "def"
            else:
                kind = "effect"
            self.stmts.append(Stmt(node, kind, future))
        self.last: dict[str, str] = {}  # name -> signature of its last binding
        self.binders: dict[str, list[Stmt]] = {}
        for s in self.stmts:
            for name, sig in s.sigs.items():
                self.last[name] = sig
                self.binders.setdefault(name, []).append(s)
        # A decorator that writes to a module-level object (Triton's
        # _tensor_member_fn: setattr(tensor, fn.__name__, fn)) reaches that object
        # from every statement it decorates.
        writers = {s.node.name: _writes(s.node) for s in self.stmts if isinstance(s.node, FUNCS)}
        for s in self.stmts:
            for decorator in decorators(s.node):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Name):
                    s.reaches |= writers.get(target.id, frozenset())

    def effects(self) -> list[Stmt]:
        return [s for s in self.stmts if s.kind == "effect"]


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign):
        return [node.target]
    return []


def writers(text: str) -> dict[str, frozenset[str]]:
    """Each top-level function of a module and the module-level names it writes to."""
    tree = ast.parse(text)
    return {n.name: _writes(n) for n in tree.body if isinstance(n, FUNCS)}


def module_names(text: str) -> list[str]:
    """The names a module's top-level statements bind, in order (none if it does not parse)."""
    return list(signatures(text))


def signatures(text: str) -> dict[str, str]:
    """Each top-level name of a module and the syntax tree of its last binding (dumped)."""
    try:
        return File(ast.parse(text)).last
    except (SyntaxError, ValueError):
        return {}


def lost_names(copy_names: Iterable[str], trunk_names: Iterable[str]) -> list[str]:
    """Trunk's module-level names that a whole copy (lacking them) takes away."""
    have = set(copy_names)
    return sorted(n for n in dict.fromkeys(trunk_names) if n not in have)


def line_of(text_lines: Sequence[str], s: Stmt) -> str:
    first = text_lines[s.first - 1].strip() if s.first <= len(text_lines) else ""
    return f"line {s.first}: {first[:60]}"
