"""What ``rebase`` does to an override beyond a three-way merge, as text.

* :func:`whole_module`: an override that calls ``inherit(globals())`` on a
  trunk file the new trunk deleted inherits nothing any more; the locked
  version of that file plus the override is the module it was, written whole
  (no ``inherit``);
* :func:`drop_identical`: the definitions an inheriting override replaces that
  became identical to the new trunk's (by token digest), left out: they flow
  in through ``inherit`` again;
* :func:`carry_dropped`: the names an inheriting override reads while it is
  imported that the trunk dropped (``T = TypeVar("T")``): their locked
  definitions copied into the override, so that it imports as before;
* :func:`imported_modules`: the modules a source text imports, to tell which
  deleted trunk modules something still needs.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from typing import NamedTuple, Optional

from ..model.facts import extract, resolve_relative
from ..model.inherited import bound_names, evaluated_parts, is_inherit_call, names_read
from ..model.names import import_time_reads
from .digest import Analysis, analyse

__all__ = ["Dropped", "carry_dropped", "drop_identical", "imported_modules", "whole_module"]


def _start(node: ast.stmt) -> int:
    first: int = node.lineno
    for decorator in getattr(node, "decorator_list", ()):
        first = min(first, decorator.lineno)
    return first


def _segment(lines: list[str], node: ast.stmt) -> str:
    text = "".join(lines[_start(node) - 1 : node.end_lineno or node.lineno])
    return text if text.endswith("\n") else text + "\n"


def _imports_inherit(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and any(a.name == "inherit" for a in node.names)


def _without_inherit(node: ast.ImportFrom) -> str:
    """``from flagtree_spec import inherit, x`` without ``inherit`` (empty when it was
    the only name)."""
    kept = [a for a in node.names if a.name != "inherit"]
    if not kept:
        return ""
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
    return f"from {'.' * node.level}{node.module or ''} import {names}\n"


def _header_end(tree: ast.Module) -> int:
    """The last line of the module docstring and ``from __future__`` imports (0: none)."""
    end = 0
    for index, node in enumerate(tree.body):
        doc = (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            end = node.end_lineno or node.lineno
        else:
            break
    return end


def whole_module(base_text: str, override_text: str) -> str:
    """The module an inheriting override made of *base_text* (the lower version it
    inherited), written whole: the override's statements before its ``inherit()``
    call (its imports) after the base's docstring and ``from __future__`` imports;
    each of its definitions after the call in place of the base definition it
    replaces, where nothing of the base reads that name at import time after it
    (else, and for what the base does not define, after the base's statements, in
    the order they ran).  ``inherit`` itself, its import and ``del inherit`` go.

    Raises :class:`SyntaxError` when a text does not parse.
    """
    base_tree, tree = ast.parse(base_text), ast.parse(override_text)
    base_lines = base_text.splitlines(keepends=True)
    lines = override_text.splitlines(keepends=True)
    before: list[str] = []
    after: list[tuple[ast.stmt, str]] = []
    seen = False
    for node in tree.body:
        if not seen and is_inherit_call(node):
            seen = True
            continue
        if isinstance(node, ast.ImportFrom) and _imports_inherit(node):
            text = _without_inherit(node)
            if text:
                if seen:
                    after.append((node, text))
                else:
                    before.append(text)
            continue
        if isinstance(node, ast.Delete) and all(
            isinstance(t, ast.Name) and t.id == "inherit" for t in node.targets
        ):
            continue
        if seen:
            after.append((node, _segment(lines, node)))
        elif not (
            node is tree.body[0]
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            before.append(_segment(lines, node))
    # Where each base name is bound, and the names the base reads at import time
    # after each top-level statement.
    binders: dict[str, list[int]] = {}
    for index, node in enumerate(base_tree.body):
        for name in bound_names(node):
            binders.setdefault(name, []).append(index)
    read_later: list[set[str]] = [set() for _ in base_tree.body]
    later: set[str] = set()
    for index in range(len(base_tree.body) - 1, -1, -1):
        read_later[index] = set(later)
        later |= names_read(evaluated_parts(base_tree.body[index]))
    # Names the override reads before it rebinds them (a wrapper of the base's object):
    # the base's definition must stay where it is, and the replacement come after.
    captured: set[str] = set()
    rebound: set[str] = set()
    for node, _ in after:
        captured |= names_read(evaluated_parts(node)) - rebound
        rebound |= set(bound_names(node))
    replaced: dict[int, str] = {}  # base statement index -> the override's text for it
    appended: list[str] = []
    for node, text in after:
        names = bound_names(node)
        spots = {binders.get(n, [None])[-1] for n in names} if names else {None}
        spot = spots.pop() if len(spots) == 1 else None
        if (
            spot is not None
            and spot not in replaced
            and all(len(binders[n]) == 1 for n in names)
            and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and set(bound_names(base_tree.body[spot])) == set(names)
            and not (set(names) & (read_later[spot] | captured))
        ):
            replaced[spot] = text
        else:
            appended.append(text)
    out: list[str] = []
    header = _header_end(base_tree)
    out.extend(base_lines[:header])
    if before:
        out.append("\n" if header else "")
        out.extend(before)
    position = header + 1  # the next base line to copy, 1-based
    for index, node in enumerate(base_tree.body):
        if index not in replaced:
            continue
        first, last = _start(node), node.end_lineno or node.lineno
        out.extend(base_lines[position - 1 : first - 1])
        out.append(replaced[index])
        position = last + 1
    out.extend(base_lines[position - 1 :])
    if appended:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out.append("\n\n")
        out.append("\n\n".join(text.rstrip("\n") + "\n" for text in appended))
    return "".join(out).rstrip("\n") + "\n"


class Dropped(NamedTuple):
    """An inheriting override with the definitions identical to the new trunk's left out."""

    text: str
    names: tuple[str, ...]  # the definitions left out
    empty: bool  # nothing of its own is left: the override can go


def drop_identical(text: str, theirs: Analysis) -> Dropped:
    """*text* (an override that inherits) without the top-level definitions after its
    ``inherit()`` call whose tokens equal those of the counterpart's definition of the
    same name (*theirs*), unless the override reads the lower one first (a wrapper)."""
    mine = analyse(text)
    if mine.inherit_line is None:
        return Dropped(text, (), False)
    gone: list[tuple[int, int]] = []
    names: list[str] = []
    for name, definition in mine.after.items():
        other = theirs.definitions.get(name)
        if other is None or name in mine.captured or other.digest != definition.digest:
            continue
        bound = bound_names(definition.node)
        if any(
            n not in theirs.definitions or theirs.definitions[n].digest != definition.digest
            for n in bound
        ):
            continue
        if (definition.start, definition.end) not in gone:
            gone.append((definition.start, definition.end))
        names.append(name)
    if not gone:
        return Dropped(text, (), False)
    lines = list(mine.lines)
    for start, end in sorted(gone, reverse=True):
        # The blank lines after it go too, so two definitions stay two blank lines apart.
        stop = end
        while stop < len(lines) and not lines[stop].strip():
            stop += 1
        del lines[start - 1 : stop]
    left = "".join(lines)
    return Dropped(left, tuple(sorted(names)), _only_inherits(left))


def _only_inherits(text: str) -> bool:
    """Whether module *text* does nothing but ``inherit(globals())``: a docstring, the
    import of ``inherit``, the call and ``del inherit`` only."""
    tree = ast.parse(text)
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if is_inherit_call(node) or _imports_inherit(node):
            if isinstance(node, ast.ImportFrom) and len(node.names) > 1:
                return False
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Delete) and all(
            isinstance(t, ast.Name) and t.id == "inherit" for t in node.targets
        ):
            continue
        return False
    return True


def imported_modules(texts: Iterable[tuple[str, str]]) -> set[str]:
    """Every module that the source *texts* (``(text, package)`` pairs) import, anywhere
    in them, with its parent packages (relative imports resolved in *package*)."""
    found: set[str] = set()
    for text, package in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve_relative(node.level, node.module, package)
                if base is None:
                    continue
                names = [base, *(f"{base}.{a.name}" for a in node.names if a.name != "*")]
            for name in names:
                parts = name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return found


_BUILTINS = frozenset(dir(builtins))


def _import_of(node: ast.stmt, name: str) -> str:
    """The import statement *node* written for the one name *name* it binds."""
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    alias = next(a for a in node.names if (a.asname or a.name.partition(".")[0]) == name)
    written = alias.name + (f" as {alias.asname}" if alias.asname else "")
    if isinstance(node, ast.Import):
        return f"import {written}\n"
    return f"from {'.' * node.level}{node.module or ''} import {written}\n"


def carry_dropped(text: str, base_text: str, theirs_text: str) -> tuple[str, tuple[str, ...]]:
    """*text* (an override that inherits) with the top-level statements of *base_text*
    (the locked lower version) that bind what it reads while it is imported and that
    neither it nor the new lower version (*theirs_text*) binds, copied after its
    ``inherit()`` call (with what those statements read in turn); and the names so
    kept.  Nothing changes where the names cannot be told (a star import)."""
    try:
        tree, base, theirs = ast.parse(text), ast.parse(base_text), ast.parse(theirs_text)
    except (SyntaxError, ValueError):
        return text, ()
    reads = import_time_reads(tree)
    own, new = extract(tree, text), extract(theirs, theirs_text)
    if reads.unknown or (new.defines_all and not new.inherits) or own.unseen:
        return text, ()
    known = own.defined | new.defined | _BUILTINS | reads.bound
    binders: dict[str, list[ast.stmt]] = {}
    for node in base.body:
        names = (
            [(a.asname or a.name.partition(".")[0]) for a in node.names]
            if isinstance(node, (ast.Import, ast.ImportFrom))
            else bound_names(node)
        )
        for name in names:
            binders.setdefault(name, []).append(node)
    wanted = [n for n in reads.reads if n not in known and not n.startswith("__")]
    chosen: dict[int, tuple[ast.stmt, str]] = {}  # base position -> (statement, its text)
    kept: list[str] = []
    base_lines = base_text.splitlines(keepends=True)
    while wanted:
        name = wanted.pop(0)
        if name in kept or name not in binders:
            continue
        kept.append(name)
        for node in binders[name]:
            position = base.body.index(node)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                chosen[position * 1000 + len(chosen)] = (node, _import_of(node, name))
                continue
            if any(existing is node for existing, _ in chosen.values()):
                continue
            chosen[position * 1000] = (node, _segment(base_lines, node))
            more = names_read(evaluated_parts(node))
            wanted.extend(n for n in more if n not in known and n not in kept)
    if not kept:
        return text, ()
    lines = text.splitlines(keepends=True)
    call = next(node for node in tree.body if is_inherit_call(node))
    at = call.end_lineno or call.lineno
    while at < len(lines) and isinstance(_statement_at(tree, at + 1), ast.Delete):
        at = _statement_at(tree, at + 1).end_lineno or at + 1  # type: ignore[union-attr]
    block = "".join(part for _, (_, part) in sorted(chosen.items()))
    note = "# Kept from the trunk the override was made against, which the trunk dropped:\n"
    lines.insert(at, "\n" + note + block)
    return "".join(lines), tuple(sorted(kept))


def _statement_at(tree: ast.Module, line: int) -> Optional[ast.stmt]:
    return next((node for node in tree.body if node.lineno == line), None)
