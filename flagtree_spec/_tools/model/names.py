"""The global names a module reads while it is imported, found from syntax.

Importing a module runs its module-level statements: every name they read
that the module's namespace does not hold (nor the builtins) raises
``NameError`` there.  :func:`import_time_reads` walks what runs at import
time, as Python's scopes say: module-level statements (inside ``if``,
``try``, ``for``, ``while``, ``with`` and ``match`` too, but not under ``if
__name__ == "__main__":`` nor ``if TYPE_CHECKING:``), the decorators,
default values and annotations of a ``def`` (annotations not under ``from
__future__ import annotations``), a class's bases, keywords and body (whose
own names are its scope), the first iterable of a comprehension; never the
body of a function or a lambda, which runs when called.  It returns the
global names read, with the position of the first read of each, and the
names bound that the facts of :mod:`.facts` do not list (``:=``, ``match``
captures).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Optional, Union

from .calls import call_name
from .definitions import statement_names
from .facts import main_guard

__all__ = ["Reads", "import_time_reads"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TRY: tuple[type[ast.Try], ...] = tuple(
    getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name)
)
_MATCH: Optional[type[ast.Match]] = getattr(ast, "Match", None)  # 3.10+
# Calls whose result is a namespace: a subscript assignment to it binds any name.
_NAMESPACES = frozenset({"globals", "vars", "locals"})


class Reads(NamedTuple):
    """What a module's import-time code reads from its global namespace."""

    reads: dict[str, tuple[int, int]]  # name -> (line, col) of its first read
    bound: frozenset[str]  # names bound by := or a match capture at module level
    # Why the names cannot be told (exec(), globals()[...] = ...); empty when they can.
    unknown: str


# Nodes below which no name is read.
_LEAVES: frozenset[type] = frozenset(
    {ast.Constant, ast.Pass, ast.alias, *(c for c in ast.expr_context.__subclasses__())}
    | set(ast.operator.__subclasses__())
    | set(ast.boolop.__subclasses__())
    | set(ast.unaryop.__subclasses__())
    | set(ast.cmpop.__subclasses__())
)
# Fields that hold no node: names, numbers, flags.
_SCALARS = frozenset(
    {"id", "arg", "attr", "name", "module", "asname", "level", "type_comment", "conversion"}
    | {"is_async", "simple", "kind", "lineno", "col_offset", "end_lineno", "end_col_offset"}
)
# Per node type, the fields that may hold nodes.
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(kind: type) -> tuple[str, ...]:
    found = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SCALARS)
    return found


class _Walker:
    """Collects the global reads of import-time code, scope by scope."""

    def __init__(self, annotations: bool) -> None:
        self.annotations = annotations  # whether annotations are evaluated
        self.reads: dict[str, tuple[int, int]] = {}
        self.bound: set[str] = set()
        self.unknown = ""

    # -- expressions

    def read(self, name: str, node: ast.expr, local: frozenset[str]) -> None:
        if name not in local and name not in self.reads:
            self.reads[name] = (node.lineno, node.col_offset + 1)

    def expressions(self, nodes: Iterable[Optional[ast.AST]], local: frozenset[str]) -> None:
        """Walk expressions evaluated in a scope whose own names are *local* (empty at
        module level, where every binding is global)."""
        pending = [n for n in nodes if n is not None]
        while pending:
            node = pending.pop()
            if type(node) in _LEAVES:
                continue
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.read(node.id, node, local)
                continue
            if isinstance(node, ast.Lambda):
                pending.extend(node.args.defaults)
                pending.extend(d for d in node.args.kw_defaults if d is not None)
                continue
            if isinstance(node, _COMPREHENSIONS):
                self.comprehension(node, local)
                continue
            if isinstance(node, ast.NamedExpr):
                # Binds in the enclosing function or the module, even inside a
                # comprehension: counted as bound wherever it is.
                self.bound.add(node.target.id)
                pending.append(node.value)
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("exec", "eval") and not self.unknown:
                    self.unknown = f"{node.func.id}() at line {node.lineno}"
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                value = node.value
                if isinstance(value, ast.Call) and call_name(value.func) in _NAMESPACES:
                    self.unknown = self.unknown or f"{call_name(value.func)}()[...] = ..."
            for field in _FIELDS.get(type(node)) or _fields_of(type(node)):
                inner = getattr(node, field, None)
                if type(inner) is list:
                    pending.extend(inner)
                elif inner is not None:
                    pending.append(inner)

    def comprehension(
        self,
        node: Union[ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp],
        local: frozenset[str],
    ) -> None:
        """A comprehension: its first iterable runs in the enclosing scope, the rest in
        its own, where its targets are local."""
        generators = node.generators
        self.expressions([generators[0].iter], local)
        inner = set(local) | {"<comprehension>"}
        for generator in generators:
            inner.update(n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name))
        rest: list[Optional[ast.AST]] = []
        for index, generator in enumerate(generators):
            if index:
                rest.append(generator.iter)
            rest.extend(generator.ifs)
        if isinstance(node, ast.DictComp):
            rest.extend([node.key, node.value])
        else:
            rest.append(node.elt)
        self.expressions(rest, frozenset(inner))

    # -- statements

    def function(
        self, node: Union[ast.FunctionDef, ast.AsyncFunctionDef], local: frozenset[str]
    ) -> None:
        args = node.args
        parts: list[Optional[ast.AST]] = [*node.decorator_list, *args.defaults, *args.kw_defaults]
        if self.annotations:
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            every += [a for a in (args.vararg, args.kwarg) if a is not None]
            parts.extend(a.annotation for a in every)
            parts.append(node.returns)
        self.expressions(parts, local)

    def klass(self, node: ast.ClassDef, local: frozenset[str]) -> None:
        self.expressions(
            [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)], local
        )
        own = {"__module__", "__qualname__", "__doc__"}
        for stmt in node.body:
            own.update(statement_names(stmt))
        self.block(node.body, frozenset(own | set(local)))

    def block(self, body: Sequence[ast.stmt], local: frozenset[str]) -> None:
        for node in body:
            self.statement(node, local)

    def statement(self, node: ast.stmt, local: frozenset[str]) -> None:
        kind = type(node)
        if kind is ast.Expr:
            self.expressions([node.value], local)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            self.expressions([node.value, *node.targets], local)  # type: ignore[attr-defined]
        elif isinstance(node, _FUNCTIONS):
            if (
                node.decorator_list
                or node.args.defaults
                or node.args.kw_defaults
                or (self.annotations)
            ):
                self.function(node, local)
        elif isinstance(node, ast.ClassDef):
            self.klass(node, local)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Pass)):
            return
        elif isinstance(node, ast.If):
            if main_guard(node.test) or call_name(node.test) == "TYPE_CHECKING":
                self.block(node.orelse, local)  # the body never runs on import
                return
            self.expressions([node.test], local)
            self.block(node.body, local)
            self.block(node.orelse, local)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expressions([node.iter, node.target], local)
            self.block(node.body, local)
            self.block(node.orelse, local)
        elif isinstance(node, ast.While):
            self.expressions([node.test], local)
            self.block(node.body, local)
            self.block(node.orelse, local)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.expressions([item.context_expr, item.optional_vars], local)
            self.block(node.body, local)
        elif isinstance(node, _TRY):
            self.block(node.body, local)
            for handler in node.handlers:
                self.expressions([handler.type], local)
                self.block(handler.body, local)
            self.block(node.orelse, local)
            self.block(node.finalbody, local)
        elif _MATCH is not None and isinstance(node, _MATCH):
            self.expressions([node.subject], local)
            for case in node.cases:
                self.pattern(case.pattern, local)
                self.expressions([case.guard], local)
                self.block(case.body, local)
        elif isinstance(node, ast.AnnAssign):
            parts = [node.value, node.target]
            if self.annotations and isinstance(node.target, ast.Name):
                parts.append(node.annotation)
            self.expressions(parts, local)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                self.read(node.target.id, node.target, local)
            self.expressions([node.target, node.value], local)
        elif isinstance(node, ast.Delete):
            for gone in node.targets:
                if isinstance(gone, ast.Name):
                    self.read(gone.id, gone, local)
                else:
                    self.expressions([gone], local)
        else:
            self.expressions(list(ast.iter_child_nodes(node)), local)

    def pattern(self, node: ast.AST, local: frozenset[str]) -> None:
        """A match pattern: value patterns read names, captures bind them."""
        for sub in ast.walk(node):
            kind = type(sub).__name__
            if kind in ("MatchAs", "MatchStar", "MatchMapping"):
                name = getattr(sub, "rest" if kind == "MatchMapping" else "name", None)
                if name:
                    self.bound.add(name)
            elif kind in ("MatchValue", "MatchClass"):
                value = getattr(sub, "value" if kind == "MatchValue" else "cls")
                self.expressions([value], local)


def import_time_reads(tree: ast.Module) -> Reads:
    """The global names that importing the module of *tree* reads (see the module's
    docstring)."""
    future = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    walker = _Walker(annotations=not future)
    walker.block(tree.body, frozenset())
    return Reads(walker.reads, frozenset(walker.bound), walker.unknown)
