"""The top-level definitions of a module, and the calls a file makes of names it imports.

:func:`top_definitions` says what each name a module binds once, at top level
and unconditionally, is bound to: an undecorated ``def`` (with its
parameters), a plain ``class`` (with the parameters its ``__init__`` takes,
``self`` left out, or none for a class without bases or ``__init__``), or a
name imported from another module (to follow); any other binding, one under
``if``/``try``, a decorated one or a name bound twice is *unknown*: what it
takes cannot be told from syntax.  :func:`calls_of` finds the calls of given
bare names in a file, leaving out those where a function's own parameter or
variable of that name shadows the global.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple, Optional, Union

from .calls import Signature, signature_of
from .facts import resolve_relative

__all__ = ["Call", "Definition", "calls_of", "top_definitions"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Definition(NamedTuple):
    """What a module-level name is bound to.

    ``kind`` is ``function``, ``class``, ``import`` (then ``module`` and
    ``name`` say what from) or ``unknown``; ``signature`` is the parameters a
    call of a function or class binds to.
    """

    kind: str
    line: int
    signature: Optional[Signature] = None
    module: str = ""
    name: str = ""


_UNKNOWN = Definition("unknown", 0)
# Bases that bring no metaclass and no __new__ a class's own __init__ would not
# decide: object and the built-in exceptions.
_PLAIN_BASES = frozenset(
    {"object"}
    | {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
)


def _without_self(sig: Signature) -> Signature:
    """The parameters of a method called through its class's instance: the first left out."""
    if sig.positional_only:
        return sig._replace(
            positional_only=sig.positional_only[1:], required=max(0, sig.required - 1)
        )
    if sig.positional:
        return sig._replace(positional=sig.positional[1:], required=max(0, sig.required - 1))
    return sig  # def __init__(*args): self is one of them


def _class(node: ast.ClassDef) -> Definition:
    if node.decorator_list or node.keywords:
        return _UNKNOWN._replace(line=node.lineno)  # a decorator or a metaclass may change it
    init: Optional[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = None
    for stmt in node.body:
        if isinstance(stmt, _FUNCTIONS) and stmt.name in ("__new__", "__init__", "__call__"):
            if stmt.name == "__new__" or stmt.decorator_list:
                return _UNKNOWN._replace(line=node.lineno)
            if stmt.name == "__init__":
                init = stmt
        elif not isinstance(stmt, (ast.Expr, ast.Pass, *_FUNCTIONS)) and "__init__" in {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
        }:
            return _UNKNOWN._replace(line=node.lineno)  # __init__ = something
    if not all(isinstance(b, ast.Name) and b.id in _PLAIN_BASES for b in node.bases):
        # A base may bring a metaclass, a __new__ or an __init__ of its own (an
        # Enum, a NamedTuple, a generic class): what a call takes is unknown.
        return _UNKNOWN._replace(line=node.lineno)
    if init is not None:
        return Definition("class", node.lineno, _without_self(signature_of(init)))
    if node.bases:
        return _UNKNOWN._replace(line=node.lineno)  # the exception's own __init__
    return Definition("class", node.lineno, Signature((), (), 0, False, (), frozenset(), False))


def top_definitions(tree: ast.Module, package: str) -> dict[str, Definition]:
    """What each top-level name of module *tree* (in package *package*) is bound to."""
    found: dict[str, Definition] = {}
    seen: set[str] = set()

    def bind(name: str, definition: Definition) -> None:
        found[name] = _UNKNOWN._replace(line=definition.line) if name in seen else definition
        seen.add(name)

    for node in tree.body:
        if isinstance(node, _FUNCTIONS):
            if node.decorator_list:
                bind(node.name, _UNKNOWN._replace(line=node.lineno))
            else:
                bind(node.name, Definition("function", node.lineno, signature_of(node)))
        elif isinstance(node, ast.ClassDef):
            bind(node.name, _class(node))
        elif isinstance(node, ast.ImportFrom):
            module = resolve_relative(node.level, node.module, package)
            for alias in node.names:
                if alias.name == "*" or module is None:
                    continue
                bind(
                    alias.asname or alias.name,
                    Definition("import", node.lineno, None, module, alias.name),
                )
        else:
            for name in _statement_names(node):
                bind(name, _UNKNOWN._replace(line=node.lineno))
    return found


class Call(NamedTuple):
    """A call ``name(...)`` of a bare global name, with what binding it needs."""

    name: str
    line: int
    col: int
    positional: int
    keywords: tuple[str, ...]
    unpacked: bool  # * or ** unpacking: the arguments are unknown


def _targets(node: ast.AST) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``; not ``a.b``)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for elt in node.elts:
            yield from _targets(elt)
    elif isinstance(node, ast.Starred):
        yield from _targets(node.value)


def _statement_names(node: ast.stmt) -> Iterator[str]:
    """The names statement *node* binds in its scope, found from its statements and
    their targets (not from expressions: a ``:=`` is not seen)."""
    pending: list[ast.AST] = [node]
    while pending:
        sub = pending.pop()
        if isinstance(sub, (*_FUNCTIONS, ast.ClassDef)):
            yield sub.name
            continue
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            for alias in sub.names:
                yield (alias.asname or alias.name).partition(".")[0]
            continue
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                yield from _targets(target)
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            yield from _targets(sub.target)
        elif isinstance(sub, (ast.With, ast.AsyncWith)):
            for item in sub.items:
                if item.optional_vars is not None:
                    yield from _targets(item.optional_vars)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            yield sub.name
        elif isinstance(sub, ast.Delete):
            for target in sub.targets:
                yield from _targets(target)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(sub, field, None)
            if isinstance(inner, list):
                pending.extend(inner)
        pattern = getattr(sub, "pattern", None)  # a match case's captures
        if pattern is not None:
            for part in ast.walk(pattern):
                name = getattr(part, "name", None) or getattr(part, "rest", None)
                if isinstance(name, str):
                    yield name


def _locals(node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]) -> set[str]:
    """Every name a function binds in its own scope (its parameters, assignments,
    imports, nested definitions, also those under its ``if``/``for``/``try``),
    minus its globals: a call of one of them is not a call of the module's global.
    A ``:=`` is not seen."""
    args = node.args
    found = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    found.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    if isinstance(node, ast.Lambda):
        return found
    declared: set[str] = set()
    for stmt in node.body:
        found.update(_statement_names(stmt))
        for sub in _statements(stmt):
            if isinstance(sub, ast.Global):
                declared.update(sub.names)
    return found - declared


def _statements(node: ast.stmt) -> Iterator[ast.AST]:
    pending: list[ast.AST] = [node]
    while pending:
        sub = pending.pop()
        yield sub
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(sub, field, None)
            if isinstance(inner, list):
                pending.extend(inner)


def _call_lines(text: str, names: Sequence[str]) -> list[int]:
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\s*\(")
    lines: list[int] = []
    line, counted = 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def calls_of(tree: ast.Module, text: str, names: Sequence[str]) -> list[Call]:
    """The calls of the bare global *names* in *tree* (parsed from *text*): only the
    statements on lines where one of them is written before ``(`` are walked."""
    if not names:
        return []
    lines = _call_lines(text.replace("\r\n", "\n").replace("\r", "\n"), names)
    if not lines:
        return []
    wanted = frozenset(names)
    found: list[Call] = []
    pending: list[tuple[ast.AST, frozenset[str]]] = [(n, frozenset()) for n in tree.body]
    while pending:
        node, shadowed = pending.pop()
        first = getattr(node, "lineno", None)
        if first is not None:
            last = getattr(node, "end_lineno", None) or first
            for decorator in getattr(node, "decorator_list", ()):
                first = min(first, decorator.lineno)
            at = bisect.bisect_left(lines, first)
            if at == len(lines) or lines[at] > last:
                continue  # no wanted call is written within it
        if isinstance(node, (*_FUNCTIONS, ast.Lambda)):
            args = node.args
            outside: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d)]
            if not isinstance(node, ast.Lambda):
                outside.extend(node.decorator_list)
            pending.extend((n, shadowed) for n in outside)
            inner = shadowed | _locals(node)
            body = node.body if isinstance(node.body, list) else [node.body]
            pending.extend((n, inner) for n in body)
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in wanted
            and node.func.id not in shadowed
        ):
            keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
            unpacked = any(isinstance(a, ast.Starred) for a in node.args) or len(keywords) < len(
                node.keywords
            )
            found.append(
                Call(
                    node.func.id,
                    node.lineno,
                    node.col_offset + 1,
                    len(node.args),
                    keywords,
                    unpacked,
                )
            )
        pending.extend((child, shadowed) for child in ast.iter_child_nodes(node))
    found.sort(key=lambda c: (c.line, c.col))
    return found
