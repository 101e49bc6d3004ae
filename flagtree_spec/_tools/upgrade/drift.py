"""FTS016: what changed below each override since ``flagtree-spec lock``.

For a whole-file override, a counterpart whose token digest differs from the
locked one.  For an override that calls ``inherit(globals())``, per
definition it replaces: a counterpart definition that changed, or that the
counterpart no longer has (dropped or renamed: the replacement is dead).
Changes to definitions the override does not replace flow in through
``inherit`` and are not reported, and neither are changes to a definition
the override reads before replacing it (``_lower = f`` then ``def f``: a
wrapper of the lower version).  An override missing from the lock, or a
lock entry whose override is gone, is an info.  A spec root without a lock
file gets no FTS016 at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, NamedTuple, Optional

from ..._discovery import SpecRoot
from ..model.model import Model
from .digest import Analysis, analyse
from .lock import Lock, Override, blob_id, option, overrides, read, replaced

__all__ = ["Drift", "deleted_trunk_modules", "drift"]


class Drift(NamedTuple):
    """One FTS016 finding before it becomes a check finding."""

    severity: str
    path: str
    line: int
    message: str


def _key_line(lock: Lock, key: str, entry: bool = True) -> int:
    """The line of *key* in the lock file: as an override's entry, or (not *entry*) as
    an item of the trunk's modules."""
    needle = json.dumps(key, ensure_ascii=False) + (":" if entry else "")
    start = 0 if entry else max(0, lock.text.find('"trunk": {'))
    at = lock.text.find(needle, start)
    return lock.text.count("\n", 0, at) + 1 if at >= 0 else 1


def deleted_trunk_modules(model: Model, lock: Lock) -> list[tuple[str, str]]:
    """``(key, module)`` of each module the lock recorded as the trunk's that the trunk
    no longer has and that no spec root provides instead."""
    trunk = lock.data.get("trunk") or {}
    found = []
    for key in trunk.get("modules", ()):
        parts = key.split("/")
        if parts[0] != model.root:
            continue
        if os.path.isfile(os.path.join(model.rdir, *parts[1:])):
            continue
        stem = [p[: -len(".py")] if p.endswith(".py") else p for p in parts]
        name = ".".join(stem[:-1] if stem[-1] == "__init__" else stem)
        if model.resolve(name).file is None:
            found.append((key, name))
    return found


def drift(model: Model) -> Iterator[Drift]:
    """What changed since each spec root's lock; nothing for a spec root without one."""
    for spec_root in model.spec_roots:
        if spec_root.mirror is None:
            continue
        lock = read(spec_root)
        if lock is None:
            continue
        yield from _drift(model, spec_root, lock)


def _drift(model: Model, spec_root: SpecRoot, lock: Lock) -> Iterator[Drift]:
    again, rebase = (f"flagtree-spec {c}{option(spec_root)}" for c in ("lock", "rebase"))
    seen = set()
    for override in overrides(model, spec_root):
        seen.add(override.key)
        locked = lock.overrides.get(override.key)
        if locked is None and override.counterpart is None:
            continue  # an added module: nothing to lock
        if locked is None:
            yield Drift(
                "info",
                override.path,
                1,
                f"{override.key} is not in {lock.path}, so a change of the version it shadows "
                f"goes unnoticed; run '{again}'",
            )
            continue
        if override.counterpart is None:
            yield Drift(
                "warning",
                override.path,
                1,
                f"the {locked.get('counterpart', 'trunk')} file this override was made against "
                "is gone (deleted or moved since the lock), so the override now adds a module; "
                "move it along or delete it, then run " + f"'{again}'",
            )
            continue
        counterpart = model.source(override.counterpart)
        if locked["blob"] == blob_id(counterpart.data) and _same(model, override, locked):
            continue
        try:
            theirs = analyse(counterpart.text)
            mine = analyse(model.source(override.path).text)
        except (SyntaxError, ValueError):
            continue  # FTS010 or an input error reports it
        if locked["blob"] is not None:
            yield from _compare(override, locked, mine, theirs, again, rebase)
            continue
        # No git blob of the locked version: rebase needs that trunk as a folder.
        merge = f"{rebase} --old-trunk DIR"
        for found in _compare(override, locked, mine, theirs, again, merge):
            if merge in found.message:
                found = found._replace(
                    message=f"{found.message}; DIR is the trunk's root package as it was at the "
                    "lock (its files were not in a git work tree, so git cannot give them back)"
                )
            yield found
    for key in sorted(set(lock.overrides) - seen):
        yield Drift(
            "info",
            lock.path,
            _key_line(lock, key),
            f"{key} is locked, but the override is gone (deleted, or it no longer shadows "
            f"anything); run '{again}' to drop the entry",
        )
    for key, name in deleted_trunk_modules(model, lock):
        yield Drift(
            "warning",
            lock.path,
            _key_line(lock, key, entry=False),
            f"the trunk deleted {key} since the lock, and no spec root has it: module {name}, "
            f"which the backend took from the trunk, no longer exists; '{rebase} --apply' "
            "writes the locked version into the mirror tree where something still imports it "
            f"(or run '{again}' to accept that it is gone)",
        )


def _same(model: Model, override: Override, locked: dict[str, Any]) -> bool:
    """Whether nothing can have drifted, given that the counterpart has its locked bytes.

    Digesting the counterpart again is then needed only when the override
    changed kind, or replaces a name the lock does not record.
    """
    mine = model.source(override.path)
    definitions: Optional[dict[str, str]] = locked.get("definitions")
    if definitions is None:
        return not mine.facts().inherits
    assert override.counterpart is not None
    try:
        after = analyse(mine.text).after
    except (SyntaxError, ValueError):
        return True  # FTS010 reports it
    defined = model.source(override.counterpart).facts().defined
    return not any(n not in definitions and n in defined for n in after)


def _compare(
    override: Override,
    locked: dict[str, Any],
    mine: Analysis,
    theirs: Analysis,
    again: str,
    rebase: str,
) -> Iterator[Drift]:
    label = override.label
    who = "trunk" if label == "trunk" else label
    definitions: Optional[dict[str, str]] = locked.get("definitions")
    if mine.inherit_line is None:
        if theirs.digest != locked["digest"]:
            yield Drift(
                "warning",
                override.path,
                1,
                f"{who} changed {override.counterpart} since the lock: merge its changes with "
                f"'{rebase}' (or review them and run '{again}')",
            )
        return
    if definitions is None:
        yield Drift(
            "info",
            override.path,
            mine.inherit_line,
            f"the lock records {override.key} as a whole-file override, but it inherits now; "
            f"run '{again}'",
        )
        return
    for name in sorted(set(definitions) | set(replaced(mine, theirs))):
        ours = mine.after.get(name)
        if ours is None:
            continue  # no longer replaced: it flows in through inherit
        line = ours.node.lineno
        if name not in definitions:
            yield Drift(
                "info",
                override.path,
                line,
                f"replaces {name!r}, which the lock does not record; run '{again}'",
            )
        elif name not in theirs.definitions:
            effect = (
                f"reading {name!r} before replacing it now fails"
                if name in mine.captured
                else "the replacement is dead (nothing below calls it by that name)"
            )
            yield Drift(
                "warning",
                override.path,
                line,
                f"{who} dropped or renamed {name!r} since this override replaced it: {effect}; "
                "follow the rename or delete it",
            )
        elif theirs.definitions[name].digest != definitions[name] and name not in mine.captured:
            yield Drift(
                "warning",
                override.path,
                line,
                f"{who} changed {name!r} since this override replaced it: merge the change with "
                f"'{rebase}' (or review it and run '{again}')",
            )
