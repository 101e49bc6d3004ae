"""The facts of one source file, read, decoded per PEP 263 and parsed once.

A :class:`Source` reads a file's bytes, decodes them as the interpreter
would (the ``# -*- coding: ... -*-`` line, else UTF-8), parses them and
extracts in one pass over the syntax tree the :class:`Facts` the model and
the checks need: the ``spec_path(__path__, exclude=...)`` call, the names a
module defines and imports, its ``from X import ...`` statements, its hook
calls and its ``# noqa`` comments.  Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple, Optional

from ..._discovery import same_tree
from .calls import Dispatch, HookCall, dispatchers, hook_calls, parser_lines

__all__ = [
    "Dynamic",
    "Facts",
    "ImportFrom",
    "Problem",
    "Source",
    "SpecPathCall",
    "Statement",
    "call_name",
    "resolve_relative",
    "same_code",
]


class Problem(NamedTuple):
    """A file or folder that cannot be used as it is."""

    path: str
    line: int
    col: int
    message: str


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
        "imported",
        "imports",
        "incidental",
        "inherit_line",
        "inherits",
        "order",
        "plain_imports",
        "spec_path",
    )

    def __init__(self) -> None:
        self.spec_path: Optional[SpecPathCall] = None
        self.inherits = False
        self.inherit_line = 0  # the first module-level inherit(...) call
        self.defines_all = False
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


def _main_guard(test: ast.expr) -> bool:
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


def call_name(node: ast.expr) -> str:
    """The last name of *node*: ``x`` for ``x`` and ``a.b.x``, empty for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _string_list(node: ast.expr) -> Optional[tuple[str, ...]]:
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
    name = call_name(value.func)
    if name == "spec_path" and value.args and call_name(value.args[0]) == "__path__":
        exclude: tuple[str, ...] = ()
        if len(value.args) > 1:  # FlagTree's spec_path(path, exclude), through its spec file
            exclude = _string_list(value.args[1]) or ()
        for keyword in value.keywords:
            if keyword.arg == "exclude":
                exclude = _string_list(keyword.value) or ()
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


def _last_marked_line(text: str) -> int:
    """The last line of *text* on which ``import`` or ``global`` is written (0: none)."""
    text = parser_lines(text)
    at = max(text.rfind("import"), text.rfind("global"))
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _extract(tree: ast.Module, text: str) -> Facts:
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
                        facts.all_names = _string_list(value)
                else:
                    _bind_target(facts, target)
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
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                # A literal __all__ extended by a literal list stays literal.
                more = _string_list(node.value)
                known = facts.all_names
                facts.all_names = None if known is None or more is None else known + more
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:  # "x: int" binds nothing
                _bind_target(facts, node.target)
                if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                    facts.all_names = _string_list(node.value)
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
            if _main_guard(node.test):
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


class Dynamic(NamedTuple):
    """Hooks a module fetches by name in a loop (``for n in LIST: spec_func(n)``, or
    ``getattr(hooks, n)``/``hasattr(hooks, n)``), and its module-level literal lists."""

    lists: Mapping[str, tuple[str, ...]]  # module-level NAME = [literal strings]
    # (list or attribute name, prefix, suffix) of each such loop: the hook fetched
    # is prefix + item + suffix (getattr(spec, "ext_" + n))
    looped: frozenset[tuple[str, str, str]]
    names: frozenset[str]  # hook names such loops run over a literal list of


_FETCH = frozenset({"spec", "spec_call", "spec_func", "getattr", "hasattr"})
# A module that binds names on itself by name: setattr(sys.modules[__name__], n, v).
_SETS_OWN = re.compile(r"\bsetattr\(\s*sys\.modules\[\s*__name__\s*\]")
# A module that may hold "spec(...) or default".
_SPEC_OR = re.compile(r"\bspec\s*\(")
# A call that fetches a hook by a name that is no literal: spec(n), getattr(x, n).
_FETCH_BY_NAME = re.compile(r"spec(?:_func)?\(\s*[A-Za-z_(]")


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


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
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


def _dynamic(tree: ast.Module, loops: bool) -> Dynamic:
    lists: dict[str, tuple[str, ...]] = {}
    for top in tree.body:
        if isinstance(top, ast.Assign):
            targets, value = top.targets, top.value
        elif isinstance(top, ast.AnnAssign) and top.value is not None:
            targets, value = [top.target], top.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found = _string_list(value)
                if found is not None:
                    lists[target.id] = found
    looped: set[tuple[str, str, str]] = set()
    names: set[str] = set()
    aliases: dict[str, str] = {}  # local = something.NAME (or NAME), anywhere
    for node in _statements(tree.body) if loops else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, (ast.Name, ast.Attribute)):
                aliases[target.id] = call_name(value)
        if not isinstance(node, (ast.For, ast.AsyncFor)) or not isinstance(node.target, ast.Name):
            continue
        var = node.target.id
        shapes = {
            shape
            for stmt in node.body
            for inner in ast.walk(stmt)
            if isinstance(inner, ast.Call) and call_name(inner.func) in _FETCH
            for arg in inner.args[:2]
            for shape in [_fetched_name(arg, var)]
            if shape is not None
        }
        literal = _string_list(node.iter)
        for prefix, suffix in shapes:
            if literal is not None:
                names.update(prefix + item + suffix for item in literal)
            elif isinstance(node.iter, (ast.Name, ast.Attribute)):
                name = call_name(node.iter)
                looped.add((name, prefix, suffix))
                if name in aliases:
                    looped.add((aliases[name], prefix, suffix))
    if not (lists or looped or names):
        return _NO_DYNAMIC
    return Dynamic(lists, frozenset(looped), frozenset(names))


# What most modules have: no literal list, no loop fetching hooks (shared, read only).
_NO_DYNAMIC = Dynamic(types.MappingProxyType({}), frozenset(), frozenset())


def _fetched_name(node: ast.expr, var: str) -> Optional[tuple[str, str]]:
    """``(prefix, suffix)`` when *node* is loop variable *var*, maybe with literal
    strings added before or after it (``"ext_" + var``, ``f"ext_{var}"``)."""
    if isinstance(node, ast.Name) and node.id == var:
        return "", ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = node.left, node.right
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            inner = _fetched_name(right, var)
            return None if inner is None else (left.value + inner[0], inner[1])
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            inner = _fetched_name(left, var)
            return None if inner is None else (inner[0], inner[1] + right.value)
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        at = [
            i
            for i, p in enumerate(parts)
            if isinstance(p, ast.FormattedValue) and _fetched_name(p.value, var) == ("", "")
        ]
        others = [p for i, p in enumerate(parts) if i not in at]
        if len(at) == 1 and all(
            isinstance(p, ast.Constant) and isinstance(p.value, str) for p in others
        ):
            text = [p.value if isinstance(p, ast.Constant) else "\0" for p in parts]
            prefix, _, suffix = "".join(str(t) for t in text).partition("\0")
            return prefix, suffix
    return None


def _statement_lines(node: ast.stmt) -> tuple[int, int]:
    """The first and last line of statement *node*, decorators included."""
    first = node.lineno
    for decorator in getattr(node, "decorator_list", ()):
        first = min(first, decorator.lineno)
    return first, node.end_lineno or node.lineno


def same_code(a: Source, b: Source) -> bool:
    """Whether two parsed files have equal syntax trees, positions aside (what
    ``ast.dump`` compares), as :func:`flagtree_spec._discovery.same_tree` says.

    A statement written identically in both (the same lines of text, starting
    and ending at the same columns) parses to the same tree, so only the
    statements whose text differs are walked: into a ``class`` or ``def``
    whose text differs, statement by statement again.
    """
    if a.tree is None or b.tree is None:
        return False
    if not same_tree(a.tree.type_ignores, b.tree.type_ignores):
        return False
    if "\r" in a.text or "\r" in b.text:
        # A lone carriage return also ends a line: compare the trees alone.
        return same_tree(a.tree.body, b.tree.body)
    return _same_statements(a.tree.body, b.tree.body, a.text.split("\n"), b.text.split("\n"))


def _same_statements(
    x: Sequence[ast.stmt], y: Sequence[ast.stmt], lines_x: list[str], lines_y: list[str]
) -> bool:
    if len(x) != len(y):
        return False
    for s, t in zip(x, y):
        if type(s) is not type(t):
            return False
        (s_first, s_last), (t_first, t_last) = _statement_lines(s), _statement_lines(t)
        if (
            s_last - s_first == t_last - t_first
            and s.col_offset == t.col_offset
            and s.end_col_offset == t.end_col_offset
            and lines_x[s_first - 1 : s_last] == lines_y[t_first - 1 : t_last]
        ):
            continue  # the same text: the same tree
        if not isinstance(s, _DEFINITIONS):
            if not same_tree(s, t):
                return False
            continue
        for field in s._fields:
            if field == "body":
                if not _same_statements(s.body, t.body, lines_x, lines_y):  # type: ignore[attr-defined]
                    return False
            elif not same_tree(getattr(s, field, None), getattr(t, field, None)):
                return False
    return True


# Statements whose bodies are compared statement by statement.
_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


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


def _encoding(data: bytes) -> str:
    """The source encoding of *data* (PEP 263), as :func:`tokenize.detect_encoding`
    finds it; read without it when the first two lines are ASCII and declare none."""
    head = data[: data.find(b"\n", data.find(b"\n") + 1) + 1 or len(data)]
    if b"coding" not in head and head.isascii():
        return "utf-8"
    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def _parse_problem(path: str, exc: Exception) -> Problem:
    """The problem of file *path*, which does not parse (*exc*)."""
    syntax = exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc))
    return Problem(path, syntax.lineno or 1, syntax.offset or 1, f"does not parse: {syntax.msg}")


class Source:
    """One Python file, read, decoded per PEP 263 and parsed once."""

    __slots__ = (
        "_dispatch",
        "_dynamic",
        "_facts",
        "_hooks",
        "_or_default",
        "data",
        "error",
        "path",
        "text",
        "tree",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self.data = b""
        self.text = ""
        self.tree: Optional[ast.Module] = None
        self.error: Optional[Problem] = None
        self._facts: Optional[Facts] = None
        self._hooks: Optional[list[HookCall]] = None
        self._dynamic: Optional[Dynamic] = None
        self._or_default: Optional[list[tuple[int, int, str]]] = None
        self._dispatch: Optional[dict[str, Dispatch]] = None
        try:
            with open(path, "rb") as f:
                self.data = f.read()
        except OSError as exc:
            self.error = Problem(
                path, 1, 1, f"cannot be read ({exc.strerror or exc}); fix its permissions"
            )
            return
        try:
            encoding = _encoding(self.data)
        except SyntaxError as exc:
            self.error = Problem(
                path,
                exc.lineno or 1,
                1,
                f"bad source encoding: {exc.msg}; fix the coding declaration",
            )
            return
        try:
            self.text = self.data.decode(encoding)
        except UnicodeDecodeError as exc:
            line = self.data.count(b"\n", 0, exc.start) + 1
            col = exc.start - (self.data.rfind(b"\n", 0, exc.start) + 1) + 1
            self.error = Problem(
                path,
                line,
                col,
                f"its bytes do not decode as {encoding} (its PEP 263 encoding): {exc.reason}; "
                "fix the bytes or the '# -*- coding: ... -*-' line",
            )
            return
        try:
            self.tree = ast.parse(self.text, filename=path)
        except (SyntaxError, ValueError) as exc:  # ValueError: a null byte, on older Pythons
            # Not bound to a second name: the error's traceback holds this frame, and
            # a name for it here would make a reference cycle.
            self.error = _parse_problem(path, exc)

    def facts(self) -> Facts:
        """The facts of this file, extracted on first use."""
        if self._facts is None:
            self._facts = _extract(self.tree, self.text) if self.tree is not None else Facts()
            if "setattr(" in self.text and _SETS_OWN.search(self.text):
                # setattr(sys.modules[__name__], name, value): names bound at run time.
                self._facts.defines_all = True
        return self._facts

    def hook_calls(self) -> list[HookCall]:
        """Every ``spec("hook", ...)`` / ``spec_func("hook")`` call, and calls of this
        module's other names for them (see :func:`.calls.dispatchers`)."""
        if self._hooks is None:
            self._hooks = []
            self._dispatch = {}
            if self.tree is not None and "spec" in self.text:
                self._dispatch = dispatchers(self.tree)
                self._hooks = hook_calls(self.tree, self.text, sorted(self._dispatch))
        return self._hooks

    def dispatchers(self) -> dict[str, Dispatch]:
        """The module-level names that may dispatch hooks, and why."""
        self.hook_calls()
        assert self._dispatch is not None
        return self._dispatch

    def dynamic_hooks(self) -> Dynamic:
        """Hooks fetched by name in a loop, and this module's literal lists of names."""
        if self._dynamic is None:
            self._dynamic = _NO_DYNAMIC
            if self.tree is not None:
                text = self.text
                loops = "for " in text and (
                    "getattr(" in text or "hasattr(" in text or bool(_FETCH_BY_NAME.search(text))
                )
                self._dynamic = _dynamic(self.tree, loops)
        return self._dynamic

    def or_defaults(self) -> list[tuple[int, int, str]]:
        """``(line, col, hook)`` of every ``spec("hook", ...) or default``."""
        if self._or_default is None:
            self._or_default = []
            if self.tree is not None and ") or" in self.text and _SPEC_OR.search(self.text):
                # As a condition (assert, if, while, not), "or" is the logic meant.
                conditions = {
                    id(test) for node in ast.walk(self.tree) for test in _conditions(node)
                }
                for node in ast.walk(self.tree):
                    if not isinstance(node, ast.BoolOp) or not isinstance(node.op, ast.Or):
                        continue
                    default = node.values[-1]
                    if id(node) in conditions or (
                        isinstance(default, ast.Constant) and not default.value
                    ):
                        continue  # a condition, or a default as falsy as any result
                    first = node.values[0]
                    if (
                        isinstance(first, ast.Call)
                        and call_name(first.func) == "spec"
                        and first.args
                        and isinstance(first.args[0], ast.Constant)
                        and isinstance(first.args[0].value, str)
                    ):
                        hook = first.args[0].value
                        self._or_default.append((node.lineno, node.col_offset + 1, hook))
        return self._or_default

    def release(self) -> None:
        """Drop the syntax tree once its facts and hook calls are extracted."""
        self.facts()
        self.hook_calls()
        self.dynamic_hooks()
        self.or_defaults()
        self.tree = None

    def imports(self, package: str) -> Iterator[ImportFrom]:
        """Every ``from X import ...`` of this file, X made absolute."""
        for level, module, names, line, col, guarded in self.facts().imports:
            target = resolve_relative(level, module, package)
            if target is not None:
                yield ImportFrom(target, names, line, col, guarded)

    def noqa(self, line: int) -> Optional[frozenset[str]]:
        """Codes suppressed by a ``# noqa`` comment on *line* (empty set: all)."""
        lines = self.text.splitlines()
        if not 0 < line <= len(lines):
            return None
        text = lines[line - 1]
        at = text.find("# noqa")
        if at < 0:
            at = text.find("#noqa")
            if at < 0:
                return None
        rest = text[at:].partition("noqa")[2]
        if not rest.lstrip().startswith(":"):
            return frozenset()
        codes = rest.lstrip()[1:].replace(",", " ").split()
        return frozenset(c for c in codes if c[:3] == "FTS")
