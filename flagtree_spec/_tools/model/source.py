"""One source file, read, decoded per PEP 263 and parsed once.

A :class:`Source` reads a file's bytes, decodes them as the interpreter
would (the ``# -*- coding: ... -*-`` line, else UTF-8) and parses them; its
:class:`~.facts.Facts` (the ``spec_path(__path__, exclude=...)`` call, the
names a module defines and imports, its ``from X import ...`` statements),
its hook calls (:mod:`.calls`, :mod:`.dynamic`) and its ``# noqa`` comments
are extracted from the syntax tree on first use, after which the tree can be
dropped.  :func:`same_code` compares two files as ``ast.dump`` would.
Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from typing import NamedTuple, Optional

from ..._discovery import same_tree
from .calls import Dispatch, HookCall, call_name, dispatchers, hook_calls, or_defaults
from .dynamic import NO_DYNAMIC, Dynamic, dynamic_hooks
from .facts import Facts, ImportFrom, SpecPathCall, Statement, extract, resolve_relative

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


# A module that binds names on itself by name: setattr(sys.modules[__name__], n, v).
_SETS_OWN = re.compile(r"\bsetattr\(\s*sys\.modules\[\s*__name__\s*\]")


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
            self._facts = extract(self.tree, self.text) if self.tree is not None else Facts()
            if "setattr(" in self.text and _SETS_OWN.search(self.text):
                # setattr(sys.modules[__name__], name, value): names bound at run time.
                self._facts.defines_all = True
                self._facts.unseen = True
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
            self._dynamic = NO_DYNAMIC
            if self.tree is not None:
                self._dynamic = dynamic_hooks(self.tree, self.text)
        return self._dynamic

    def or_defaults(self) -> list[tuple[int, int, str]]:
        """``(line, col, hook)`` of every ``spec("hook", ...) or default``."""
        if self._or_default is None:
            self._or_default = [] if self.tree is None else or_defaults(self.tree, self.text)
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
