"""Version-stable, layout-blind digests of Python source, whole and per definition.

A digest is computed from the file's tokens (``tokenize``), not from
``ast.dump`` (whose output changes between Python versions): comments, blank
lines, line continuations, indentation width and docstrings (the first
statement of a module, class or function when it is a plain string) are left
out, so a change that only touches those drifts nothing.  An f-string counts
as its source text, which is one token on CPython 3.9-3.11 and several on
3.12 and later: the digests are equal on every supported version.

:func:`analyse` also splits a module into its top-level *definitions* (the
statements that bind a name: ``def``, ``class``, assignments, and compound
statements such as ``if``/``try`` for every name bound inside them), each
with the digest of its own tokens, and for a module that calls
``inherit(globals())`` at top level, which names the statements after the
call define, delete or capture.
"""

from __future__ import annotations

import ast
import hashlib
import io
import token
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Optional

from ..model.inherited import bound_names, evaluated_parts, is_inherit_call, names_read

__all__ = ["Analysis", "Definition", "analyse", "digest_text"]

# Stable one-letter kinds: token type numbers differ between Python versions.
_KINDS = {
    token.NAME: "n",
    token.NUMBER: "d",
    token.STRING: "s",
    token.OP: "o",
    token.NEWLINE: ";",
    token.INDENT: ">",
    token.DEDENT: "<",
}
_FSTRING_START: Optional[int] = getattr(token, "FSTRING_START", None)
_FSTRING_END: Optional[int] = getattr(token, "FSTRING_END", None)
# The value of the fixed-text tokens is dropped: whitespace and "" vs "\n" vary.
_FIXED = frozenset({";", ">", "<"})


class _Token(NamedTuple):
    kind: str
    text: str
    line: int  # the line the token belongs to (a DEDENT: the line of the token before it)
    start: tuple[int, int]


class Definition(NamedTuple):
    """One top-level statement that binds *name*."""

    name: str
    kind: str  # "def", "class", "assign" or "block" (a compound statement)
    start: int  # first line (its first decorator), 1-based
    end: int  # last line
    digest: str
    node: ast.stmt


class Analysis(NamedTuple):
    """What :func:`analyse` finds in one module."""

    digest: str  # the whole file
    definitions: dict[str, Definition]  # the last top-level binding of each name
    inherit_line: Optional[int]  # the line of the top-level inherit(...) call
    after: dict[str, Definition]  # bindings after the inherit call (the last of each name)
    deleted: tuple[tuple[str, int], ...]  # (name, line) of "del name" after the call
    captured: frozenset[str]  # names read at top level after the call before being rebound
    lines: tuple[str, ...]  # the source lines, with their line ends

    def segment(self, definition: Definition) -> str:
        """The source text of *definition*, its decorators included."""
        return "".join(self.lines[definition.start - 1 : definition.end])


def _hash(tokens: Iterable[_Token]) -> str:
    digest = hashlib.sha256(b"flagtree-spec tokens 1\n")
    for tok in tokens:
        text = "" if tok.kind in _FIXED else tok.text
        digest.update(f"{tok.kind}{len(text)}:{text}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _docstrings(tree: ast.Module) -> Iterator[ast.Expr]:
    """Every docstring statement of *tree*: module, class and function docstrings."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first
        pending.extend(child for child in ast.iter_child_nodes(node) if _has_body(child))


def _has_body(node: ast.AST) -> bool:
    return isinstance(node, (ast.stmt, ast.ExceptHandler)) or type(node).__name__ == "match_case"


Position = tuple[int, int]


def _ranges(tree: ast.Module, lines: Sequence[str]) -> list[tuple[Position, Position]]:
    """The (start, end) of every docstring, columns in characters as tokenize counts them."""

    def column(line: int, byte_col: int) -> int:
        data = lines[line - 1].encode("utf-8", "surrogatepass")
        return len(data[:byte_col].decode("utf-8", "surrogatepass"))

    found = []
    for node in _docstrings(tree):
        end_line = node.end_lineno or node.lineno
        end_col = node.end_col_offset if node.end_col_offset is not None else 0
        found.append(
            (
                (node.lineno, column(node.lineno, node.col_offset)),
                (end_line, column(end_line, end_col)),
            )
        )
    return sorted(found)


def _tokens(text: str, tree: ast.Module) -> list[_Token]:
    """The significant tokens of *text*, docstrings left out."""
    lines = text.splitlines(keepends=True)
    docstrings = _ranges(tree, lines)
    at = 0  # the next docstring range that a token may fall into
    readline = io.StringIO(text).readline
    found: list[_Token] = []
    skip_newline = False
    fstring_depth = 0
    fstring_start = (0, 0)
    last_line = 1
    for tok in tokenize.generate_tokens(readline):
        kind = tok.type
        if fstring_depth:  # pragma: no cover (CPython 3.12+; the golden test runs there)
            # Rebuild the f-string's source text from its parts, as older versions give it.
            if kind == _FSTRING_START:
                fstring_depth += 1
            elif kind == _FSTRING_END:
                fstring_depth -= 1
                if not fstring_depth:
                    found.append(
                        _Token("s", _slice(lines, fstring_start, tok.end), tok.start[0], tok.start)
                    )
                    last_line = tok.start[0]
            continue
        if kind == _FSTRING_START:  # pragma: no cover (CPython 3.12+)
            fstring_depth = 1
            fstring_start = tok.start
            continue
        if skip_newline:
            skip_newline = False
            if kind == token.NEWLINE or (kind == token.OP and tok.string == ";"):
                continue  # the end of the docstring statement
        short = _KINDS.get(kind)
        if short is None:  # comments, NL, ENCODING, ENDMARKER, ERRORTOKEN
            continue
        while at < len(docstrings) and tok.start >= docstrings[at][1]:
            at += 1
        if at < len(docstrings) and docstrings[at][0] <= tok.start:
            skip_newline = True
            continue
        line = last_line if kind == token.DEDENT else tok.start[0]
        found.append(_Token(short, tok.string, line, tok.start))
        last_line = line
    return found


def _slice(
    lines: Sequence[str], start: tuple[int, int], end: tuple[int, int]
) -> str:  # pragma: no cover (CPython 3.12+)
    """The source text from *start* to *end* (tokenize positions)."""
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]]
    parts = [lines[start[0] - 1][start[1] :]]
    parts.extend(lines[start[0] : end[0] - 1])
    parts.append(lines[end[0] - 1][: end[1]])
    return "".join(parts)


def digest_text(text: str, tree: Optional[ast.Module] = None) -> str:
    """The token digest of module source *text* (parsed again unless *tree* is given).

    Raises :class:`SyntaxError` (or :class:`ValueError`) when *text* does not parse.
    """
    if tree is None:
        tree = ast.parse(text)
    return _hash(_tokens(text, tree))


def _kind(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "def"
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return "assign"
    return "block"


def _start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def analyse(text: str) -> Analysis:
    """Split module source *text* into digested top-level definitions.

    Raises :class:`SyntaxError` (or :class:`ValueError`) when *text* does not parse.
    """
    tree = ast.parse(text)
    tokens = _tokens(text, tree)
    by_line: dict[int, list[_Token]] = {}
    for tok in tokens:
        by_line.setdefault(tok.line, []).append(tok)
    definitions: dict[str, Definition] = {}
    after: dict[str, Definition] = {}
    deleted: list[tuple[str, int]] = []
    captured: set[str] = set()
    inherit_line: Optional[int] = None
    for node in tree.body:
        if inherit_line is None and is_inherit_call(node):
            inherit_line = node.lineno
            continue
        names = bound_names(node)
        if inherit_line is not None:
            if isinstance(node, ast.Delete):
                deleted.extend((t.id, node.lineno) for t in node.targets if isinstance(t, ast.Name))
            # A name read before this module rebinds it is the lower version's object.
            captured.update(n for n in names_read(evaluated_parts(node)) if n not in after)
        if not names:
            continue
        start, end = _start(node), node.end_lineno or node.lineno
        own = [t for line in range(start, end + 1) for t in by_line.get(line, ())]
        definition_digest = _hash(own)
        for name in names:
            definition = Definition(name, _kind(node), start, end, definition_digest, node)
            definitions[name] = definition
            if inherit_line is not None:
                after[name] = definition
    return Analysis(
        _hash(tokens),
        definitions,
        inherit_line,
        after,
        tuple(deleted),
        frozenset(captured),
        tuple(text.splitlines(keepends=True)),
    )
