"""The rules ``migrate --verify`` judges each module by, from the three probe reports.

Every module of the copy is compared with its own counterpart only: the
new tree's value of a name is the copy's, or trunk's *of the same module
and name* where the backend did not change that name.  Whether the backend
changed a name is read from the sources, independently of the plan (a plan
that leaves a changed name to trunk is what the verification must catch):

* with a base, the name is the backend's when the copy's last binding of it
  differs from the base's (added, changed or deleted by the backend);
* without one, when it differs from trunk's; a name the copy lacks is
  trunk's addition.

A value that is a function or class defined in another module, where the
copy's value of the name is defined there too, is judged there
(``origins``): ``from .c3 import helper`` holds trunk's ``helper`` when
``c3.helper`` may be trunk's and is; a value from another module than the
copy's (a lost star import's rebinding) never is.  A class whose members
differ only in functions attached from other modules is judged member by
member the same way.  Besides the names: an override the plan puts into the mirror must be
the file the module loads from, and the module's functions must read no
global name that the copy binds and the new tree does not.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Optional

from .files import decode, read
from .plan import BaseTree, Plan
from .statements import signatures

__all__ = ["Facts", "Judged", "Sides", "facts", "judge", "left_alone"]

Report = Mapping[str, Any]  # one module in one interpreter: "error", or "names", "origins", ...


class Facts(NamedTuple):
    """What the sources say of one module's names."""

    copy: dict[str, str]  # name -> the syntax tree of the copy's last binding (dumped)
    reference: Optional[dict[str, str]]  # the base's (with a base), else trunk's; None: no file
    three_way: bool  # the reference is the base
    override: Optional[str]  # the path of the mirror file the plan makes of it, if any


def _module(root: str, rel: str) -> Optional[str]:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join([root, *parts])


def facts(plan: Plan, copy_folder: str, base: Optional[BaseTree]) -> dict[str, Facts]:
    """Per module of the copy: its names' bindings in the copy and in the reference.

    *copy_folder* is the copy as the backend ran it (:func:`.overlay.copy_overlay`);
    the reference is *base*'s file where a base is given and the module's
    counterpart is trunk's, else trunk's file.
    """
    root = os.path.basename(plan.trunk)
    found: dict[str, Facts] = {}
    for step in plan.steps:
        if not step.path.endswith(".py") or step.action == "link":
            continue
        name = _module(root, step.path)
        if name is None:
            continue
        mine = os.path.join(copy_folder, root, *step.path.split("/"))
        if not os.path.isfile(mine):
            continue
        copy = signatures(decode(mine, read(mine)))
        reference: Optional[dict[str, str]] = None
        counterpart = step.trunk
        via_trunk = counterpart is None or _under(counterpart, plan.trunk)
        three_way = base is not None and via_trunk and counterpart is not None
        if three_way:
            assert base is not None
            text = base.text(step.path)
            reference = signatures(text) if text is not None else None
        elif counterpart is not None and os.path.isfile(counterpart):
            reference = signatures(decode(counterpart, read(counterpart)))
        elif counterpart is None:
            reference = {}  # added by the backend: every name of it is the backend's
        override = step.path if step.action in ("move", "minimize", "add") else None
        found[name] = Facts(copy, reference, three_way, override)
    return found


def left_alone(fact: Optional[Facts]) -> bool:
    """Whether the backend changed nothing in the module: the copy binds what the base does."""
    return (
        fact is not None
        and fact.three_way
        and fact.reference is not None
        and fact.copy == fact.reference
    )


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Judged(NamedTuple):
    """One module's verdict: its differences, how many names were compared, and the
    names the copy has that are gone as trunk's deletions since the base."""

    differences: list[str]
    compared: int
    deleted: list[str]


class Sides(NamedTuple):
    """The three reports of every module, and what the sources say of them."""

    copy: Mapping[str, Report]
    trunk: Mapping[str, Report]
    new: Mapping[str, Report]
    facts: Mapping[str, Facts]


def _trunks(sides: Sides, module: str, name: str) -> bool:
    """Whether the backend left *name* of *module* as it was (so trunk's may stand)."""
    fact = sides.facts.get(module)
    if fact is None:  # not a module of the copy: trunk's file, unchanged by the backend
        return True
    if name not in fact.copy and name in sides.copy.get(module, {}).get("names", {}):
        return False  # bound when the copy runs, by no statement of its own (a submodule)
    if name not in fact.copy and not fact.three_way:
        return True  # trunk's addition (or a name the backend deleted: no base tells)
    if fact.reference is None:  # added by both sides: only trunk's additions are trunk's
        return name not in fact.copy
    return fact.copy.get(name) == fact.reference.get(name)


def _is_trunks(sides: Sides, module: str, name: str, value: Optional[str]) -> bool:
    """Whether *value* is trunk's *name* of *module*, and the backend left that name alone."""
    trunk = sides.trunk.get(module, {}).get("names", {})
    return _trunks(sides, module, name) and value == trunk.get(name)


def _by_origin(sides: Sides, origin: Optional[str], value: Optional[str]) -> bool:
    """Whether *value*, defined as *origin* (``module:name``), is trunk's by its own module."""
    if origin is None or value is None:
        return False
    module, _, name = origin.partition(":")
    if "." in name or "<" in name:
        return False
    new = sides.new.get(module, {}).get("names", {})
    return new.get(name) == value and _is_trunks(sides, module, name, value)


def _by_references(
    sides: Sides, mine: Optional[Mapping[str, Any]], got: Optional[Mapping[str, Any]]
) -> bool:
    """Whether a container differs from the copy's only in functions or classes that are
    trunk's in their own modules (a table of ``language`` functions in a kept class)."""
    if mine is None or got is None or mine["masked"] != got["masked"]:
        return False
    theirs = {i: (o, d) for i, o, d in mine["items"]}
    for i, origin_, value in got["items"]:
        expected = theirs.get(i)
        if expected is None or expected[0] != origin_:
            return False
        if expected[1] != value and not _by_origin(sides, origin_, value):
            return False
    return True


def _reexported(sides: Sides, module: str, name: str, origin: str) -> bool:
    """Whether *name*, which the copy's *module* lacks, is trunk's addition re-exporting
    the definition *origin* (trunk's binds the same one), as that module now holds it."""
    if not _trunks(sides, module, name):
        return False
    if sides.trunk.get(module, {}).get("origins", {}).get(name) != origin:
        return False
    home, _, attr = origin.partition(":")
    new = sides.new.get(home, {}).get("names", {})
    return home != module and "." not in attr and new.get(attr) == sides.new[module]["names"][name]


def _class_by_members(sides: Sides, module: str, name: str) -> bool:
    """Whether class *name* differs from the copy's only in members that are trunk's."""
    copy, new = sides.copy[module], sides.new[module]
    mine, got = copy.get("members", {}).get(name), new.get("members", {}).get(name)
    if mine is None or got is None or set(mine) != set(got):
        return False
    if copy.get("bases", {}).get(name) != new.get("bases", {}).get(name):
        return False
    origins = new.get("member_origins", {}).get(name, {})
    theirs = copy.get("member_origins", {}).get(name, {})
    refs_new = new.get("member_references", {}).get(name, {})
    refs_copy = copy.get("member_references", {}).get(name, {})
    changed = [m for m in mine if mine[m] != got[m]]
    return bool(changed) and all(
        (origins.get(m) == theirs.get(m) and _by_origin(sides, origins.get(m), got[m]))
        or _by_references(sides, refs_copy.get(m), refs_new.get(m))
        for m in changed
    )


def judge(
    module: str,
    sides: Sides,
    expected: Iterable[tuple[Optional[str], Optional[str]]] = (),
    into: str = "",
) -> Judged:
    """The differences of *module* between the copy and the new tree (both imported)."""
    copy, new = sides.copy[module], sides.new[module]
    out: list[str] = []
    fact = sides.facts.get(module)
    if fact is not None and fact.override is not None and into:
        loaded = new.get("file") or ""
        if not _under(os.path.realpath(loaded), os.path.realpath(into)):
            out.append(
                f"the override {fact.override} never loads: the module comes from "
                f"{loaded or 'nowhere'} (does its package call spec_path?)"
            )
    pairs = set(expected)
    mine, got = copy["names"], new["names"]
    origins = new.get("origins", {})
    keys = sorted(set(mine) | set(got))
    deleted: list[str] = []
    for key in keys:
        value = got.get(key)
        if value == mine.get(key):
            continue
        if _is_trunks(sides, module, key, value):
            if value is None:
                deleted.append(key)
            continue  # the backend left it alone: trunk's value of this very name
        if (
            key in origins
            and origins[key] == copy.get("origins", {}).get(key)
            and _by_origin(sides, origins[key], value)
        ):
            continue  # the copy's import of the same definition, trunk's in its own module
        if key not in mine and key in origins and _reexported(sides, module, key, origins[key]):
            continue  # trunk's addition re-exports a definition, judged in its own module
        if _by_references(
            sides, copy.get("references", {}).get(key), new.get("references", {}).get(key)
        ):
            continue  # a table of definitions, each trunk's in its own module
        if (mine.get(key), value) in pairs:
            continue  # a value of the root __init__ kept in migrate-leftovers
        if key in mine and value is not None and _class_by_members(sides, module, key):
            continue
        trunks = sides.trunk.get(module, {}).get("names", {}).get(key)
        if _trunks(sides, module, key) and key in mine and value is not None and trunks:
            out.append(
                f"{key}: the backend left it alone, so trunk's may stand, but it "
                f"is neither trunk's ({trunks[:50]}) nor the copy's ({mine[key][:50]}): "
                f"{value[:50]}"
            )
        elif value is None:
            out.append(f"{key}: the copy has it, trunk and the spec tree lose it")
        elif key not in mine:
            out.append(f"{key}: a name the copy never had ({value[:60]})")
        else:
            out.append(f"{key}: not the copy's ({_what_differs(key, copy, new)})")
    lost = sorted(set(new.get("unbound", ())) - set(copy.get("unbound", ())))
    if lost:
        shown = ", ".join(lost[:5]) + (f" and {len(lost) - 5} more" if len(lost) > 5 else "")
        out.append(
            f"its functions read {shown}, which the spec tree's module does not bind "
            "(the copy's does)"
        )
    return Judged(out, len(keys), deleted)


def _what_differs(key: str, copy: Report, new: Report) -> str:
    """The members of class *key* that differ, or the two digests."""
    mine = copy.get("members", {}).get(key)
    got = new.get("members", {}).get(key)
    if mine is None or got is None:
        return f"{copy['names'][key][:50]} vs {new['names'][key][:50]}"
    lost = sorted(set(mine) - set(got))
    extra = sorted(set(got) - set(mine))
    changed = sorted(m for m in set(mine) & set(got) if mine[m] != got[m])
    parts = []
    for label, names in (("lost", lost), ("not in the copy", extra), ("changed", changed)):
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            parts.append(f"members {label}: {shown}")
    return "; ".join(parts) or "its bases differ"
