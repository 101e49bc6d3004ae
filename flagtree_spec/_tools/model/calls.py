"""Hook calls and hook signatures, read from syntax.

:func:`hook_calls` finds the calls ``spec("h", a, b, k=v)`` (and those of a
trunk module's own dispatchers, :func:`dispatchers`) with a literal hook name;
:func:`signature_of` reads the parameters of a ``def`` or ``lambda``.  Whether
a call binds to a signature is the check's question (FTS012,
:mod:`flagtree_spec._tools.check.signatures`).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple, Optional, Union

__all__ = [
    "Dispatch",
    "HookCall",
    "Signature",
    "call_name",
    "calls_on",
    "dispatchers",
    "hook_call",
    "hook_calls",
    "or_defaults",
    "parser_lines",
    "signature_of",
]


class Signature(NamedTuple):
    """The parameters of one function, as far as binding a call is concerned."""

    positional_only: tuple[str, ...]
    positional: tuple[str, ...]  # positional-or-keyword
    required: int  # how many of positional_only + positional have no default
    var_positional: bool  # *args
    keyword_only: tuple[str, ...]
    keyword_required: frozenset[str]  # keyword-only parameters without a default
    var_keyword: bool  # **kwargs

    def describe(self) -> str:
        """The parameter list as written, defaults shown as ``=...``."""
        parts: list[str] = []
        names = (*self.positional_only, *self.positional)
        for i, name in enumerate(names):
            parts.append(name if i < self.required else f"{name}=...")
            if self.positional_only and i == len(self.positional_only) - 1:
                parts.append("/")
        if self.var_positional:
            parts.append("*args")
        elif self.keyword_only:
            parts.append("*")
        parts.extend(n if n in self.keyword_required else f"{n}=..." for n in self.keyword_only)
        if self.var_keyword:
            parts.append("**kwargs")
        return f"({', '.join(parts)})"


def signature_of(node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]) -> Signature:
    """The :class:`Signature` of a ``def`` or ``lambda``."""
    args = node.args
    posonly = tuple(a.arg for a in args.posonlyargs)
    positional = tuple(a.arg for a in args.args)
    keyword_only = tuple(a.arg for a in args.kwonlyargs)
    required = frozenset(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None)
    return Signature(
        posonly,
        positional,
        len(posonly) + len(positional) - len(args.defaults),
        args.vararg is not None,
        keyword_only,
        required,
        args.kwarg is not None,
    )


# --------------------------------------------------------------------------- call sites


def call_name(node: ast.expr) -> str:
    """The last name of *node*: ``x`` for ``x`` and ``a.b.x``, empty for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


class HookCall(NamedTuple):
    """A call ``f("hook", ...)`` with a literal hook name.

    ``callee`` is the bare name called (empty for an attribute call such as
    ``x.spec(...)``, whose ``attribute`` is then set); ``positional`` and
    ``keywords`` are the arguments after the hook name; ``unpacked`` tells that
    the call uses ``*`` or ``**`` unpacking, so its arguments are unknown.
    """

    hook: str
    line: int
    col: int
    callee: str
    attribute: str
    positional: int
    keywords: tuple[str, ...]
    unpacked: bool


# What a bare name of a trunk module is bound to, as far as hook calls go:
# ("flagtree_spec", name) for flagtree_spec's spec/spec_func, ("for_root", attr) for
# for_root(...).spec, ("forwarder", "") for a def spec(name, *args, **kwargs) that
# forwards its arguments, ("import", level, module, name) for a name imported from
# another module that may be one of these.
Dispatch = tuple[object, ...]

# spec_call: the name FlagTree's _flagtree_spec.py gives spec().
_DISPATCH_NAMES = ("spec", "spec_call", "spec_func")
_DISPATCH_SET = frozenset(_DISPATCH_NAMES)


def _forwards(node: Union[ast.FunctionDef, ast.AsyncFunctionDef]) -> bool:
    """A ``def f(hook, /, *args, **kwargs)`` whose body calls something with them."""
    args = node.args
    if args.vararg is None or args.kwarg is None or len(args.posonlyargs) + len(args.args) != 1:
        return False
    star, stars = args.vararg.arg, args.kwarg.arg
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and any(
                isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id == star
                for a in sub.args
            )
            and any(
                k.arg is None and isinstance(k.value, ast.Name) and k.value.id == stars
                for k in sub.keywords
            )
        ):
            return True
    return False


def dispatchers(tree: ast.Module) -> dict[str, Dispatch]:
    """The module-level names of *tree* that may be hook dispatchers, and why."""
    found: dict[str, Dispatch] = {}
    _dispatchers_in(tree.body, found, set())
    # for_root(...) bound to a name first: "spec = for_root('R').spec" written with it.
    for name, why in list(found.items()):
        if why[0] == "for_root_function":
            del found[name]
    return found


def _for_root_attribute(value: ast.expr) -> bool:
    """Whether *value* is ``for_root(...).spec`` (or ``.spec_func``), ``for_root``
    bare or as an attribute."""
    if not (
        isinstance(value, ast.Attribute)
        and value.attr in _DISPATCH_NAMES
        and isinstance(value.value, ast.Call)
    ):
        return False
    func = value.value.func
    return (isinstance(func, ast.Name) and func.id == "for_root") or (
        isinstance(func, ast.Attribute) and func.attr == "for_root"
    )


# The statements that may bind a dispatcher, or hold statements that may.
_BINDING_STATEMENTS = frozenset(
    {ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.If, ast.Try}
)


def _dispatchers_in(
    body: Sequence[ast.stmt], found: dict[str, Dispatch], forwarders: set[str]
) -> None:
    binding = _BINDING_STATEMENTS
    for node in body:
        if type(node) not in binding:
            continue
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if node.level == 0 and node.module == "flagtree_spec":
                    if alias.name in _DISPATCH_NAMES:
                        found[bound] = ("flagtree_spec", alias.name)
                    elif alias.name == "for_root":
                        found[bound] = ("for_root_function", "")
                    else:
                        found.pop(bound, None)
                elif alias.name in _DISPATCH_NAMES or bound in _DISPATCH_NAMES:
                    found[bound] = ("import", node.level, node.module or "", alias.name)
                else:
                    found.pop(bound, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.args.vararg is not None and node.args.kwarg is not None and _forwards(node):
                forwarders.add(node.name)
                if node.name in ("spec", "spec_call"):
                    found[node.name] = ("forwarder", "")
                    continue
            found.pop(node.name, None)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value, ast.Attribute) and _for_root_attribute(value):
                found[target.id] = ("for_root", value.attr)
            elif isinstance(value, ast.Name) and value.id in forwarders:
                found[target.id] = ("forwarder", "")
            elif isinstance(value, ast.Name) and value.id in found:
                found[target.id] = found[value.id]
            else:
                found.pop(target.id, None)
        elif isinstance(node, (ast.If, ast.Try)):
            _dispatchers_in(node.body, found, forwarders)
            _dispatchers_in(node.orelse, found, forwarders)
            for handler in getattr(node, "handlers", ()):
                _dispatchers_in(handler.body, found, forwarders)


def _subclasses(*bases: type) -> set[type]:
    found: set[type] = set()
    for base in bases:
        found.update(base.__subclasses__())
    return found


# Nodes that hold no call: never walked into.
_NO_CALL: frozenset[type] = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.alias,
        *_subclasses(ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop),
    }
)


# Fields that hold a name, a number or a flag, or a node that holds no call (the
# Name of a 3.12 "type" statement).
_SCALARS = frozenset(
    {"name", "id", "arg", "attr", "module", "asname", "level", "type_comment", "conversion"}
    | {"is_async", "simple", "kind", "lineno", "col_offset", "end_lineno", "end_col_offset"}
)
# The fields that hold statements (or except handlers and match cases, which
# hold statements in turn), in the nodes that hold statements.  An expression's
# "body" or "orelse" (x if c else y, lambda: x) is an expression.
_BODY_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_HOLD_STATEMENTS: tuple[type, ...] = tuple(
    getattr(ast, name) for name in ("stmt", "excepthandler", "match_case") if hasattr(ast, name)
)
# Per node type: the other fields that may hold a call, and the body fields.
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _fields_of(kind: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    found = _FIELDS.get(kind)
    if found is None:
        names = [f for f in getattr(kind, "_fields", ()) if f not in _SCALARS]
        bodies = _BODY_FIELDS if issubclass(kind, _HOLD_STATEMENTS) else frozenset()
        found = _FIELDS[kind] = (
            tuple(f for f in names if f not in bodies),
            tuple(f for f in names if f in bodies),
        )
    return found


def calls_on(tree: ast.Module, lines: Sequence[int]) -> list[ast.Call]:
    """The calls in *tree* that span one of the sorted *lines* (a superset of the
    calls written on those lines).

    A call ``spec(...)`` spans the line where its name is written, so only the
    statements around those lines are walked, down to the innermost one: a
    fraction of ``ast.walk`` in a module that calls a few hooks.
    """
    found: list[ast.Call] = []
    _statements_on(tree.body, lines, found)
    # A statement is walked whole once one of its lines is one of *lines*: keep
    # the calls that span one of them, whatever else their statement holds.
    kept = []
    for call in found:
        at = bisect.bisect_left(lines, call.lineno)
        if at < len(lines) and lines[at] <= (call.end_lineno or call.lineno):
            kept.append(call)
    return kept


def _statements_on(body: Sequence[ast.AST], lines: Sequence[int], found: list[ast.Call]) -> None:
    """The calls of the statements of *body* that span one of the sorted *lines*."""
    if not body:
        return
    if not hasattr(body[0], "end_lineno"):  # match cases have no lines: always entered
        for node in body:
            _enter(node, lines, found)
        return
    # A body's statements follow each other, so their last lines rise (two on one
    # line, "a = 1; b = 2", share it): each line's statements are found by bisection.
    ends = [node.end_lineno for node in body]  # type: ignore[attr-defined]
    count, entered = len(ends), -1
    for line in lines:
        at = bisect.bisect_left(ends, line)
        while at < count:
            node = body[at]
            first = node.lineno  # type: ignore[attr-defined]
            decorators = getattr(node, "decorator_list", None)
            if decorators:  # written above the def or class line
                first = min(first, *(d.lineno for d in decorators))
            if first > line:
                break
            if at > entered:
                entered = at
                _enter(node, lines, found)
            at += 1


def _header_on(node: ast.AST, lines: Sequence[int]) -> bool:
    """Whether one of the sorted *lines* falls on the header of compound statement
    *node* (its decorators down to the line where its body starts): a call in its
    own expressions (a test, a decorator, a default) can span only those."""
    body = getattr(node, "body", None)
    first = getattr(node, "lineno", None)
    if not body or first is None or not hasattr(body[0], "lineno"):
        return True  # a match statement, whose cases have no lines: entered
    for decorator in getattr(node, "decorator_list", ()):
        first = min(first, decorator.lineno)
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= body[0].lineno


def _enter(node: ast.AST, lines: Sequence[int], found: list[ast.Call]) -> None:
    """The calls of *node*'s own expressions, and of its statements on *lines*."""
    parts, bodies = _fields_of(type(node))
    if bodies and not _header_on(node, lines):
        parts = ()  # the lines are in its body: its own expressions hold none of them
    pending: list[object] = []
    for field in parts:
        value = getattr(node, field, None)
        if type(value) is list:
            pending.extend(value)
        elif value is not None:
            pending.append(value)
    if pending:
        _expression_calls(pending, found)
    for field in bodies:
        _statements_on(getattr(node, field, ()), lines, found)


def _expression_calls(pending: list[object], found: list[ast.Call]) -> None:
    """Every call in the nodes *pending* (emptied), in no particular order."""
    no_call, call, fields = _NO_CALL, ast.Call, _FIELDS
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in no_call:
            continue
        if kind is call:
            found.append(node)  # type: ignore[arg-type]
        known = fields.get(kind)
        for field in (known or _fields_of(kind))[0]:
            inner = getattr(node, field, None)
            if type(inner) is list:
                pending.extend(inner)
            elif inner is not None:
                pending.append(inner)


# The calls of spec/spec_func, for a module with no other names for them.  No
# leading \b: it makes the search several times slower; the character before
# a match is tested instead.
_DISPATCH_CALL = re.compile(r"spec(?:_func|_call)?[\s)\\]*\(")


def parser_lines(text: str) -> str:
    """*text* with every line end as ``\\n``, so that counting ``\\n`` counts lines as
    the parser does (a lone carriage return ends one too)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _call_lines(text: str, names: frozenset[str]) -> list[int]:
    """The sorted lines where one of *names* is written before a ``(`` (``(spec)(``
    too): where each call of them starts (a superset: strings and comments are
    not told apart)."""
    if names == _DISPATCH_SET:
        pattern = _DISPATCH_CALL
    else:
        pattern = re.compile("(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")[\s)\\]*\(")
    text = parser_lines(text)
    lines: list[int] = []
    line, counted = 1, 0
    for match in pattern.finditer(text):
        start = match.start()
        before = text[start - 1] if start else " "
        if before.isalnum() or before == "_":
            continue  # the end of a longer name
        line += text.count("\n", counted, start)
        counted = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def hook_calls(tree: ast.Module, text: str, names: Sequence[str]) -> list[HookCall]:
    """Every call of ``spec``/``spec_func`` (bare or as an attribute) or of one of the
    bare *names*, whose first argument is a literal string."""
    calls: list[HookCall] = []
    wanted = frozenset((*_DISPATCH_NAMES, *names))
    lines = _call_lines(text, wanted)
    if not lines:
        return calls
    for node in calls_on(tree, lines):
        found = hook_call(node, wanted)
        if found is not None:
            calls.append(found)
    calls.sort(key=lambda c: (c.line, c.col))
    return calls


def hook_call(node: ast.Call, wanted: frozenset[str]) -> Optional[HookCall]:
    """The hook call *node* is, when it calls ``spec``/``spec_func`` as an attribute
    or one of the bare names *wanted* with a literal string first."""
    if not (
        node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    ):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in wanted:
        callee, attribute = func.id, ""
    elif isinstance(func, ast.Attribute) and func.attr in _DISPATCH_NAMES:
        callee, attribute = "", func.attr
    else:
        return None
    rest = node.args[1:]
    unpacked = False
    for arg in rest:
        if isinstance(arg, ast.Starred):
            unpacked = True
    keywords = []
    for keyword in node.keywords:
        if keyword.arg is None:  # **kwargs
            unpacked = True
        else:
            keywords.append(keyword.arg)
    return HookCall(
        node.args[0].value,
        node.lineno,
        node.col_offset + 1,
        callee,
        attribute,
        len(rest),
        tuple(keywords),
        unpacked,
    )


# A module that may hold "spec(...) or default".
_SPEC_OR = re.compile(r"\bspec\s*\(")


def _conditions(node: ast.AST) -> list[ast.expr]:
    """The expressions *node* uses only for their truth value."""
    if isinstance(node, (ast.Assert, ast.If, ast.While, ast.IfExp)):
        return [node.test]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [node.operand]
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    if isinstance(node, ast.Call) and call_name(node.func) == "bool" and node.args:
        return [node.args[0]]
    return []


def or_defaults(tree: ast.Module, text: str) -> list[tuple[int, int, str]]:
    """``(line, col, hook)`` of every ``spec("hook", ...) or default`` in *tree*
    (parsed from *text*), where the ``or`` is no condition and the default no
    falsy literal."""
    found: list[tuple[int, int, str]] = []
    if ") or" not in text or not _SPEC_OR.search(text):
        return found
    # As a condition (assert, if, while, not), "or" is the logic meant.
    conditions = {id(test) for node in ast.walk(tree) for test in _conditions(node)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.BoolOp) or not isinstance(node.op, ast.Or):
            continue
        default = node.values[-1]
        if id(node) in conditions or (isinstance(default, ast.Constant) and not default.value):
            continue  # a condition, or a default as falsy as any result
        first = node.values[0]
        if (
            isinstance(first, ast.Call)
            and call_name(first.func) == "spec"
            and first.args
            and isinstance(first.args[0], ast.Constant)
            and isinstance(first.args[0].value, str)
        ):
            found.append((node.lineno, node.col_offset + 1, first.args[0].value))
    return found
