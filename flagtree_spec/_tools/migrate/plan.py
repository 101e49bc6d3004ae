"""Plan and apply the migration of a legacy whole-tree copy into a spec tree.

A backend that forked the trunk keeps a copy of its whole Python tree (the
*fork*, ``third_party/B/python/R``).  :func:`make_plan` gives every entry of
the copy one action against its *counterpart*, the next lower version of the
same path (the base backend's override when the spec root's declaration
names a ``base`` that has one, else the trunk's file):

``drop``      byte- or AST-identical to its counterpart: removed;
``move``      differs: moved into the mirror tree (the *into* folder);
``minimize``  differs, and becomes ``inherit(globals())`` plus what the
              backend changed (see :mod:`.minimize`);
``add``       no counterpart: an added module or file, moved;
``link``      a symlink, never followed: links hold no data, removed;
``keep``      cannot be migrated (the root package's ``__init__``, compiled
              files): moved under ``migrate-leftovers/``, outside every spec
              root, with what to do about it.

:func:`.apply.apply` carries the plan out: ``git mv`` inside a git work tree, so
history follows; a file that differs from its counterpart is never
deleted; afterwards nothing under the fork can load.  Every step leaves each
file readable at one of its locations, so an interrupted run is completed
by running again.  Nothing of the trunk or the backend is imported.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections.abc import Sequence
from typing import Optional

from ..model.model import InputError
from ..model.source import Source
from .base import BaseTree, not_newer, not_older
from .files import COMPILED, count_lines, decode, parse, read, same_tree, under, walk
from .minimize import minimize
from .statements import lost_names, module_names
from .steps import ACTIONS, Given, Plan, Step
from .whole import (
    imported_names,
    keep_broken_copies,
    trunk_imports,
    whole_for_foreign_writes,
    whole_for_lost_names,
    whole_for_missing_modules,
)

__all__ = ["ACTIONS", "BaseTree", "Plan", "Step", "check_folders", "make_plan"]


def check_folders(
    fork: str, trunk: str, into: str, base: Optional[str] = None
) -> tuple[str, str, str]:
    """Validate the three folders (and a base folder); return them absolute."""
    fork, trunk, into = (os.path.abspath(p) for p in (fork, trunk, into))
    if not os.path.isdir(fork) and not os.path.isdir(into):
        raise InputError(f"--fork {fork} is not a directory; give the copy's package folder")
    if not os.path.isfile(os.path.join(trunk, "__init__.py")):
        raise InputError(f"--trunk {trunk} has no __init__.py; give the root package's folder")
    real = {k: os.path.realpath(v) for k, v in (("fork", fork), ("trunk", trunk), ("into", into))}
    if real["fork"] == real["trunk"]:
        raise InputError(f"--fork and --trunk are the same folder ({fork}); give the copy")
    for a, b in (("fork", "trunk"), ("trunk", "fork"), ("into", "fork"), ("fork", "into")):
        if under(real[a], real[b]):
            raise InputError(f"--{a} {real[a]} lies inside --{b} {real[b]}; give separate folders")
    if under(real["into"], real["trunk"]):
        raise InputError(
            f"--into {into} lies inside the trunk {trunk}; give the spec root's mirror"
        )
    name = os.path.basename(trunk)
    if os.path.basename(fork) != name:
        raise InputError(
            f"--fork {fork} is a copy of package {os.path.basename(fork)!r}, not of {name!r}; "
            f"give the copy of {name}"
        )
    if base is not None:
        base = os.path.abspath(base)
        if not os.path.isfile(os.path.join(base, "__init__.py")) or os.path.basename(base) != name:
            raise InputError(
                f"--base {base} is not an older trunk of {name!r} (a folder named {name} with "
                "__init__.py); give the trunk the copy was made from"
            )
        if os.path.realpath(base) in real.values():
            raise InputError(f"--base {base} is the fork, trunk or into folder; give the old trunk")
        if not any(
            os.path.isfile(os.path.join(trunk, *rel.split("/")))
            for rel, _ in walk(base)
            if rel != "__init__.py"
        ):
            raise InputError(
                f"--base {base} shares no module with the trunk {trunk} but its __init__.py, "
                "so it is not an older trunk of it; give the trunk the copy was made from"
            )
        why = not_older(base, trunk, fork) or not_newer(base, trunk)
        if why:
            raise InputError(
                f"--base {base} is not an older trunk of {name!r}: {why}; give the trunk the "
                "copy was made from"
            )
    return fork, trunk, into


def _leftovers(fork: str, into: str, trunk: str) -> str:
    """``<backend>/migrate-leftovers``: beside the copy's spec root, outside every spec root.

    The copy's spec root is the folder holding it (``third_party/B/python``),
    the new one the folder holding *into*; the leftovers go into the folder
    above the copy's (``third_party/B``).
    """
    leftovers = os.path.join(os.path.dirname(os.path.dirname(fork)), "migrate-leftovers")
    for root in (os.path.dirname(into), trunk):
        if under(os.path.realpath(leftovers), os.path.realpath(root)):
            raise InputError(
                f"the leftovers folder {leftovers} would lie inside {root}; give a --fork "
                "whose parent folder is outside the new spec root and the trunk"
            )
    return leftovers


def _root_init(copy: str, trunk: str) -> str:
    """What in a copied root ``__init__`` differs from trunk's, in a few words."""
    try:
        mine, theirs = ast.parse(copy), ast.parse(trunk)
    except (SyntaxError, ValueError):
        return "it does not parse"
    known = {ast.dump(s) for s in theirs.body}
    found = []
    for s in mine.body:
        if ast.dump(s) not in known:
            head = ast.get_source_segment(copy, s) or ""
            found.append(f"line {s.lineno}: {head.splitlines()[0][:50] if head else '...'}")
    if not found:
        return "it lacks some of trunk's statements"
    return "; ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")


def make_plan(
    fork: str,
    trunk: str,
    into: str,
    *,
    lower: Sequence[str] = (),
    minimize_files: bool = False,
    base: Optional[BaseTree] = None,
) -> Plan:
    """Classify every entry of *fork* against its counterpart.

    *lower* lists the mirror folders of the backends the spec root's
    declaration names as ``base`` (highest first); the trunk comes last.
    Raises :class:`InputError` for an unusable input, before anything changes.
    """
    if base is not None and base.folder is not None:
        check_folders(fork, trunk, into, base.folder)
    fork, trunk, into = check_folders(fork, trunk, into)
    leftovers = _leftovers(fork, into, trunk)
    steps: list[Step] = []
    warnings: list[str] = []
    seen: set[str] = set()
    common = 0
    inputs: dict[str, Given] = {}
    # A fork that is gone while the mirror exists: an earlier run moved everything.
    for rel, entry in walk(fork) if os.path.isdir(fork) else iter(()):
        seen.add(rel)
        parts = rel.split("/")
        counterpart = next(
            (
                os.path.join(d, *parts)
                for d in (*lower, trunk)
                if os.path.isfile(os.path.join(d, *parts))
            ),
            None,
        )
        common += counterpart is not None
        via = "trunk" if counterpart is None or under(counterpart, trunk) else counterpart
        if entry.is_symlink():
            target = os.readlink(entry.path)
            where = "into trunk" if under(os.path.realpath(entry.path), trunk) else "elsewhere"
            steps.append(
                Step(rel, counterpart, "link", f"symlink to {target} ({where}): removed", 0, 0)
            )
            continue
        if entry.name == "__pycache__":
            steps.append(Step(rel, None, "drop", "bytecode cache: removed", 0, 0))
            continue
        data = read(entry.path)
        n = count_lines(data)
        is_py = rel.endswith(".py")
        text = decode(entry.path, data) if is_py else ""
        if counterpart is not None and read(counterpart) == data:
            steps.append(Step(rel, counterpart, "drop", f"byte-identical to {via}", n, 0))
            continue
        other = decode(counterpart, read(counterpart)) if is_py and counterpart else ""
        tree = parse(text) if is_py and counterpart else None
        theirs = parse(other) if tree is not None else None
        if tree is not None and theirs is not None and same_tree(tree, theirs):
            steps.append(Step(rel, counterpart, "drop", f"AST-identical to {via}", n, 0))
            continue
        if rel == "__init__.py":
            what = _root_init(text, other) if counterpart else "trunk has none"
            steps.append(
                Step(
                    rel,
                    counterpart,
                    "keep",
                    "the root package's __init__ can never be an override; it differs from "
                    f"trunk's ({what}): put that code into the backend's hook module "
                    "(<spec root>/__init__.py, called through spec()) or into a module of "
                    "the mirror tree, then delete the leftover",
                    n,
                    n,
                )
            )
            continue
        if rel.endswith(COMPILED):
            steps.append(
                Step(
                    rel,
                    counterpart,
                    "keep",
                    "a compiled file never belongs in a mirror tree: build it from source in "
                    "the backend's build, then delete the leftover",
                    n,
                    n,
                )
            )
            continue
        if counterpart is None:
            _refuse_namespace_init(rel, trunk, text, into)
            steps.append(Step(rel, None, "add", "no counterpart: added by the backend", n, n))
            continue
        if tree is not None and minimize_files:
            base_text = base.text(rel) if base is not None and via == "trunk" else None
            inputs[rel] = (text, other, base_text, via, data, n, counterpart)
            steps.append(
                _minimized(rel, inputs[rel], base is not None, (), os.path.basename(trunk))
            )
        else:
            lost = lost_names(module_names(text), module_names(other)) if tree else []
            notes = (
                (
                    f"loses trunk's {', '.join(lost[:8])}{' and more' if len(lost) > 8 else ''}: "
                    "the whole copy replaces trunk's module; add to the override by hand what "
                    "it needs, or run with --minimize",
                )
                if lost
                else ()
            )
            steps.append(Step(rel, counterpart, "move", f"differs from {via}", n, n, None, notes))
    if seen and not common:
        raise InputError(
            f"--fork {fork} shares no file with the trunk {trunk}: it is not a copy of it"
        )
    # Trunk's deletion of a name does not win where another module the plan keeps
    # as the copy's imports it: minimize again with what the kept modules import,
    # and again after a module is kept whole (its whole text then counts), until
    # nothing changes.  Code equal to the base's is trunk's, not the backend's:
    # the root __init__ kept in migrate-leftovers imports nothing then.
    root = os.path.basename(trunk)
    skip = _base_identical(fork, steps, base) if base is not None else set()
    asked: dict[str, set[str]] = {}
    forced: set[str] = set()  # kept whole by a pass below: never minimized again
    imports = trunk_imports(trunk)
    texts = {rel: given[0] for rel, given in inputs.items()}
    for step in steps:
        path = os.path.join(fork, *step.path.split("/"))
        if step.action == "move" and step.path.endswith(".py") and step.path not in texts:
            texts[step.path] = decode(path, read(path))
    for _ in range(len(inputs) + 4):
        imported = imported_names(fork, steps, skip)
        again = {
            r for r in inputs if r not in forced and imported.get(r, set()) != asked.get(r, set())
        }
        for k, step in enumerate(steps):
            if step.path in again:
                asked[step.path] = imported.get(step.path, set())
                names = sorted(asked[step.path])
                steps[k] = _minimized(step.path, inputs[step.path], base is not None, names, root)
        before = [s.action for s in steps]
        keep_broken_copies(steps, trunk, fork, imports, texts)
        whole_for_missing_modules(steps, inputs, trunk, fork, imports)
        whole_for_foreign_writes(steps, inputs, trunk)
        whole_for_lost_names(steps, inputs, root)
        moved = {s.path for s, a in zip(steps, before) if s.action != a}
        forced |= moved
        if not again and not moved:
            break
    warnings.extend(
        f"{s.path}: a package __init__ override replaces trunk's, whose imports and "
        "spec_path call then do not run; prefer inherit(globals()) in it (check FTS002)"
        for s in steps
        if s.action == "move" and s.path.endswith("/__init__.py")
    )
    links = tuple(s.path + "/" for s in steps if s.action == "link")
    missing = [
        rel
        for rel, e in walk(trunk)
        if rel not in seen and e.name != "__pycache__" and not rel.startswith(links)
    ]
    plan = Plan(fork, trunk, into, leftovers, steps, missing, warnings, [], minimize_files)
    _conflicts(plan)
    plan.spec_path.extend(_spec_path_needs(plan))
    return plan


def _refuse_namespace_init(rel: str, trunk: str, text: str, into: str) -> None:
    """An added ``__init__.py`` over a namespace package of trunk: refused (exit 2).

    The message says where its code goes instead: nowhere when it holds no
    statement, else a module beside it in the mirror (a portion of the
    namespace package) or the backend's hook module.
    """
    if not rel.endswith("__init__.py") or rel == "__init__.py":
        return
    folder = os.path.join(trunk, *rel.split("/")[:-1])
    if not os.path.isdir(folder):
        return
    held = sorted(e for e in os.listdir(folder) if e != "__pycache__")
    shown = ", ".join(held[:3]) + (" ..." if len(held) > 3 else "")
    package = rel[: -len("/__init__.py")]
    tree = parse(text)
    statements = [
        s
        for s in (tree.body if tree is not None else [])
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if not statements:
        where = "it holds no code, so nothing is lost: delete it from the copy, then run again"
    else:
        lines = sorted({s.lineno for s in statements})
        beside = os.path.join(into, *package.split("/"), "<name>.py")
        where = (
            f"its code (line {', '.join(map(str, lines[:3]))}"
            f"{' ...' if len(lines) > 3 else ''}) goes into a module beside it in the mirror "
            f"({beside}, a portion of the namespace package, imported by its full name) or "
            "into the backend's hook module (<spec root>/__init__.py, called through spec()); "
            "move it there, delete the __init__.py from the copy, then run again"
        )
    raise InputError(
        f"{rel}: the copy adds an __init__.py to {package}, which is a namespace package in "
        f"trunk ({folder} has no __init__.py); in a mirror tree it would make the package a "
        f"regular one and hide what trunk's folder holds ({shown or 'nothing yet'}): {where}"
    )


def _minimized(
    rel: str,
    given: Given,
    has_base: bool,
    imported: Sequence[str],
    package: str,
) -> Step:
    """The step for a differing module with ``--minimize``: minimize, drop or move."""
    text, other, base_text, via, data, n, counterpart = given
    result = minimize(
        text,
        other,
        base_text,
        has_base=has_base and via == "trunk",
        imported=imported,
        package=package,
    )
    if has_base and via != "trunk":
        result = result._replace(
            notes=(
                f"the counterpart is {via}, not trunk: the base says nothing about it",
                *result.notes[1:],
            )
        )
    if result.same:
        return Step(rel, counterpart, "drop", result.reason, n, 0, None, result.notes)
    if result.text is not None:
        # The copy's own encoding: its coding line, if any, stays first in the override.
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        encoded = result.text.encode(encoding)
        after = count_lines(encoded)
        return Step(rel, counterpart, "minimize", result.reason, n, after, encoded, result.notes)
    return Step(rel, counterpart, "move", result.reason, n, n, None, result.notes)


def _base_identical(fork: str, steps: Sequence[Step], base: BaseTree) -> set[str]:
    """The kept files (the root ``__init__``) whose copy equals the base's syntax tree."""
    return {
        step.path
        for step in steps
        if step.action == "keep"
        and step.path.endswith(".py")
        and base.same_as(os.path.join(fork, *step.path.split("/")), step.path)
    }


def _conflicts(plan: Plan) -> None:
    for step in plan.steps:
        target = plan.destination(step)
        if target is None or not os.path.lexists(target):
            continue
        wanted = step.text if step.text is not None else read(os.path.join(plan.fork, step.path))
        if os.path.islink(target) or not os.path.isfile(target) or read(target) != wanted:
            raise InputError(
                f"{target} already exists and differs from what {step.path} would become; "
                "move it away or merge it by hand, then run again"
            )


def _spec_path_needs(plan: Plan) -> list[str]:
    """Trunk ``__init__.py`` files that must call spec_path for the overrides to load.

    The overrides are the Python files the plan puts into the mirror and those
    already there (an earlier, interrupted run moved them).
    """
    rels = {s.path for s in plan.steps if s.action in ("move", "add", "minimize")}
    if os.path.isdir(plan.into):
        rels.update(rel for rel, _ in walk(plan.into))
    needed: list[str] = []
    for rel in sorted(r for r in rels if r.endswith("/__init__.py")):
        # A package-init override: its package's __path__ holds the mirror folder
        # only, until spec_path runs in it.  An inheriting one runs trunk's
        # __init__, which then needs the call; one kept whole needs it itself.
        package = rel.split("/")[:-1]
        own = os.path.join(plan.trunk, *package, "__init__.py")
        if not os.path.isfile(own):
            continue  # a package the backend added: nothing of trunk's to reach
        mirror = os.path.join(plan.into, *rel.split("/"))
        step = next((s for s in plan.steps if s.path == rel), None)
        current = (
            Source(mirror)
            if step is None or os.path.lexists(mirror)
            else Source(os.path.join(plan.fork, *rel.split("/")))
        )
        if current.error is not None:
            continue
        facts = current.facts()
        if facts.inherits or (step is not None and step.action == "minimize"):
            target = own
        elif facts.spec_path is None:
            needed.append(mirror)
            continue
        else:
            continue
        source = Source(target)
        if target not in needed and source.error is None and source.facts().spec_path is None:
            needed.append(target)
    for rel in sorted(r for r in rels if r.endswith(".py")):
        parts = rel.split("/")[:-1]
        if rel.endswith("/__init__.py"):
            parts = parts[:-1]
        while parts and not os.path.isfile(os.path.join(plan.trunk, *parts, "__init__.py")):
            parts = parts[:-1]  # an added package, or a namespace portion: its parent finds it
        init = os.path.join(plan.trunk, *parts, "__init__.py")
        if init in needed:
            continue
        source = Source(init)
        if source.error is None and source.facts().spec_path is None:
            needed.append(init)
    return needed
