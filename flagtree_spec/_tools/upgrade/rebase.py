"""``flagtree-spec rebase``: merge the counterparts' changes since the lock into the overrides.

Three ways, with ``git merge-file --diff3``: the base is the counterpart as
it was locked (read back from the locked git blob, or from ``--old-trunk
DIR``, whose file must have the locked digest), *ours* is the override,
*theirs* the counterpart now.  A whole-file override merges as a file; an
override that calls ``inherit(globals())`` merges per definition it replaces
(the old, the override's and the new version of that one statement), so
trunk changes elsewhere, which flow in through ``inherit``, are never copied.

Nothing is written without ``apply``.  With it, every merged file is
replaced at once (a temporary file renamed over it), conflicts are written
with markers, and the lock is updated only for the overrides that merged
cleanly.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tokenize
from collections.abc import Sequence
from typing import Any, NamedTuple, Optional

from ..._discovery import SpecRoot
from ..model.model import InputError, Model
from . import git
from .digest import Analysis, analyse, digest_text
from .lock import (
    Lock,
    Override,
    dumps,
    entry_for,
    lock_path,
    option,
    overrides,
    read,
    write_atomic,
)

__all__ = ["Outcome", "apply", "plan"]

# The first line of a conflict that git merge-file writes.
_MARKER = re.compile(r"^<<<<<<< ", re.MULTILINE)


class Outcome(NamedTuple):
    """What rebase does to one locked override."""

    key: str
    path: str
    state: str  # "unchanged", "clean", "conflict" or "gone"
    message: str
    text: Optional[str]  # the merged text; None when nothing changes
    conflicts: int
    definitions: tuple[tuple[str, str], ...]  # (name, state) for an inheriting override
    entry: Optional[dict[str, Any]]  # the new lock entry of a clean merge (blob not yet set)
    counterpart: Optional[str]

    def diff(self, old: str, shown: Optional[str] = None) -> str:
        """The unified diff from *old* (the override as it is) to the merged text; its
        headers name the override as *shown* (default: its path)."""
        if self.text is None:
            return ""
        name = self.path if shown is None else shown
        return "".join(
            difflib.unified_diff(
                io.StringIO(old, newline=None).readlines(),
                io.StringIO(self.text, newline=None).readlines(),
                name,
                f"{name} (merged)",
            )
        )


def _decode(data: bytes, where: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise InputError(f"{where} does not decode: {exc}") from None


def _encoding(data: bytes) -> str:
    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


class _Base:
    """Reads the counterparts as they were locked."""

    def __init__(self, model: Model, old_trunk: Optional[str]) -> None:
        self.model = model
        self.old_trunk = None if old_trunk is None else os.path.abspath(old_trunk)
        if self.old_trunk is not None and not os.path.isdir(self.old_trunk):
            raise InputError(
                f"--old-trunk {old_trunk!r} is not a directory; give the old root package's "
                "folder (the one holding its __init__.py)"
            )

    def text(self, override: Override, locked: dict[str, Any]) -> str:
        counterpart = override.counterpart
        assert counterpart is not None
        if self.old_trunk is not None and self.model.origin_of(counterpart) is None:
            rel = os.path.relpath(counterpart, self.model.rdir)
            path = os.path.join(self.old_trunk, rel)
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as exc:
                raise InputError(
                    f"--old-trunk has no {rel} ({path}: {exc.strerror or exc}); give the trunk "
                    "the lock was made against"
                ) from None
            where = path
        else:
            blob = locked.get("blob")
            if blob is None:
                raise InputError(
                    f"the lock has no git blob for {override.key} (its counterpart was not in a "
                    "git work tree when locked); pass --old-trunk DIR, the trunk it was made "
                    "against"
                )
            try:
                data = git.read_blob(os.path.dirname(counterpart), blob)
            except git.GitError as exc:
                raise InputError(f"cannot read the locked {override.key}: {exc}") from None
            where = f"git blob {blob}"
        text = _decode(data, where)
        try:
            found = digest_text(text)
        except (SyntaxError, ValueError):
            found = ""
        if found != locked["digest"]:
            raise InputError(
                f"{where} does not match the lock of {override.key} (its digest differs): it is "
                "not the version the override was made against; give the old trunk the lock "
                "was made from"
            )
        return text


def _merge(ours: str, base: str, theirs: str, key: str, label: str) -> git.Merged:
    try:
        return git.merge(ours, base, theirs, (key, f"{label} at lock", f"{label} now"))
    except git.GitError as exc:
        raise InputError(str(exc)) from None


def _one(model: Model, bases: _Base, override: Override, locked: dict[str, Any]) -> Outcome:
    key = override.key
    if override.counterpart is None:
        return Outcome(
            key,
            override.path,
            "conflict",
            f"its {locked.get('counterpart', 'trunk')} counterpart is gone (deleted or moved): "
            "nothing to merge; move the override along or delete it",
            None,
            1,
            (),
            None,
            None,
        )
    ours_text = model.source(override.path).text
    theirs_text = model.source(override.counterpart).text
    if _MARKER.search(ours_text):
        return Outcome(
            key,
            override.path,
            "conflict",
            "conflict markers of an earlier merge are still in it; resolve them, then run lock",
            None,
            1,
            (),
            None,
            None,
        )
    try:
        mine, theirs = analyse(ours_text), analyse(theirs_text)
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"cannot rebase {key}: a version does not parse ({exc})") from None
    if theirs.digest == locked["digest"]:
        return Outcome(key, override.path, "unchanged", "", None, 0, (), None, None)
    base_text = bases.text(override, locked)
    label = override.label
    if mine.inherit_line is None:
        merged = _merge(ours_text, base_text, theirs_text, key, label)
        state = "conflict" if merged.conflicts else "clean"
        text = merged.text if merged.text != ours_text else None
        new = None if merged.conflicts else _entry(override, merged.text, theirs, locked)
        return Outcome(
            key, override.path, state, "", text, merged.conflicts, (), new, override.counterpart
        )
    return _per_definition(override, locked, mine, theirs, analyse(base_text), ours_text)


def _entry(
    override: Override, text: str, theirs: Analysis, locked: dict[str, Any]
) -> Optional[dict[str, Any]]:
    try:
        mine = analyse(text)
    except (SyntaxError, ValueError):
        return None  # a clean merge that does not parse: leave the lock, check reports it
    return entry_for(override.label, mine, theirs, None)


def _per_definition(
    override: Override,
    locked: dict[str, Any],
    mine: Analysis,
    theirs: Analysis,
    base: Analysis,
    ours_text: str,
) -> Outcome:
    definitions: dict[str, str] = locked.get("definitions") or {}
    states: list[tuple[str, str]] = []
    edits: dict[tuple[int, int], str] = {}
    conflicts = 0
    notes = []
    for name in sorted(definitions):
        ours = mine.after.get(name)
        if ours is None:
            continue
        now = theirs.definitions.get(name)
        if name in mine.captured:
            states.append((name, "wrapped"))
        elif now is None:
            states.append((name, "dropped"))
            conflicts += 1
            notes.append(f"{override.label} dropped or renamed {name!r}")
        elif now.digest == definitions[name]:
            states.append((name, "unchanged"))
        elif name not in base.definitions:
            states.append((name, "conflict"))
            conflicts += 1
            notes.append(f"the locked version has no {name!r}")
        elif (ours.start, ours.end) in edits:
            states.append((name, "clean"))  # the same statement binds several names
        else:
            merged = _merge(
                mine.segment(ours),
                base.segment(base.definitions[name]),
                theirs.segment(now),
                f"{override.key}:{name}",
                override.label,
            )
            edits[(ours.start, ours.end)] = merged.text
            conflicts += merged.conflicts
            states.append((name, "conflict" if merged.conflicts else "clean"))
    lines = list(mine.lines)
    for (start, end), text in sorted(edits.items(), reverse=True):
        lines[start - 1 : end] = [text]
    text = "".join(lines)
    changed = text if text != ours_text else None
    if conflicts:
        state = "conflict"
    elif any(s == "clean" for _, s in states):
        state = "clean"
    else:
        state = "unchanged"
    new = None if conflicts else _entry(override, text, theirs, locked)
    return Outcome(
        override.key,
        override.path,
        state,
        "; ".join(notes),
        changed,
        conflicts,
        tuple(states),
        new,
        override.counterpart,
    )


def plan(
    model: Model, spec_root: SpecRoot, old_trunk: Optional[str] = None
) -> tuple[Lock, list[Outcome]]:
    """What rebase would do to every locked override of *spec_root*; writes nothing."""
    lock = read(spec_root)
    if lock is None:
        raise InputError(
            f"no lock file {lock_path(spec_root)}: nothing records what the overrides were made "
            f"against; run 'flagtree-spec lock{option(spec_root)}' first (before the trunk "
            "changes)"
        )
    bases = _Base(model, old_trunk)
    outcomes = []
    seen = set()
    for override in overrides(model, spec_root):
        locked = lock.overrides.get(override.key)
        if locked is None:
            continue
        seen.add(override.key)
        outcomes.append(_one(model, bases, override, locked))
    for key in sorted(set(lock.overrides) - seen):
        message = "the override is gone since the lock; run lock to drop its entry"
        outcomes.append(Outcome(key, "", "gone", message, None, 0, (), None, None))
    return lock, sorted(outcomes, key=lambda o: o.key)


def apply(
    spec_root: SpecRoot, lock: Lock, outcomes: Sequence[Outcome], encodings: dict[str, str]
) -> int:
    """Write the merged files, then the lock (clean merges only); return the files written."""
    written = 0
    for outcome in outcomes:
        if outcome.text is None:
            continue
        encoding = encodings.get(outcome.path, "utf-8")
        write_atomic(outcome.path, outcome.text, encoding)
        written += 1
    clean = [o for o in outcomes if o.state == "clean" and o.entry is not None]
    blobs = git.blob_ids([o.counterpart for o in clean if o.counterpart is not None])
    entries = dict(lock.overrides)
    for outcome in clean:
        assert outcome.entry is not None
        entries[outcome.key] = {**outcome.entry, "blob": blobs.get(outcome.counterpart or "")}
    if entries != lock.overrides:
        write_atomic(lock.path, dumps({**lock.data, "overrides": entries}))
    return written


def encodings(model: Model, outcomes: Sequence[Outcome]) -> dict[str, str]:
    """The PEP 263 encoding of every override that rebase rewrites."""
    return {o.path: _encoding(model.source(o.path).data) for o in outcomes if o.text is not None}
