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
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Optional

from ..check.signatures import bind_error, call_shape, callable_signature
from ..model.calls import Signature
from .render import Unsafe, prove_files, render
from .statements import DEFS, File, line_of, lost_names

__all__ = ["Minimized", "minimize"]


class Minimized(NamedTuple):
    """The outcome for one file: *text* is ``None`` when it must stay whole."""

    text: Optional[str]
    reason: str
    notes: tuple[str, ...]  # reported to the user: manual merges, deletions, guesses
    kept: tuple[str, ...]  # names the override binds again
    same: bool = False  # every definition equals the base's (or trunk's): drop the file


def _whole(reason: str, notes: Sequence[str] = ()) -> Minimized:
    return Minimized(None, reason, tuple(notes), ())


def _lost_note(copy: File, trunk: File) -> list[str]:
    lost = lost_names(copy.last, trunk.last)
    if not lost:
        return []
    shown = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    return [
        f"loses trunk's {shown}: the whole copy replaces trunk's module; add to the override "
        "by hand what it needs"
    ]


def _locals(node: ast.AST) -> set[str]:
    """The parameters and the names a function body binds (which shadow the module's)."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.arg):
            found.add(n.arg)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
    return found


def _shape(positional: int, keywords: Sequence[str]) -> str:
    parts = [f"{positional} positional argument{'s' if positional != 1 else ''}"]
    if keywords:
        parts.append("keywords " + ", ".join(keywords))
    return " and ".join(parts)


def _both_signatures(
    copy: File, trunk: File, name: str, call: ast.Call
) -> Optional[tuple[Signature, Signature, tuple[int, tuple[str, ...]]]]:
    """Trunk's and the copy's parameters of definition *name*, and *call*'s shape.

    ``None`` where either side does not define it with known parameters, or
    the call unpacks its arguments.
    """
    theirs, mine = trunk.binders.get(name), copy.binders.get(name)
    if not theirs or not mine:
        return None
    t_node, c_node = theirs[-1].node, mine[-1].node
    if not isinstance(t_node, DEFS) or not isinstance(c_node, DEFS):
        return None
    t_sig, c_sig, shape = callable_signature(t_node), callable_signature(c_node), call_shape(call)
    if t_sig is None or c_sig is None or shape is None:
        return None
    return t_sig, c_sig, shape


def _calls_trunk_cannot_take(
    copy: File, trunk: File, chosen: set[int], trunk_side: set[str]
) -> Iterator[tuple[str, str]]:
    """``(name, note)`` per call in a kept definition to a definition left to trunk
    whose trunk version cannot take the call while the copy's can.

    The copy's ``JITFunction`` (kept) calls ``KernelParam`` with 4 arguments;
    trunk changed ``KernelParam`` to take 3: running trunk's would raise
    ``TypeError`` where the copy's code works.  Calls with ``*``/``**``
    unpacking, and definitions whose parameters are unknown (a decorated
    class), are not judged.
    """
    seen: set[str] = set()
    for s in copy.stmts:
        if id(s) not in chosen or not isinstance(s.node, DEFS):
            continue
        shadowed = _locals(s.node)
        for node in ast.walk(s.node):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            name = node.func.id
            if name not in trunk_side or name in seen or name in shadowed:
                continue
            found = _both_signatures(copy, trunk, name, node)
            if found is None:
                continue
            t_sig, c_sig, shape = found
            error = bind_error(t_sig, *shape)
            if error is None or bind_error(c_sig, *shape) is not None:
                continue
            seen.add(name)
            yield (
                name,
                (
                    f"{s.names[0]}: calls {name} with {_shape(*shape)} (line {node.lineno}), which "
                    f"trunk's {name}{t_sig.describe()} cannot take ({error}); the copy's "
                    f"{name}{c_sig.describe()} can: the override keeps the copy's {name}; merge "
                    "by hand"
                ),
            )


def _calls_the_copy_cannot_take(
    copy: File, trunk: File, rebound: set[str], trunk_side: set[str]
) -> Iterator[tuple[str, str]]:
    """``(name, note)`` per definition left to trunk that calls a kept one whose
    copy's version cannot take trunk's call.

    Trunk's ``jit()`` (inherited) calls ``JITFunction(...,
    do_not_specialize_on_alignment=...)``; the copy's ``JITFunction`` (kept)
    has no such parameter: the copy's ``jit`` is kept too.
    """
    for s in trunk.stmts:
        if not isinstance(s.node, DEFS) or not s.names or not set(s.names) <= trunk_side:
            continue
        shadowed = _locals(s.node)
        for node in ast.walk(s.node):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            name = node.func.id
            if name not in rebound or name in shadowed:
                continue
            found = _both_signatures(copy, trunk, name, node)
            if found is None:
                continue
            t_sig, c_sig, shape = found
            error = bind_error(c_sig, *shape)
            if error is None or bind_error(t_sig, *shape) is not None:
                continue
            caller = s.names[0]
            yield (
                caller,
                (
                    f"{caller}: trunk's calls {name} with {_shape(*shape)} (line {node.lineno} of "
                    f"trunk's file), which the copy's {name}{c_sig.describe()} cannot take "
                    f"({error}); trunk's {name}{t_sig.describe()} can: the override keeps the "
                    f"copy's {caller} too; merge by hand"
                ),
            )
            break


def minimize(
    copy_text: str,
    trunk_text: str,
    base_text: Optional[str],
    *,
    has_base: bool,
    imported: Iterable[str] = (),
    package: str = "",
) -> Minimized:
    """Minimize *copy_text* against *trunk_text* (both decoded sources).

    *has_base* says whether a base was given at all; *base_text* is the
    base's version of the file (``None`` when the base has no such file, in
    which case the backend and trunk each added it and every differing
    definition counts as changed by both).  *imported* names what other
    modules of the copy import from this one: trunk's deletion of such a
    name does not win (the copy's code that imports it may stay).  *package*
    is the root package's name: a star import of one of its modules, relative
    or absolute, may rebind the names imported before it.
    """
    try:
        copy = File(ast.parse(copy_text))
        trunk = File(ast.parse(trunk_text))
        base = File(ast.parse(base_text)) if base_text is not None else None
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
        where = line_of(lines, differ[0]) if differ else "a module-level statement is missing"
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
        # A kept definition calling one left to trunk that can no longer take the
        # call keeps the copy's version of that one too.
        calls = [
            *_calls_trunk_cannot_take(copy, trunk, chosen, trunk_side),
            *_calls_the_copy_cannot_take(copy, trunk, rebound, trunk_side),
        ]
        for name, note in calls:
            if name not in trunk_side or name not in copy.binders:
                continue
            trunk_side.discard(name)
            kept.add(name)
            rebound.add(name)
            chosen.update(id(s) for s in copy.binders[name])
            notes.append(note)
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
                    f"kept whole: a module-level statement ({line_of(lines, s)}) uses {captured} "
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
            return whole(f"kept whole: {line_of(lines, s)} binds a kept name with effects")
        if s.effect and id(s) in differing:
            return whole(f"kept whole: {line_of(lines, s)} differs and {s.effect}")
        if s.kind == "import":
            continue
        at = copy.stmts.index(s)
        neighbours = copy.stmts[max(at - 1, 0) : at] + copy.stmts[at + 1 : at + 2]
        if any(s.first <= o.last and o.first <= s.last for o in neighbours):
            return whole(f"kept whole: {line_of(lines, s)} shares a line with another")
    if not chosen and not deleted:
        if base is None:
            reason = "every definition equals trunk's (only layout, comments, or trunk's additions)"
        else:
            reason = "every definition equals the base's or trunk's: the backend changed nothing"
        return Minimized(None, reason, tuple(notes), (), same=True)
    try:
        text = render(copy_text, lines, copy, trunk, chosen, rebound, trunk_side, deleted, package)
    except Unsafe as exc:
        return whole(f"kept whole: {exc}")
    failure = prove_files(copy, trunk, text, trunk_side, deleted)
    if failure:
        return whole(f"kept whole: the minimized version could not be proven ({failure})")
    reason = f"inherit(globals()) plus {len(kept)} changed name(s): {', '.join(sorted(kept))}"
    if not kept:
        reason = "inherit(globals())" + (f", deleting {', '.join(deleted)}" if deleted else " only")
    return Minimized(text, reason, tuple(notes), tuple(sorted(kept)))
