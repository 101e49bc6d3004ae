"""Writing an override and proving it statically.

:func:`render` writes the ``inherit(globals())`` override of a copy from the
statements :func:`.minimize.minimize` chose, in the copy's order relative to
its imports; :func:`prove` replays the bindings of trunk's module and then
of the override and says what would not end as the copy's.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Sequence

from .statements import File, Stmt, line_of

__all__ = ["Unsafe", "chunk", "is_star", "prove", "prove_files", "render"]

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


class Unsafe(Exception):
    """The override cannot keep the copy's order; the file stays whole (the message says why)."""


def render(
    text: str,
    lines: Sequence[str],
    copy: File,
    trunk: File,
    chosen: set[int],
    rebound: set[str],
    trunk_side: set[str],
    deleted: Sequence[str],
    package: str = "",
) -> str:
    """The override's text: the copy's head, ``inherit(globals())``, the chosen statements.

    *package* is the root package's name (its absolute star imports rebind
    like relative ones).  Raises :class:`Unsafe` where the copy's order
    cannot be kept.
    """
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
    early: list[Stmt] = []
    bound: set[str] = set()
    last_import = max((i for i, s in enumerate(copy.stmts) if s.kind == "import"), default=0)
    for s in copy.stmts[:last_import]:
        if id(s) in chosen and s.kind == "def" and s.now <= bound | _BUILTINS:
            early.append(s)
            bound.update(s.names)
    top: list[str] = ["\n".join(head)] if head else []
    top.append("from flagtree_spec import inherit")
    top.extend(chunk(lines, s) for s in early)
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
            body.append((False, chunk(lines, s)))
            emitted.add(id(s))
        elif is_star(s, package) and body:
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
    stars = [i for i, s in enumerate(copy.stmts) if is_star(s, package) and id(s) in emitted]
    if stars:
        left = [
            s
            for s in copy.stmts[stars[0] + 1 :]
            if s.names and s.kind in ("def", "import") and id(s) not in emitted
        ]
        if left:
            star = copy.stmts[stars[0]]
            raise Unsafe(
                f"{line_of(lines, star)} must run again after the override's imports, and could "
                f"then rebind {', '.join(left[0].names)} (line {left[0].first}), which trunk's "
                "version binds after it"
            )
    out = "\n\n".join(c.rstrip("\n") for c in top)
    previous_import = False
    for is_import, piece in body:
        out += ("\n" if is_import and previous_import else "\n\n\n") + piece.rstrip("\n")
        previous_import = is_import
    return out + "\n"


_BUILTINS = frozenset(dir(builtins))
_HELPER = ast.dump(ast.parse("from flagtree_spec import inherit").body[0])


def is_star(s: Stmt, package: str = "") -> bool:
    """A star import of the package's own (``from .x import *``, ``from R.x import *``).

    It may rebind any name before it: its module is one of the package's own,
    which the backend may have changed (Triton's ``from .extra.libdevice
    import *``).  A star import of another package is taken to rebind none
    of the names imported explicitly before it.
    """
    if not isinstance(s.node, ast.ImportFrom) or not any(a.name == "*" for a in s.node.names):
        return False
    if s.node.level > 0:
        return True
    return bool(package) and (s.node.module or "").split(".")[0] == package


def chunk(lines: Sequence[str], s: Stmt) -> str:
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
    copy = File(ast.parse(copy_text))
    trunk = File(ast.parse(trunk_text))
    return prove_files(copy, trunk, override_text, trunk_side, deleted)


def prove_files(
    copy: File,
    trunk: File,
    override_text: str,
    trunk_side: Iterable[str],
    deleted: Iterable[str],
) -> str:
    override = File(ast.parse(override_text))
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
