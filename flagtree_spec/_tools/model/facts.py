"""The facts of one syntax tree, extracted in one pass over its statements.

:func:`extract` walks a module's statements once (expressions only where
needed) and records what the model and the checks ask of a file: the
``spec_path(__path__, exclude=...)`` call, the ``inherit(...)`` call, the
names the module defines and imports, its ``__all__``, its import statements
(module level, in order, and those of function bodies) and whether something
binds names no statement shows (a star import, ``bind_symbols``, a module
``__getattr__``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import NamedTuple, Optional

from .calls import call_name, parser_lines

__all__ = [
    "MODULE_NAMES",
    "Facts",
    "ImportFrom",
    "SpecPathCall",
    "Statement",
    "call_name",
    "extract",
    "main_guard",
    "resolve_relative",
    "statements",
    "string_list",
]


# Names every module's namespace holds before its first statement runs, and the one
# inherit() adds; a package's also holds __path__.
MODULE_NAMES = frozenset(
    {
        "__name__",
        "__doc__",
        "__file__",
        "__spec__",
        "__loader__",
        "__package__",
        "__builtins__",
        "__cached__",
        "__annotations__",
        "__dict__",
        "__inherits__",
    }
)


class ImportFrom(NamedTuple):
    """One ``from X import a, b`` statement, with X resolved to an absolute name."""

    module: str
    names: tuple[str, ...]
    line: int
    col: int
    guarded: bool  # inside a try that catches ImportError, or under if TYPE_CHECKING


class Statement(NamedTuple):
    """An import statement that runs when the module is imported (module level)."""

    line: int
    col: int
    level: int
    module: Optional[str]  # "a.b" of "import a.b" or "from a.b import x"; None: "from . import"
    names: tuple[str, ...]  # empty for "import a.b"
    guarded: bool


class SpecPathCall(NamedTuple):
    """A ``spec_path(__path__, exclude=...)`` call at module level."""

    line: int
    exclude: tuple[str, ...]  # only literal lists of names are known statically


class Facts:
    """What the checks need from one syntax tree, extracted in one pass."""

    __slots__ = (
        "all_names",
        "defined",
        "defines_all",
        "extends_path",
        "imported",
        "imports",
        "incidental",
        "inherit_line",
        "inherits",
        "order",
        "plain_imports",
        "spec_path",
        "unseen",
    )

    def __init__(self) -> None:
        self.spec_path: Optional[SpecPathCall] = None
        self.inherits = False
        self.inherit_line = 0  # the first module-level inherit(...) call
        # A package init that puts folders on its own __path__ itself (append, extend,
        # insert, +=, an assignment), as FlagTree's iluvatar overrides do.
        self.extends_path = False
        self.defines_all = False
        # Names bound by something no statement shows: bind_symbols(...),
        # globals().update(...), setattr(sys.modules[__name__], ...).
        self.unseen = False
        self.defined: set[str] = set()
        self.imported: set[str] = set()  # names bound by an import statement
        # Names bound only as a module-level loop variable: not part of the API.
        self.incidental: set[str] = set()
        self.all_names: Optional[tuple[str, ...]] = None
        self.imports: list[tuple[int, Optional[str], tuple[str, ...], int, int, bool]] = []
        # Every "import a.b" statement: (name, line, col, guarded).
        self.plain_imports: list[tuple[str, int, int, bool]] = []
        # The import statements that run at import time, in order.
        self.order: list[Statement] = []

    def public(self) -> list[str]:
        """The public names: a literal ``__all__``, else top-level names without
        a leading underscore that an import statement did not bind (nor only a
        loop; names bound under ``if __name__ == "__main__":`` are not bound on
        import at all)."""
        if self.all_names is not None:
            return list(self.all_names)
        return sorted(
            n for n in self.defined - self.imported - self.incidental if not n.startswith("_")
        )


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(handlers: Sequence[ast.ExceptHandler]) -> bool:
    for handler in handlers:
        kind = handler.type
        if kind is None:
            return True
        kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
        if any(call_name(k) in _IMPORT_ERRORS for k in kinds):
            return True
    return False


def main_guard(test: ast.expr) -> bool:
    """Whether *test* is ``__name__ == "__main__"`` (either way round)."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    texts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(texts) == 1


def _type_checking(test: ast.expr) -> bool:
    """Whether *test* is ``TYPE_CHECKING`` (or ``typing.TYPE_CHECKING``): false at run time."""
    return call_name(test) == "TYPE_CHECKING"


_TRY: tuple[type, ...] = tuple(
    getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name)
)
_COMPOUND: frozenset[type] = frozenset(
    getattr(ast, name)
    for name in (
        "FunctionDef",
        "AsyncFunctionDef",
        "ClassDef",
        "If",
        "For",
        "AsyncFor",
        "While",
        "With",
        "AsyncWith",
        "Try",
        "TryStar",
        "Match",
    )
    if hasattr(ast, name)
)


def string_list(node: ast.expr) -> Optional[tuple[str, ...]]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = []
        for elt in node.elts:
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return None
            items.append(elt.value)
        return tuple(items)
    return None


def _bind_target(facts: Facts, target: ast.expr) -> None:
    if isinstance(target, ast.Name):
        facts.defined.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _bind_target(facts, elt)
    elif isinstance(target, ast.Starred):
        _bind_target(facts, target.value)


def _module_call(facts: Facts, value: ast.expr) -> None:
    """Record a module-level call of spec_path, inherit, bind_symbols or globals()."""
    if not isinstance(value, ast.Call):
        return
    func = value.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("append", "extend", "insert")
        and isinstance(func.value, ast.Name)
        and func.value.id == "__path__"
    ):
        facts.extends_path = True
        return
    name = call_name(func)
    if name == "spec_path" and value.args and call_name(value.args[0]) == "__path__":
        exclude: tuple[str, ...] = ()
        if len(value.args) > 1:  # FlagTree's spec_path(path, exclude), through its spec file
            exclude = string_list(value.args[1]) or ()
        for keyword in value.keywords:
            if keyword.arg == "exclude":
                exclude = string_list(keyword.value) or ()
        previous = facts.spec_path
        line = value.lineno
        if previous is not None:  # the first call is the one that changes __path__
            exclude, line = previous.exclude + exclude, previous.line
        facts.spec_path = SpecPathCall(line, exclude)
    elif name == "inherit":
        facts.inherits = True
        facts.inherit_line = facts.inherit_line or value.lineno
        facts.defines_all = True
    elif name == "bind_symbols" or (
        name == "update"
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Call)
        and call_name(value.func.value.func) in ("globals", "vars")
    ):
        facts.defines_all = True
        facts.unseen = True


def _reads_path(value: ast.expr) -> bool:
    """Whether *value* reads ``__path__`` (a new path made from the old one extends it;
    ``__path__ = [here]`` narrows it)."""
    return any(isinstance(n, ast.Name) and n.id == "__path__" for n in ast.walk(value))


def _last_marked_line(text: str) -> int:
    """The last line of *text* on which ``import`` or ``global`` is written (0: none)."""
    text = parser_lines(text)
    at = max(text.rfind("import"), text.rfind("global"))
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def extract(tree: ast.Module, text: str) -> Facts:
    """Walk the statements of *tree*, parsed from *text*, once (expressions only
    where needed).

    A function or class below the last line that holds ``import`` or
    ``global`` is not walked into: no statement of its body can matter.
    """
    facts = Facts()
    _top(facts, tree.body, False, _last_marked_line(text))
    return facts


def _import_from(facts: Facts, node: ast.ImportFrom, guarded: bool) -> tuple[str, ...]:
    names = tuple([a.name for a in node.names])
    facts.imports.append(
        (node.level, node.module, names, node.lineno, node.col_offset + 1, guarded)
    )
    return names


def _plain(facts: Facts, node: ast.Import, guarded: bool) -> None:
    line, col = node.lineno, node.col_offset + 1
    facts.plain_imports.extend([(alias.name, line, col, guarded) for alias in node.names])


# The statement types of :func:`_below`'s last branch, with the fields holding bodies.
_BODIES: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in ("body", "orelse") if f in getattr(kind, "_fields", ()))
    for kind in _COMPOUND
    if not issubclass(kind, (ast.If, *_TRY))
}


def _below(facts: Facts, body: Sequence[ast.stmt], guarded: bool) -> None:
    """Statements below module level: only imports and ``global`` matter."""
    for node in body:
        if isinstance(node, ast.ImportFrom):
            _import_from(facts, node, guarded)
        elif isinstance(node, ast.Import):
            _plain(facts, node, guarded)
        elif isinstance(node, ast.Global):
            facts.defined.update(node.names)
        elif isinstance(node, _TRY):
            inner = guarded or _catches_import_error(node.handlers)  # type: ignore[attr-defined]
            _below(facts, node.body, inner)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                _below(facts, handler.body, guarded)
            _below(facts, node.orelse, guarded)  # type: ignore[attr-defined]
            _below(facts, node.finalbody, guarded)  # type: ignore[attr-defined]
        elif isinstance(node, ast.If):
            _below(facts, node.body, guarded or _type_checking(node.test))
            _below(facts, node.orelse, guarded)
        elif type(node) in _BODIES:
            for name in _BODIES[type(node)]:
                _below(facts, getattr(node, name), guarded)
            for case in getattr(node, "cases", ()):
                _below(facts, case.body, guarded)


def _top(facts: Facts, body: Sequence[ast.stmt], guarded: bool, last_marked: int) -> None:
    """Module-level statements (also inside module-level if/try/for/with/match)."""
    defined, imported = facts.defined, facts.imported
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
            defined.add(name)
            if name == "__getattr__":
                facts.defines_all = True
            if node.lineno <= last_marked:
                _below(facts, node.body, guarded)
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
            if node.lineno <= last_marked:
                _below(facts, node.body, guarded)
        elif isinstance(node, ast.Assign):
            value = node.value
            for target in node.targets:
                if type(target) is ast.Name:
                    defined.add(target.id)
                    if target.id == "__all__":
                        facts.all_names = string_list(value)
                    elif target.id == "__path__" and _reads_path(value):
                        facts.extends_path = True  # pkgutil.extend_path(__path__, ...)
                else:
                    _bind_target(facts, target)
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "__path__"
                    ):
                        facts.extends_path = True  # __path__[:] = ...
            if type(value) is ast.Call:
                _module_call(facts, value)
        elif isinstance(node, ast.ImportFrom):
            names = _import_from(facts, node, guarded)
            if "*" in names:
                facts.defines_all = True
            facts.order.append(
                Statement(
                    node.lineno,
                    node.col_offset + 1,
                    node.level,
                    node.module,
                    names,
                    guarded,
                )
            )
            for alias in node.names:
                bound = alias.asname or alias.name
                defined.add(bound)
                imported.add(bound)
        elif isinstance(node, ast.Import):
            _plain(facts, node, guarded)
            for alias in node.names:
                facts.order.append(
                    Statement(node.lineno, node.col_offset + 1, 0, alias.name, (), guarded)
                )
                bound = alias.asname or alias.name.partition(".")[0]
                defined.add(bound)
                imported.add(bound)
        elif isinstance(node, ast.Expr):
            if type(node.value) is ast.Call:
                _module_call(facts, node.value)
        elif isinstance(node, ast.AugAssign):
            _bind_target(facts, node.target)
            if isinstance(node.target, ast.Name) and node.target.id == "__path__":
                facts.extends_path = True
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                # A literal __all__ extended by a literal list stays literal.
                more = string_list(node.value)
                known = facts.all_names
                facts.all_names = None if known is None or more is None else known + more
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:  # "x: int" binds nothing
                _bind_target(facts, node.target)
                if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                    facts.all_names = string_list(node.value)
        elif isinstance(node, _TRY):
            inner = guarded or _catches_import_error(node.handlers)  # type: ignore[attr-defined]
            _top(facts, node.body, inner, last_marked)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                if handler.name:
                    defined.add(handler.name)
                _top(facts, handler.body, guarded, last_marked)
            _top(facts, node.orelse, guarded, last_marked)  # type: ignore[attr-defined]
            _top(facts, node.finalbody, guarded, last_marked)  # type: ignore[attr-defined]
        elif isinstance(node, ast.If):
            if main_guard(node.test):
                # Runs only as a script: binds nothing on import, its imports never
                # run on import (checked as guarded ones: not at all).
                _below(facts, node.body, True)
            else:
                # Imports only type checkers run never fail at run time: not checked.
                inner = guarded or _type_checking(node.test)
                _top(facts, node.body, inner, last_marked)
            _top(facts, node.orelse, guarded, last_marked)
        elif isinstance(node, ast.While):
            _top(facts, node.body, guarded, last_marked)
            _top(facts, node.orelse, guarded, last_marked)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            loop = Facts()
            _bind_target(loop, node.target)
            facts.incidental.update(loop.defined - defined)
            defined.update(loop.defined)
            _top(facts, node.body, guarded, last_marked)
            _top(facts, node.orelse, guarded, last_marked)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    _bind_target(facts, item.optional_vars)
            _top(facts, node.body, guarded, last_marked)
        elif isinstance(node, ast.Global):
            defined.update(node.names)
        elif type(node).__name__ == "Match":
            for case in node.cases:  # type: ignore[attr-defined]
                _top(facts, case.body, guarded, last_marked)


def resolve_relative(level: int, module: Optional[str], package: str) -> Optional[str]:
    """The absolute module name of ``from <level dots><module> import ...`` in *package*."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) - 1:
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.extend(module.split("."))
    return ".".join(base) if base else None


def statements(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement of *body*, nested ones included (and except handlers and match
    cases, whose bodies hold statements); expressions are not walked."""
    pending: list[ast.AST] = list(reversed(body))
    while pending:
        node = pending.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                pending.extend(reversed([n for n in inner if isinstance(n, ast.AST)]))
