"""Turn a differing copy of a module into an ``inherit(globals())`` override.

The override runs the version below it (trunk's module) into its own
namespace first, then re-binds only what the backend changed::

    from flagtree_spec import inherit

    inherit(globals())

    def changed(x):          # the backend's version
        ...

Every top-level *definition* (a ``def``, ``class``, an assignment to plain
names, each name bound by an import) of the copy is classified by comparing
its syntax tree with trunk's and, when given, with the *base* (the trunk the
copy was made from):

* identical to trunk: inherited;
* changed by the backend only, by both sides, added by the backend, or kept
  by the backend after trunk deleted it: kept (changes by both sides are
  reported for a manual merge);
* changed by trunk only, or added by trunk: inherited, so trunk's later fix
  flows in;
* deleted by the backend (in the base and trunk, not in the copy): deleted
  after ``inherit`` and reported.

Without a base nothing can tell who changed what: every differing
definition is kept and nothing is deleted.

Top-level code runs when the module is imported, so a kept definition that
other top-level code captured then (a subclass ``class B(A)``, a decorator,
a default argument, a table ``{"mul": mul}``, ``x = f()``) makes that code
kept too, transitively.  A copy whose differing module-level statements
have effects (calls, registering decorators, ``__all__ +=``, ``if``/``try``
blocks), or whose module-level statements capture a kept definition, is not
minimized: it is moved whole, with the reason.

Every result is checked before it is returned (:func:`prove`): replaying the
bindings of trunk's module and then of the override, every name of the copy
(except those trunk changed or added) must end bound to a statement whose
syntax tree equals the copy's, every name the backend deleted must be gone,
and no inherited statement may have captured a name the override re-binds.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Optional

__all__ = ["Minimized", "lost_names", "minimize", "module_names", "prove", "signatures", "writers"]

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Minimized(NamedTuple):
    """The outcome for one file: *text* is ``None`` when it must stay whole."""

    text: Optional[str]
    reason: str
    notes: tuple[str, ...]  # reported to the user: manual merges, deletions, guesses
    kept: tuple[str, ...]  # names the override binds again
    same: bool = False  # every definition equals the base's (or trunk's): drop the file


class _Stmt:
    """One top-level statement: what it binds, and which names it reads when it runs."""

    __slots__ = (
        "effect",
        "first",
        "kind",
        "last",
        "names",
        "node",
        "now",
        "reaches",
        "sigs",
        "uses",
        "whole",
    )

    def __init__(self, node: ast.stmt, kind: str, future_annotations: bool) -> None:
        self.node = node
        self.kind = kind  # "doc", "future", "import", "def" or "effect"
        self.first = min([node.lineno, *(d.lineno for d in _decorators(node))])
        self.last = node.end_lineno or node.lineno
        self.sigs: dict[str, str] = {}
        self.whole = ""  # the dump of a "def" or "effect" statement
        self.effect = ""  # why a differing "def" has effects when it runs
        self.reaches: frozenset[str] = frozenset()  # module-level objects it writes to
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    self.kind = "effect"
                    continue
                if isinstance(node, ast.Import):
                    bound = alias.asname or alias.name.partition(".")[0]
                    single: ast.stmt = ast.Import(names=[alias])
                else:
                    bound = alias.asname or alias.name
                    single = ast.ImportFrom(module=node.module, names=[alias], level=node.level)
                self.sigs[bound] = ast.dump(single)
        if self.kind in ("def", "effect"):
            self.whole = ast.dump(node)
            self.sigs.update(dict.fromkeys(_bound(node), self.whole))
        self.names = tuple(self.sigs)
        self.uses = _loads(node)
        self.now = _import_time(node, future_annotations)
        if self.kind == "def" and not isinstance(node, _DEFS):
            value = getattr(node, "value", None)
            if value is not None and any(isinstance(n, ast.Call) for n in ast.walk(value)):
                self.effect = "its value is computed by a call"
        for decorator in _decorators(node):
            if "register" in ast.unparse(decorator).lower():
                self.effect = f"decorator @{ast.unparse(decorator)} registers it"


def _decorators(node: ast.stmt) -> list[ast.expr]:
    return list(node.decorator_list) if isinstance(node, _DEFS) else []


def _bound(node: ast.stmt) -> list[str]:
    """Names a module-level statement binds in the module's namespace."""
    found: list[str] = []

    def target(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            found.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for elt in t.elts:
                target(elt)
        elif isinstance(t, ast.Starred):
            target(t.value)

    def visit(body: Iterable[ast.stmt]) -> None:
        for s in body:
            if isinstance(s, _DEFS):
                found.append(s.name)
            elif isinstance(s, ast.Assign):
                for t in s.targets:
                    target(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                if not (isinstance(s, ast.AnnAssign) and s.value is None):
                    target(s.target)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for alias in s.names:
                    if alias.name != "*":
                        found.append(alias.asname or alias.name.partition(".")[0])
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                target(s.target)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        target(item.optional_vars)
            elif isinstance(s, ast.Delete):
                for t in s.targets:
                    target(t)
            elif isinstance(s, ast.Global):
                found.extend(s.names)
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(s, _DEFS):
                    visit(getattr(s, field, ()))
            for handler in getattr(s, "handlers", ()):
                if handler.name:
                    found.append(handler.name)
                visit(handler.body)
            for case in getattr(s, "cases", ()):
                visit(case.body)
        for n in _module_scope(body):
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                found.append(n.target.id)

    visit([node])
    return list(dict.fromkeys(found))


_MUTATORS = frozenset(("append", "extend", "update", "add", "insert", "setdefault", "register"))


def _writes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The global names whose objects *fn* writes to when called.

    ``setattr(X, ...)``, ``X.a = ...``, ``X[k] = ...`` and ``X.append(...)``
    (and the other mutating methods) where ``X`` is no parameter or local.
    """
    local = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    local.update(a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None)
    found: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
        target: Optional[ast.expr] = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args:
            if n.func.id in ("setattr", "delattr"):
                target = n.args[0]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in _MUTATORS:
                target = n.func.value
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            target = n.value
        if isinstance(target, ast.Name):
            found.add(target.id)
    return frozenset(found - local)


def _module_scope(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of *body* that run in the module's own scope.

    Not the bodies of functions, lambdas and classes: a name an assignment
    expression binds there (``if (n := len(x))`` in a method) is theirs,
    never the module's.  Comprehensions are walked: an assignment expression
    inside one binds in the enclosing scope.
    """
    pending: list[ast.AST] = list(body)
    while pending:
        n = pending.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(n.decorator_list)
            pending.extend(n.args.defaults)
            pending.extend(d for d in n.args.kw_defaults if d is not None)
        elif isinstance(n, ast.ClassDef):
            pending.extend([*n.decorator_list, *n.bases, *(k.value for k in n.keywords)])
        elif isinstance(n, ast.Lambda):
            pending.extend(n.args.defaults)
        else:
            pending.extend(ast.iter_child_nodes(n))


def _loads(node: ast.AST) -> frozenset[str]:
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _import_time(node: ast.stmt, future_annotations: bool) -> frozenset[str]:
    """The names a statement reads while the module runs (an over-approximation).

    Function bodies run later; their decorators, defaults and (without
    ``from __future__ import annotations``) annotations run now.  A class
    body runs now, except the bodies of its methods.
    """
    if isinstance(node, _FUNCS):
        parts: list[ast.AST] = [*node.decorator_list, *node.args.defaults]
        parts.extend(d for d in node.args.kw_defaults if d is not None)
        if not future_annotations:
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            args.extend(a for a in (node.args.vararg, node.args.kwarg) if a is not None)
            parts.extend(a.annotation for a in args if a.annotation is not None)
            if node.returns is not None:
                parts.append(node.returns)
        found: set[str] = set()
        for part in parts:
            found.update(_loads(part))
        return frozenset(found)
    if isinstance(node, ast.ClassDef):
        found = set()
        for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            found.update(_loads(part))
        for s in node.body:
            found.update(_import_time(s, future_annotations))
        return frozenset(found)
    return _loads(node)


class _File:
    """The top-level statements of one parsed file."""

    def __init__(self, tree: ast.Module) -> None:
        future = any(
            isinstance(s, ast.ImportFrom)
            and s.module == "__future__"
            and any(a.name == "annotations" for a in s.names)
            for s in tree.body
        )
        self.stmts: list[_Stmt] = []
        for i, node in enumerate(tree.body):
            if (
                i == 0
                and isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                kind = "doc"
            elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
                kind = "future"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                kind = "import"
            elif isinstance(node, _DEFS) or (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and node.value is not None
                and all(isinstance(t, ast.Name) for t in _targets(node))
            ):
                kind = "def"
            else:
                kind = "effect"
            self.stmts.append(_Stmt(node, kind, future))
        self.last: dict[str, str] = {}  # name -> signature of its last binding
        self.binders: dict[str, list[_Stmt]] = {}
        for s in self.stmts:
            for name, sig in s.sigs.items():
                self.last[name] = sig
                self.binders.setdefault(name, []).append(s)
        # A decorator that writes to a module-level object (Triton's
        # _tensor_member_fn: setattr(tensor, fn.__name__, fn)) reaches that object
        # from every statement it decorates.
        writers = {s.node.name: _writes(s.node) for s in self.stmts if isinstance(s.node, _FUNCS)}
        for s in self.stmts:
            for decorator in _decorators(s.node):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Name):
                    s.reaches |= writers.get(target.id, frozenset())

    def effects(self) -> list[_Stmt]:
        return [s for s in self.stmts if s.kind == "effect"]


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign):
        return [node.target]
    return []


def _line(text_lines: Sequence[str], s: _Stmt) -> str:
    first = text_lines[s.first - 1].strip() if s.first <= len(text_lines) else ""
    return f"line {s.first}: {first[:60]}"


def _whole(reason: str, notes: Sequence[str] = ()) -> Minimized:
    return Minimized(None, reason, tuple(notes), ())


def writers(text: str) -> dict[str, frozenset[str]]:
    """Each top-level function of a module and the module-level names it writes to."""
    tree = ast.parse(text)
    return {n.name: _writes(n) for n in tree.body if isinstance(n, _FUNCS)}


def module_names(text: str) -> list[str]:
    """The names a module's top-level statements bind, in order (none if it does not parse)."""
    return list(signatures(text))


def signatures(text: str) -> dict[str, str]:
    """Each top-level name of a module and the syntax tree of its last binding (dumped)."""
    try:
        return _File(ast.parse(text)).last
    except (SyntaxError, ValueError):
        return {}


def lost_names(copy_names: Iterable[str], trunk_names: Iterable[str]) -> list[str]:
    """Trunk's module-level names that a whole copy (lacking them) takes away."""
    have = set(copy_names)
    return sorted(n for n in dict.fromkeys(trunk_names) if n not in have)


def _lost_note(copy: _File, trunk: _File) -> list[str]:
    lost = lost_names(copy.last, trunk.last)
    if not lost:
        return []
    shown = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    return [
        f"loses trunk's {shown}: the whole copy replaces trunk's module; add to the override "
        "by hand what it needs"
    ]


def minimize(
    copy_text: str,
    trunk_text: str,
    base_text: Optional[str],
    *,
    has_base: bool,
    imported: Iterable[str] = (),
) -> Minimized:
    """Minimize *copy_text* against *trunk_text* (both decoded sources).

    *has_base* says whether a base was given at all; *base_text* is the
    base's version of the file (``None`` when the base has no such file, in
    which case the backend and trunk each added it and every differing
    definition counts as changed by both).  *imported* names what other
    modules of the copy import from this one: trunk's deletion of such a
    name does not win (the copy's code that imports it may stay).
    """
    try:
        copy = _File(ast.parse(copy_text))
        trunk = _File(ast.parse(trunk_text))
        base = _File(ast.parse(base_text)) if base_text is not None else None
    except (SyntaxError, ValueError) as exc:
        return _whole(f"kept whole: a version does not parse ({exc})")
    lines = copy_text.splitlines()
    notes: list[str] = []
    if not has_base:
        notes.append("no base given: every differing definition is kept, nothing is deleted")
    elif base is None:
        notes.append("the base has no such file: differing definitions count as changed by both")

    def whole(reason: str) -> Minimized:
        return _whole(reason, [*notes, *_lost_note(copy, trunk)])

    reference = base if base is not None else trunk
    mine = [s.whole for s in copy.effects()]
    theirs = [s.whole for s in reference.effects()]
    if mine != theirs:
        differ = [s for s, d in zip(copy.effects(), mine) if d not in theirs]
        where = _line(lines, differ[0]) if differ else "a module-level statement is missing"
        who = "the backend changed" if base is not None else "they differ from trunk's"
        return whole(f"kept whole: module-level statements with effects differ ({who}; {where})")
    # Classify every name bound by a definition or import of the copy.
    kept: set[str] = set()
    trunk_side: set[str] = set()  # changed, added or deleted by trunk: inherited
    trunk_deleted: set[str] = set()  # deleted by trunk, the copy holds the base's
    for name, sig in copy.last.items():
        t = trunk.last.get(name)
        b = base.last.get(name) if base is not None else None
        if sig == t:
            continue
        if t is None and b == sig:
            # Trunk deleted it and the copy holds the base's: trunk's deletion wins
            # (binding it again would undo it, often with an import that now fails).
            trunk_side.add(name)
            trunk_deleted.add(name)
        elif t is None:
            kept.add(name)
            if b is not None:
                notes.append(f"{name}: trunk deleted it, the override keeps the backend's")
        elif base is None or b is None:
            kept.add(name)
            if base is not None:
                notes.append(f"{name}: added by both sides, differently: merge by hand")
        elif b == sig:
            trunk_side.add(name)
        elif b == t:
            kept.add(name)
        else:
            kept.add(name)
            notes.append(f"{name}: changed by both the backend and trunk: merge by hand")
    deleted: list[str] = []
    if base is not None:
        for name in trunk.last:
            if name not in copy.last and name in base.last:
                deleted.append(name)
                notes.append(f"{name}: deleted by the backend: the override deletes it")
            elif name not in copy.last:
                trunk_side.add(name)
    chosen = {id(s) for name in kept for s in copy.binders[name]}
    differing = set(chosen)
    # Import-time captures of kept definitions are kept too, transitively, and so
    # are statements whose decorator writes to a kept object (they must run again
    # to reach the new one).
    rebound = set(kept)
    changed = True
    while changed:
        changed = False
        # Trunk's deletion cannot win over what the kept code still uses.
        used = set(imported).union(*(s.uses for s in copy.stmts if id(s) in chosen))
        for name in sorted(trunk_deleted & used):
            trunk_deleted.discard(name)
            trunk_side.discard(name)
            kept.add(name)
            rebound.add(name)
            chosen.update(id(s) for s in copy.binders[name])
            notes.append(f"{name}: trunk deleted it, but the backend's code uses it: kept")
            changed = True
        for s in copy.stmts:
            reach = (s.now | s.reaches) & rebound
            if id(s) in chosen or s.kind in ("doc", "future") or not reach:
                continue
            if s.names and all(n in trunk_deleted for n in s.names):
                continue  # trunk deleted what it binds: nothing to run again
            captured = ", ".join(sorted(reach))
            if s.kind == "effect":
                return whole(
                    f"kept whole: a module-level statement ({_line(lines, s)}) uses {captured} "
                    "when the module runs, and would run twice"
                )
            chosen.add(id(s))
            rebound.update(s.names)
            changed = True
            for name in s.names:
                if name in trunk_side:
                    notes.append(
                        f"{name}: trunk changed it, but it captures {captured}: the override "
                        "keeps the backend's version; merge by hand"
                    )
                    trunk_side.discard(name)
    notes.extend(
        f"{name}: trunk deleted it since the base: the override leaves it deleted"
        for name in sorted(trunk_deleted)
    )
    for s in trunk.stmts:
        if not s.names or any(n in copy.last for n in s.names):
            continue
        if s.reaches & rebound:
            return whole(
                f"kept whole: trunk's {', '.join(s.names)} (not in the copy) writes to "
                f"{', '.join(sorted(s.reaches & rebound))} when the module runs, which the "
                "override would define again afterwards"
            )
        if s.now & rebound:
            notes.append(
                f"{', '.join(s.names)}: trunk's (not in the copy) captures "
                f"{', '.join(sorted(s.now & rebound))} when the module runs, so it keeps "
                "trunk's version of it"
            )
    for s in copy.stmts:
        if id(s) not in chosen:
            continue
        if s.kind == "effect":
            return whole(f"kept whole: {_line(lines, s)} binds a kept name with effects")
        if s.effect and id(s) in differing:
            return whole(f"kept whole: {_line(lines, s)} differs and {s.effect}")
        if s.kind == "import":
            continue
        at = copy.stmts.index(s)
        neighbours = copy.stmts[max(at - 1, 0) : at] + copy.stmts[at + 1 : at + 2]
        if any(s.first <= o.last and o.first <= s.last for o in neighbours):
            return whole(f"kept whole: {_line(lines, s)} shares a line with another")
    if not chosen and not deleted:
        if base is None:
            reason = "every definition equals trunk's (only layout, comments, or trunk's additions)"
        else:
            reason = "every definition equals the base's or trunk's: the backend changed nothing"
        return Minimized(None, reason, tuple(notes), (), same=True)
    try:
        text = _render(copy_text, lines, copy, trunk, chosen, rebound, trunk_side, deleted)
    except _Unsafe as exc:
        return whole(f"kept whole: {exc}")
    failure = _prove(copy, trunk, text, trunk_side, deleted)
    if failure:
        return whole(f"kept whole: the minimized version could not be proven ({failure})")
    reason = f"inherit(globals()) plus {len(kept)} changed name(s): {', '.join(sorted(kept))}"
    if not kept:
        reason = "inherit(globals())" + (f", deleting {', '.join(deleted)}" if deleted else " only")
    return Minimized(text, reason, tuple(notes), tuple(sorted(kept)))


class _Unsafe(Exception):
    """The override cannot keep the copy's order; the file stays whole (the message says why)."""


def _render(
    text: str,
    lines: Sequence[str],
    copy: _File,
    trunk: _File,
    chosen: set[int],
    rebound: set[str],
    trunk_side: set[str],
    deleted: Sequence[str],
) -> str:
    head: list[str] = []
    raw = text.encode("utf-8", "surrogateescape").splitlines()
    for i, line in enumerate(raw[:2]):
        if _COOKIE.match(line):
            head.extend(lines[: i + 1])
    for s in copy.stmts:
        if s.kind in ("doc", "future"):
            head.append("\n".join(lines[s.first - 1 : s.last]))
    # A kept binding that the copy makes before an import runs before inherit()
    # too: a submodule that inherit() imports may read it back (a circular import).
    early: list[_Stmt] = []
    bound: set[str] = set()
    last_import = max((i for i, s in enumerate(copy.stmts) if s.kind == "import"), default=0)
    for s in copy.stmts[:last_import]:
        if id(s) in chosen and s.kind == "def" and s.now <= bound | _BUILTINS:
            early.append(s)
            bound.update(s.names)
    top: list[str] = ["\n".join(head)] if head else []
    top.append("from flagtree_spec import inherit")
    top.extend(_chunk(lines, s) for s in early)
    call = "inherit(globals())"
    if "inherit" not in copy.last and "inherit" not in trunk.last:
        call += "\ndel inherit"  # the override's own import leaves no name behind
    top.append(call + (f"\ndel {', '.join(deleted)}" if deleted else ""))
    used: set[str] = set()
    for s in copy.stmts:
        if id(s) in chosen:
            used |= s.uses
    again = {id(s) for s in early if not any(n in trunk.last for n in s.names)}
    body: list[tuple[bool, str]] = []  # (is an import, text)
    emitted: set[int] = set()
    for s in copy.stmts:
        if id(s) in chosen and s.kind != "import" and id(s) not in again:
            body.append((False, _chunk(lines, s)))
            emitted.add(id(s))
        elif _star(s) and body:
            # Emitted imports and definitions come before it: it must rebind as in the copy.
            body.append((True, "\n".join(lines[s.first - 1 : s.last])))
            emitted.add(id(s))
        elif s.kind == "import":
            assert isinstance(s.node, (ast.Import, ast.ImportFrom))
            wanted = [
                a
                for a in s.node.names
                if (a.asname or a.name.partition(".")[0]) in (used - trunk_side)
                or (id(s) in chosen and (a.asname or a.name.partition(".")[0]) in rebound)
            ]
            if len(wanted) == len(s.node.names):
                body.append((True, "\n".join(lines[s.first - 1 : s.last])))
            elif wanted:
                node: ast.stmt = (
                    ast.Import(names=wanted)
                    if isinstance(s.node, ast.Import)
                    else ast.ImportFrom(module=s.node.module, names=wanted, level=s.node.level)
                )
                body.append((True, ast.unparse(node)))
            if wanted:
                emitted.add(id(s))
    stars = [i for i, s in enumerate(copy.stmts) if _star(s) and id(s) in emitted]
    if stars:
        left = [
            s
            for s in copy.stmts[stars[0] + 1 :]
            if s.names and s.kind in ("def", "import") and id(s) not in emitted
        ]
        if left:
            star = copy.stmts[stars[0]]
            raise _Unsafe(
                f"{_line(lines, star)} must run again after the override's imports, and could "
                f"then rebind {', '.join(left[0].names)} (line {left[0].first}), which trunk's "
                "version binds after it"
            )
    out = "\n\n".join(c.rstrip("\n") for c in top)
    previous_import = False
    for is_import, chunk in body:
        out += ("\n" if is_import and previous_import else "\n\n\n") + chunk.rstrip("\n")
        previous_import = is_import
    return out + "\n"


_BUILTINS = frozenset(dir(builtins))
_HELPER = ast.dump(ast.parse("from flagtree_spec import inherit").body[0])


def _star(s: _Stmt) -> bool:
    """A relative star import (``from .x import *``): it may rebind any name before it.

    Its module is one of the package's own, which the backend may have changed
    (Triton's ``from .extra.libdevice import *``).  A star import of another
    package is taken to rebind none of the names imported explicitly before it.
    """
    return (
        isinstance(s.node, ast.ImportFrom)
        and s.node.level > 0
        and any(a.name == "*" for a in s.node.names)
    )


def _chunk(lines: Sequence[str], s: _Stmt) -> str:
    """The source of *s* with the comment lines right above it."""
    start = s.first
    while start > 1 and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return "\n".join(lines[start - 1 : s.last])


def prove(
    copy_text: str,
    trunk_text: str,
    override_text: str,
    trunk_side: Iterable[str],
    deleted: Iterable[str],
) -> str:
    """Check an override statically; return what fails, or ``""``.

    Replays the bindings of trunk's module, then the override's statements
    after its ``inherit`` call: every name the copy binds, except
    *trunk_side* (changed or added by trunk), must end bound to a statement
    whose syntax tree equals the copy's last binding of it; every name in
    *deleted* must be unbound; and no statement of the copy that the
    override leaves to trunk may read, when the module runs, a name the
    override binds again.
    """
    copy = _File(ast.parse(copy_text))
    trunk = _File(ast.parse(trunk_text))
    return _prove(copy, trunk, override_text, trunk_side, deleted)


def _prove(
    copy: _File,
    trunk: _File,
    override_text: str,
    trunk_side: Iterable[str],
    deleted: Iterable[str],
) -> str:
    override = _File(ast.parse(override_text))
    early: dict[str, str] = {}  # bound before inherit(): trunk's module may bind them again
    state: dict[str, str] = {}
    helper = False  # the override's own "from flagtree_spec import inherit" is bound
    seen_inherit = False
    mine: set[str] = set()
    again: set[str] = set()
    for s in override.stmts:
        node = s.node
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value) == "inherit(globals())"
        ):
            seen_inherit = True
            state = {**early, **trunk.last}
            continue
        if not seen_inherit:
            if s.kind == "def":
                early.update(s.sigs)
                mine.add(s.whole)
            helper |= s.sigs.get("inherit") == _HELPER
            continue
        if isinstance(node, ast.Delete):
            for target in node.targets:
                state.pop(ast.unparse(target), None)
                helper &= ast.unparse(target) != "inherit"
            continue
        state.update(s.sigs)
        mine.add(s.whole or ast.dump(node))
        again.update(
            n for n, sig in s.sigs.items() if s.kind != "import" or trunk.last.get(n) != sig
        )
    if not seen_inherit:
        return "no inherit(globals()) call"
    if helper and "inherit" not in trunk.last and "inherit" not in copy.last:
        return "inherit, the override's own import, would stay bound"
    skip = set(trunk_side)
    for name, sig in copy.last.items():
        if name not in skip and state.get(name) != sig:
            return f"{name} would not be bound to the copy's definition"
    for name in deleted:
        if name in state:
            return f"{name} would stay bound"
    for s in copy.stmts:
        if s.names and not any(n in trunk.last for n in s.names):
            continue  # trunk has no such statement (it deleted what it binds): never runs
        if s.kind in ("def", "effect") and s.whole not in mine and s.now & again:
            return f"line {s.first} would capture trunk's {', '.join(sorted(s.now & again))}"
    return ""
