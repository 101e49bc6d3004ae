"""Which hooks a backend's hook module defines, found as the import system would find them.

At run time ``spec("h")`` calls ``getattr(hook_module, "h")`` when that is
callable.  Real hook modules are packages that gather their hooks from
fragment files (``from .runtime.jit import *``, ``from ._utils import
apply as apply_with_path``), so the names a hook module binds are only known
by following its imports.  :class:`HookModule` does that without importing
anything: it executes the top-level statements of the hook module and of
every module of the hook package they import, in order, on a model of their
namespaces:

* ``def``, ``class``, assignments, ``del``, ``import`` and ``from ... import``
  bind names as Python does, the last binding winning; a name bound to a
  literal (a number, a string, ``None``, a list) or to a module is no hook;
* ``from .x import *`` binds ``x``'s ``__all__`` when it has one, else every
  name of ``x``'s namespace not starting with ``_`` (its imports and its own
  star imports included);
* importing a submodule for the first time binds its name on its package,
  after the submodule has run, in every package of the hook package;
* modules are executed once; a module still running is seen as it is.

The answer for a name is *defined* (with the file and line of the binding),
*not defined*, or *unknown*: names bound inside ``if``/``try``/``for``/
``while``/``match`` (conditional), names that may come from a module
``__getattr__``, from ``globals().update(...)`` (or ``bind_symbols``,
``globals()[...] =``), or from a star import of a module outside the hook
package.  An import that would fail at run time makes the whole hook module
*broken* (it raises when loaded), and every answer unknown.
"""

from __future__ import annotations

import ast
import builtins
import os
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, Optional, Protocol

from .signatures import Signature, signature_of
from .source import call_name

__all__ = ["DEFINED", "NOT_DEFINED", "UNKNOWN", "Binding", "HookModule", "Loaded", "first_hook"]

DEFINED = "defined"
NOT_DEFINED = "not defined"
UNKNOWN = "unknown"

# Kinds of a binding that make spec() find no hook: callable() is false for them.
_NOT_CALLABLE = frozenset({"literal", "module"})


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


class Loaded(NamedTuple):
    """A module of the hook package that runs when the hook module is imported."""

    key: str  # dotted name below the hook package ("" for the hook module itself)
    path: Optional[str]  # its file (None for a namespace package)
    importer: str  # the file whose import statement loaded it first
    line: int
    col: int


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


class FolderView(Protocol):
    """The part of the path finder's view of one folder that hook resolution needs."""

    def find(self, name: str) -> Optional[tuple[str, Optional[str], str]]:
        """``(kind, file, folder)``: kind ``package``, ``module`` or ``namespace``."""


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


class HookModule:
    """The names a hook module binds, found by executing its imports on a model.

    *hooks* is the hook module's file, *package* whether it is a package
    (its folder is then its ``__path__``), *hook_name* the dotted name it is
    imported under (absolute imports of that name are imports of the hook
    package).  *tree_of* returns the syntax tree of a ``.py`` file (``None``
    when it cannot be read or parsed) and *folder* the path finder's view of
    a folder.
    """

    def __init__(
        self,
        hooks: str,
        package: bool,
        hook_name: Optional[str],
        tree_of: Callable[[str], Optional[ast.Module]],
        folder: Callable[[str], FolderView],
    ) -> None:
        self.hooks = hooks
        self.package = package
        self.hook_name = (
            hook_name if hook_name and not hook_name.startswith("flagtree_spec.") else None
        )
        self.tree_of = tree_of
        self.folder = folder
        self.modules: dict[str, _Module] = {}
        self.loaded: list[Loaded] = []
        self.broken: Optional[tuple[str, int, int, str]] = None
        # Set when whether an import succeeds depends on names the model cannot see.
        self.uncertain = ""
        top = _Module("", hooks, [os.path.dirname(hooks)] if package else None)
        self.modules[""] = top
        self.loaded.append(Loaded("", hooks, hooks, 1, 1))
        try:
            self._run(top)
        except _Broken as exc:
            self.broken = (*exc.where, exc.message)
        self.top = top

    # -- answers

    def answer(self, name: str) -> tuple[str, Optional[Binding]]:
        """``(state, binding)`` for hook *name*: defined, not defined or unknown."""
        if self.broken is not None or self.uncertain:
            return UNKNOWN, None
        top = self.top
        binding = top.ns.get(name)
        if binding is not None:
            if binding.kind in _NOT_CALLABLE:
                return NOT_DEFINED, binding
            if binding.kind == "unknown":
                return UNKNOWN, binding
            return DEFINED, binding
        if top.getattr_hook or top.dynamic:
            return UNKNOWN, None
        return NOT_DEFINED, None

    def all_entries(self) -> Optional[list[tuple[str, int, int]]]:
        """The hook module's literal ``__all__`` with positions; ``None`` without one."""
        return self.top.all_entries if self.top.all_known else None

    def declared(self) -> Iterator[tuple[str, Binding]]:
        """The hooks the module declares: its ``__all__`` entries that it binds, else
        the public functions that files of the hook package define and it binds."""
        entries = self.all_entries()
        if entries is not None:
            for name, line, col in entries:
                binding = self.top.ns.get(name)
                if binding is not None:
                    yield name, binding._replace(path=self.hooks, line=line, col=col)
            return
        if self.top.all_entries is not None:  # an __all__ that is no literal: unknown
            return
        for name, binding in self.top.ns.items():
            if binding.kind == "function" and binding.local and not name.startswith("_"):
                yield name, binding

    def files(self) -> list[Loaded]:
        """Every module of the hook package that loads with it, in load order."""
        return [m for m in self.loaded if m.path is not None]

    # -- the import system, modelled

    def _import(self, key: str, at: tuple[str, int, int]) -> Optional[_Module]:
        """``importlib.import_module`` of hook-package module *key*; ``None``: not found."""
        found = self.modules.get(key)
        if found is not None:
            return found
        parent_key, _, last = key.rpartition(".")
        parent = self._import(parent_key, at) if key else None
        if parent is None or parent.path is None:
            return None
        hit = None
        portions: list[str] = []
        for entry in parent.path:
            view = self.folder(entry).find(last)
            if view is None:
                continue
            if view[0] == "namespace":
                portions.append(view[2])
                continue
            hit = view
            break
        if hit is None and not portions:
            return None
        if hit is None:
            module = _Module(key, None, portions)
        else:
            kind, file, folder = hit
            module = _Module(key, file, [folder] if kind == "package" else None)
        self.modules[key] = module
        self.loaded.append(Loaded(key, module.file, *at))
        if module.file is not None:
            self._run(module)
        # The import system binds a submodule on its package once it has loaded.
        parent.ns[last] = Binding("module", module.file or at[0], 1, 1, origin=key)
        return module

    def _run(self, module: _Module) -> None:
        file = module.file
        assert file is not None
        if not file.endswith(".py"):
            module.dynamic = f"{file} is compiled, so its names are unknown"
            return
        tree = self.tree_of(file)
        if tree is None:
            raise _Broken(file, 1, 1, f"{file} cannot be read or parsed")
        _Executor(self, module, file).block(tree.body, "")

    def resolve(self, module: _Module, level: int, name: Optional[str]) -> Optional[str]:
        """The hook-package key of an import in *module*; ``None`` when it is outside."""
        if level == 0:
            if self.hook_name is None or name is None:
                return None
            if name == self.hook_name:
                return ""
            if name.startswith(self.hook_name + "."):
                return name[len(self.hook_name) + 1 :]
            return None
        parts = module.key.split(".") if module.key else []
        if module.path is None:  # a plain module: relative to its package
            if not parts:
                return None  # a hook module that is a plain file has no package of its own
            parts = parts[:-1]
        if level - 1 > len(parts):
            return None  # above the hook package
        parts = parts[: len(parts) - (level - 1)]
        if name:
            parts.extend(name.split("."))
        return ".".join(parts)


class _Executor:
    """Runs the top-level statements of one module on its simulated namespace."""

    def __init__(self, hooks: HookModule, module: _Module, path: str) -> None:
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
        source = hooks._import(key, at)
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
            sub = self.hooks._import(f"{source.key}.{name}" if source.key else name, at)
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


def first_hook(
    modules: Sequence[HookModule], name: str
) -> tuple[str, Optional[Binding], Optional[HookModule]]:
    """What ``spec_func(name)`` finds in hook modules *modules*, highest priority first.

    The run time imports every hook module of the stack at the first lookup, so
    one that is broken or uncertain makes every answer unknown; otherwise the
    first module that defines *name* wins, and one that may define it makes the
    answer unknown.
    """
    if any(m.broken is not None or m.uncertain for m in modules):
        return UNKNOWN, None, None
    for module in modules:
        state, binding = module.answer(name)
        if state != NOT_DEFINED:
            return state, binding, module
    return NOT_DEFINED, None, None
