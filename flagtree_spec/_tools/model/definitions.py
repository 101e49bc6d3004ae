"""The top-level definitions of a module, and the calls a file makes of names it imports.

:func:`definition_of` says what a name a module binds once, at top level
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
import builtins
from collections.abc import Iterator, Sequence
from typing import Callable, NamedTuple, Optional, Union

from .calls import Signature, calls_on, parser_lines, signature_of
from .facts import resolve_relative, statements

__all__ = [
    "UNKNOWN",
    "Call",
    "Definition",
    "calls_of",
    "definition_of",
    "parameters",
    "plain_builtin_base",
    "plain_class",
    "statement_names",
]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Definition(NamedTuple):
    """What a module-level name is bound to.

    ``kind`` is ``function``, ``class``, ``import`` (then ``module`` and
    ``name`` say what from) or ``unknown``; ``node`` is the ``def`` or
    ``class`` (see :func:`parameters`).
    """

    kind: str
    line: int
    node: Optional[ast.stmt] = None
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


def plain_builtin_base(base: ast.expr) -> bool:
    """Whether class base *base* is ``object``, a built-in exception, ``Generic[...]`` or
    ``ABC``: none brings a metaclass whose call, or a ``__new__`` that, would take other
    arguments than the class's own ``__init__``."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr in ("Generic", "ABC")
    return isinstance(base, ast.Name) and (base.id in _PLAIN_BASES or base.id in ("Generic", "ABC"))


def parameters(
    definition: Definition, plain_base: Callable[[ast.expr], bool] = plain_builtin_base
) -> Optional[Signature]:
    """The parameters a call of *definition* binds to: a function's, a class's
    ``__init__``'s without ``self`` (none for a class without bases or ``__init__``);
    ``None`` when syntax cannot tell (a decorator, a metaclass, a ``__new__``, a base
    that may bring any of them: each base must satisfy *plain_base*)."""
    node = definition.node
    if isinstance(node, _FUNCTIONS):
        return None if node.decorator_list else signature_of(node)
    if isinstance(node, ast.ClassDef):
        return _class(node, plain_base)
    return None


def plain_class(node: ast.ClassDef) -> bool:
    """Whether class *node* itself changes nothing of how its subclasses are called:
    no decorator, no metaclass, no ``__new__``."""
    if node.decorator_list or node.keywords:
        return False
    return not any(isinstance(s, _FUNCTIONS) and s.name == "__new__" for s in node.body)


def _without_self(sig: Signature) -> Signature:
    """The parameters of a method called through its class's instance: the first left out."""
    if sig.positional_only:
        return sig._replace(
            positional_only=sig.positional_only[1:], required=max(0, sig.required - 1)
        )
    if sig.positional:
        return sig._replace(positional=sig.positional[1:], required=max(0, sig.required - 1))
    return sig  # def __init__(*args): self is one of them


def _class(node: ast.ClassDef, plain_base: Callable[[ast.expr], bool]) -> Optional[Signature]:
    if node.decorator_list or node.keywords:
        return None  # a decorator or a metaclass may change it
    init: Optional[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = None
    for stmt in node.body:
        if isinstance(stmt, _FUNCTIONS):
            if stmt.name == "__new__" or (stmt.name == "__init__" and stmt.decorator_list):
                return None
            if stmt.name == "__init__":
                init = stmt
        elif not isinstance(stmt, (ast.Expr, ast.Pass)) and "__init__" in statement_names(stmt):
            return None  # __init__ = something
    if not all(plain_base(b) for b in node.bases):
        # A base may bring a metaclass or a __new__ of its own (an Enum, a
        # NamedTuple): what a call takes is unknown.
        return None
    if init is not None:
        return _without_self(signature_of(init))
    if node.bases:
        return None  # a base's __init__, an exception's own
    return Signature((), (), 0, False, (), frozenset(), False)


_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# What a name bound twice, or by any other statement, is: nothing a call can be judged on.
UNKNOWN = Definition("unknown", 0)


def definition_of(tree: ast.Module, name: str, package: str) -> Optional[Definition]:
    """What top-level name *name* of module *tree* (in package *package*) is bound to;
    ``None`` when no top-level statement binds it (a star import may)."""
    found: Optional[Definition] = None
    for node in tree.body:
        kind = type(node)
        if kind is ast.Expr or kind is ast.Pass:
            continue
        if isinstance(node, _DEFINING):
            if node.name != name:
                continue
            this = Definition("class" if kind is ast.ClassDef else "function", node.lineno, node)
        elif kind is ast.ImportFrom or kind is ast.Import:
            alias = next(
                (a for a in node.names if (a.asname or a.name.partition(".")[0]) == name),  # type: ignore[attr-defined]
                None,
            )
            if alias is None:
                continue
            module = (
                resolve_relative(node.level, node.module, package)  # type: ignore[attr-defined]
                if kind is ast.ImportFrom
                else None
            )
            this = UNKNOWN if module is None else Definition("import", 0, None, module, alias.name)
        elif kind is ast.Assign:
            if not any(name in set(_targets(t)) for t in node.targets):  # type: ignore[attr-defined]
                continue
            this = UNKNOWN
        elif name in set(statement_names(node)):
            this = UNKNOWN
        else:
            continue
        if found is not None:
            return UNKNOWN  # bound twice
        found = this
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


_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
# Statements that hold other statements, with the fields that hold them.
_BLOCKS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in _BODY_FIELDS if f in kind._fields)
    for kind in (
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.AsyncWith,
        ast.ExceptHandler,
        *(getattr(ast, n) for n in ("Try", "TryStar", "Match", "match_case") if hasattr(ast, n)),
    )
}


def statement_names(node: ast.AST) -> Iterator[str]:
    """The names statement *node* binds in its scope, found from its statements and
    their targets (not from expressions: a ``:=`` is not seen)."""
    kind = type(node)
    if kind is ast.Expr or kind is ast.Pass or kind is ast.Return:
        return
    if isinstance(node, _DEFINING):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).partition(".")[0]
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _targets(target)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        yield from _targets(node.target)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            yield from _targets(target)
    elif kind in _BLOCKS:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            yield from _targets(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    yield from _targets(item.optional_vars)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        pattern = getattr(node, "pattern", None)  # a match case's captures
        if pattern is not None:
            for part in ast.walk(pattern):
                name = getattr(part, "name", None) or getattr(part, "rest", None)
                if isinstance(name, str):
                    yield name
        for field in _BLOCKS[kind]:
            for inner in getattr(node, field):
                yield from statement_names(inner)


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
        found.update(statement_names(stmt))
        for sub in statements([stmt]):
            if isinstance(sub, ast.Global):
                declared.update(sub.names)
    return found - declared


def _call_lines(text: str, names: Sequence[str]) -> list[int]:
    """The sorted lines where one of *names* is written before a ``(`` (a superset of
    where their calls start: strings and comments are not told apart).  Found with
    ``str.find``: a regular expression of the names would be compiled per file."""
    starts: list[int] = []
    for name in names:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            before = text[at - 1] if at else " "
            if not (before.isalnum() or before == "_"):
                rest = text[end : end + 8].lstrip()
                if rest[:1] == "(" or (not rest and text[end:].lstrip()[:1] == "("):
                    starts.append(at)
            at = text.find(name, end)
    starts.sort()
    lines: list[int] = []
    line, counted = 1, 0
    for start in starts:
        line += text.count("\n", counted, start)
        counted = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _functions_around(body: Sequence[ast.stmt], line: int) -> Iterator[ast.AST]:
    """The ``def`` statements (a method's, a nested one's) whose body holds *line*,
    outermost first; statements only are looked at (a lambda is not seen)."""
    at: Sequence[ast.stmt] = body
    while True:
        inner = None
        for node in at:
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                inner = node
                break
        if inner is None:
            return
        if isinstance(inner, _FUNCTIONS):
            yield inner
        children: list[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            value = getattr(inner, field, None)
            if isinstance(value, list):
                children.extend(value)
        for holder in (*getattr(inner, "handlers", ()), *getattr(inner, "cases", ())):
            children.extend(holder.body)
        if not children:
            return
        at = children


def _maybe_bound(
    lines: Sequence[str], function: Union[ast.FunctionDef, ast.AsyncFunctionDef], name: str
) -> bool:
    """Whether *function*'s text may bind *name*: some use of it is not a call
    (``name =``, ``name,``, a parameter), or one is ``def name(``/``class name(``."""
    text = "\n".join(lines[function.lineno - 1 : function.end_lineno or function.lineno])
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end : end + 1]
        whole = not (before.isalnum() or before == "_" or after.isalnum() or after == "_")
        if whole and (
            text[end:].lstrip()[:1] != "(" or text[:at].rstrip().endswith(("def", "class"))
        ):
            return True
        at = text.find(name, end)
    return False


def calls_of(tree: ast.Module, text: str, names: Sequence[str], other: str = "") -> list[Call]:
    """The calls of the bare global *names* in *tree* (parsed from *text*): only the
    statements on lines where one of them is written before ``(`` are walked (see
    :func:`~.calls.calls_on`), and a call in a function with a parameter or
    variable of that name is left out.  A line that is also a line of the source
    *other* (stripped) and holds whole calls (its brackets balance) is left out
    too: the version an override shadows makes the same call."""
    if not names:
        return []
    text = parser_lines(text)
    lines = _call_lines(text, names)
    if other and lines:
        known = frozenset(map(str.strip, other.splitlines()))
        rows = text.split("\n")
        lines = [
            n
            for n in lines
            if not (
                rows[n - 1].strip() in known
                and rows[n - 1].count("(") == rows[n - 1].count(")")
                and rows[n - 1].count("[") == rows[n - 1].count("]")
            )
        ]
    if not lines:
        return []
    wanted = frozenset(names)
    found: list[Call] = []
    shadowing: dict[int, set[str]] = {}  # id of a def -> its own names
    text_lines: list[str] = []
    for node in calls_on(tree, lines):
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in wanted:
            continue
        shadowed = False
        for function in _functions_around(tree.body, node.lineno):
            assert isinstance(function, _FUNCTIONS)
            text_lines = text_lines or text.splitlines()
            if not _maybe_bound(text_lines, function, func.id):
                continue  # every use of the name there is a call: none binds it
            own = shadowing.get(id(function))
            if own is None:
                own = shadowing[id(function)] = _locals(function)
            if func.id in own:
                shadowed = True
                break
        if shadowed:
            continue
        keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
        unpacked = any(isinstance(a, ast.Starred) for a in node.args) or len(keywords) < len(
            node.keywords
        )
        found.append(
            Call(func.id, node.lineno, node.col_offset + 1, len(node.args), keywords, unpacked)
        )
    found.sort(key=lambda c: (c.line, c.col))
    return found
