"""The statements of a hook package's modules, executed on a model of their namespaces.

:class:`~flagtree_spec._tools.model.hooks.HookModule` answers which hooks a hook
module defines; the :class:`_Executor` here runs the top-level statements of
one module of the hook package, in order, binding names as Python does
(:class:`Binding`), and asks the hook module to run every module of the
hook package that a statement imports.  Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence
from typing import NamedTuple, Optional, Protocol

from .calls import Signature, call_name, signature_of

__all__ = ["Binding", "HookPackage"]


class Binding(NamedTuple):
    """What one name of a module namespace is bound to, and where.

    ``kind`` is ``function`` (a ``def``), ``class``, ``lambda``, ``value``
    (any other expression), ``import`` (a name imported from outside the
    hook package), ``literal``, ``module`` or ``unknown``.  ``signature`` is
    set for an undecorated ``def`` and a ``lambda``; ``local`` tells that a
    file of the hook package made the object (``def``/``class``/``lambda``).
    ``origin`` is the name at the definition (``def f`` bound as ``g``:
    ``f``); ``reason`` says why a binding is unknown.
    """

    kind: str
    path: str
    line: int
    col: int
    signature: Optional[Signature] = None
    local: bool = False
    origin: str = ""
    reason: str = ""


class _Broken(Exception):
    def __init__(self, path: str, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.where = (path, line, col)
        self.message = message


class _Module:
    """A simulated module object of the hook package."""

    __slots__ = ("all_entries", "all_known", "dynamic", "file", "getattr_hook", "key", "ns", "path")

    def __init__(self, key: str, file: Optional[str], path: Optional[list[str]]) -> None:
        self.key = key
        self.file = file
        self.path = path  # __path__ of a package, None for a plain module
        self.ns: dict[str, Binding] = {}
        self.dynamic = ""  # why the namespace may hold names no statement shows
        self.getattr_hook = False  # a module-level __getattr__
        self.all_entries: Optional[list[tuple[str, int, int]]] = None
        self.all_known = True  # False: __all__ is not a literal list of names


class HookPackage(Protocol):
    """What the executor asks of the hook package it runs a module of (the hook
    module, :class:`~flagtree_spec._tools.model.hooks.HookModule`, answers)."""

    # Set when whether an import succeeds depends on names the model cannot see.
    uncertain: str

    def resolve(self, module: _Module, level: int, name: Optional[str]) -> Optional[str]:
        """The hook-package key of an import in *module*; ``None`` when it is outside."""

    def load(self, key: str, at: tuple[str, int, int]) -> Optional[_Module]:
        """Import hook-package module *key* (the import statement at *at*); ``None``:
        not found."""


_BUILTINS = frozenset(dir(builtins))


_LITERALS: tuple[type, ...] = (
    ast.Constant,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) and _is_literal(node.right)
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    return False


def _names_of(node: ast.expr) -> Optional[list[tuple[str, int, int]]]:
    """The entries of a literal list, tuple or set of strings, with their positions."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return None
    out = []
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        out.append((elt.value, elt.lineno, elt.col_offset + 1))
    return out


def _is_globals(node: ast.expr) -> bool:
    """``globals()`` or ``vars()``: the module namespace itself."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("globals", "vars")
    )


class _Executor:
    """Runs the top-level statements of one module on its simulated namespace."""

    def __init__(self, hooks: HookPackage, module: _Module, path: str) -> None:
        self.hooks = hooks
        self.module = module
        self.path = path

    def bind(self, name: str, binding: Binding, cond: str) -> None:
        if cond:
            binding = binding._replace(kind="unknown", reason=cond)
        self.module.ns[name] = binding

    def value(self, node: ast.expr) -> Binding:
        line, col = node.lineno, node.col_offset + 1
        if _is_literal(node):
            return Binding("literal", self.path, line, col)
        if isinstance(node, ast.Name):
            known = self.module.ns.get(node.id)
            if known is not None:
                return known
            self.unbound(node.id, line, col)
            return Binding("value", self.path, line, col, origin=node.id)
        if isinstance(node, ast.Lambda):
            return Binding("lambda", self.path, line, col, signature_of(node), True, "<lambda>")
        if isinstance(node, ast.NamedExpr):
            return self.value(node.value)
        return Binding("value", self.path, line, col)

    def assign(
        self, target: ast.expr, value: Optional[ast.expr], binding: Binding, cond: str
    ) -> None:
        if isinstance(target, ast.Name):
            if target.id == "__all__":
                entries = _names_of(value) if value is not None else None
                self.module.all_entries = entries or []
                self.module.all_known = entries is not None and not cond
            self.bind(target.id, binding, cond)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values: Sequence[Optional[ast.expr]]
            if (
                isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in (*value.elts, *target.elts))
            ):
                values = value.elts
            else:
                values = [None] * len(target.elts)
            for elt, item in zip(target.elts, values):
                one = self.value(item) if item is not None else binding._replace(kind="value")
                self.assign(elt, item, one, cond)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None, binding._replace(kind="literal"), cond)
        elif isinstance(target, ast.Subscript) and _is_globals(target.value):
            self.dynamic(f"globals()[...] = at {self.path}:{target.lineno}")

    def unbound(self, name: str, line: int, col: int) -> None:
        """A global *name* read or deleted before any binding: a NameError, unless a
        builtin or a name the namespace may hold without a statement showing it."""
        if name in _BUILTINS and not name.startswith("__"):
            return
        if self.module.dynamic:
            self.hooks.uncertain = f"{self.module.dynamic} decides whether {name!r} exists"
            return
        raise _Broken(self.path, line, col, f"name {name!r} is not defined at this point")

    def dynamic(self, reason: str) -> None:
        """The namespace may now hold anything: every name bound so far is unknown."""
        module = self.module
        module.dynamic = reason
        for name, binding in list(module.ns.items()):
            module.ns[name] = binding._replace(kind="unknown", reason=reason)

    def block(self, body: Sequence[ast.stmt], cond: str) -> None:
        for node in body:
            self.statement(node, cond)

    def statement(self, node: ast.stmt, cond: str) -> None:
        line, col = node.lineno, node.col_offset + 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            signature = None if node.decorator_list else signature_of(node)
            self.bind(
                node.name,
                Binding("function", self.path, line, col, signature, True, node.name),
                cond,
            )
            if node.name == "__getattr__":
                self.module.getattr_hook = True
        elif isinstance(node, ast.ClassDef):
            self.bind(
                node.name, Binding("class", self.path, line, col, None, True, node.name), cond
            )
        elif isinstance(node, ast.Assign):
            binding = self.value(node.value)
            for target in node.targets:
                self.assign(target, node.value, binding, cond)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, node.value, self.value(node.value), cond)
        elif isinstance(node, ast.AugAssign):
            self.augment(node, cond)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if target.id not in self.module.ns:
                        self.unbound(target.id, line, col)
                    if cond:
                        self.bind(target.id, Binding("unknown", self.path, line, col), cond)
                    else:
                        self.module.ns.pop(target.id, None)
        elif isinstance(node, ast.Expr):
            self.call(node.value)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                self.bind(bound, Binding("module", self.path, line, col), cond)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node, cond)
        elif isinstance(node, ast.If):
            if call_name(node.test) == "TYPE_CHECKING":
                self.block(node.orelse, cond)  # the body never runs
                return
            why = cond or f"bound under the 'if' at {self.path}:{line}"
            self.block(node.body, why)
            self.block(node.orelse, why)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self.assign(
                        item.optional_vars, None, Binding("value", self.path, line, col), cond
                    )
            self.block(node.body, cond)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)) or type(node).__name__ in (
            "Try",
            "TryStar",
            "Match",
        ):
            kind = type(node).__name__.lower().replace("async", "").replace("star", "")
            why = cond or f"bound inside the '{kind}' at {self.path}:{line}"
            if isinstance(node, (ast.For, ast.AsyncFor)):
                self.assign(node.target, None, Binding("value", self.path, line, col), why)
            for field in ("body", "orelse"):
                self.block(getattr(node, field, ()), why)
            for handler in getattr(node, "handlers", ()):
                self.block(handler.body, why)
            for case in getattr(node, "cases", ()):
                self.block(case.body, why)
            self.block(getattr(node, "finalbody", ()), cond)

    def augment(self, node: ast.AugAssign, cond: str) -> None:
        target = node.target
        if not isinstance(target, ast.Name):
            return
        module = self.module
        if target.id == "__all__":
            more = _names_of(node.value)
            if more is None or module.all_entries is None or cond:
                module.all_known = False
            else:
                module.all_entries = [*module.all_entries, *more]
        old = module.ns.get(target.id)
        kind = (
            "literal"
            if old is not None and old.kind == "literal" and _is_literal(node.value)
            else "value"
        )
        self.bind(target.id, Binding(kind, self.path, node.lineno, node.col_offset + 1), cond)

    def call(self, node: ast.expr) -> None:
        if not isinstance(node, ast.Call):
            return
        func = node.func
        module = self.module
        where = f"{self.path}:{node.lineno}"
        if (
            isinstance(func, ast.Attribute)
            and _is_globals(func.value)
            and func.attr
            in (
                "update",
                "setdefault",
                "__setitem__",
            )
        ):
            self.dynamic(f"globals().{func.attr}(...) at {where}")
        elif call_name(func) in ("bind_symbols", "inherit"):
            self.dynamic(f"{call_name(func)}(...) at {where}")
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
        ):
            if func.attr == "append" and len(node.args) == 1:
                arg = node.args[0]
                more = (
                    [(arg.value, arg.lineno, arg.col_offset + 1)]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                    else None
                )
            elif func.attr == "extend" and len(node.args) == 1:
                more = _names_of(node.args[0])
            else:
                more = None
            if more is None or module.all_entries is None:
                module.all_known = False
            else:
                module.all_entries = [*module.all_entries, *more]

    def import_from(self, node: ast.ImportFrom, cond: str) -> None:
        hooks = self.hooks
        at = (self.path, node.lineno, node.col_offset + 1)
        key = hooks.resolve(self.module, node.level, node.module)
        if key is None:
            for alias in node.names:
                if alias.name == "*":
                    shown = "." * node.level + (node.module or "")
                    self.star_unknown(f"star import of {shown}, outside the hook package", cond)
                else:
                    self.bind(
                        alias.asname or alias.name,
                        Binding("import", self.path, node.lineno, node.col_offset + 1),
                        cond,
                    )
            return
        source = hooks.load(key, at)
        shown = "." * node.level + (node.module or "")
        if source is None:
            raise _Broken(*at, f"'from {shown} import ...': no module {shown} in the hook package")
        for alias in node.names:
            if alias.name == "*":
                self.star(source, shown, at, cond)
                continue
            binding = self.attribute(source, alias.name, at, shown)
            self.bind(alias.asname or alias.name, binding, cond)

    def attribute(
        self, source: _Module, name: str, at: tuple[str, int, int], shown: str
    ) -> Binding:
        """What ``from source import name`` binds (a submodule is imported when needed)."""
        found = source.ns.get(name)
        if found is not None:
            return found
        if source.getattr_hook:
            # Whatever __getattr__ does decides whether this import works at all.
            self.hooks.uncertain = f"{shown}.__getattr__ decides 'from {shown} import {name}'"
            return Binding("unknown", *at, reason=self.hooks.uncertain)
        if source.path is not None:
            sub = self.hooks.load(f"{source.key}.{name}" if source.key else name, at)
            if sub is not None:
                return source.ns.get(name) or Binding("module", sub.file or at[0], 1, 1)
        if source.dynamic:
            self.hooks.uncertain = f"{source.dynamic} decides 'from {shown} import {name}'"
            return Binding("unknown", *at, reason=self.hooks.uncertain)
        raise _Broken(*at, f"'from {shown} import {name}': {shown} does not bind {name!r}")

    def star(self, source: _Module, shown: str, at: tuple[str, int, int], cond: str) -> None:
        if not source.all_known:
            self.star_unknown(f"star import of {shown}, whose __all__ is no literal list", cond)
            return
        if source.all_entries is not None:
            for name, _, _ in list(source.all_entries):
                self.bind(name, self.attribute(source, name, at, shown), cond)
            return
        if source.dynamic:
            self.star_unknown(f"star import of {shown}: {source.dynamic}", cond)
        for name, binding in list(source.ns.items()):
            if not name.startswith("_"):
                self.bind(name, binding, cond)

    def star_unknown(self, reason: str, cond: str) -> None:
        self.dynamic(cond or reason)
