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

import ast
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
from .drift import deleted_trunk_modules
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
from .reshape import carry_dropped, drop_identical, imported_modules, whole_module

__all__ = ["Outcome", "apply", "plan"]

# The first line of a conflict that git merge-file writes.
_MARKER = re.compile(r"^<<<<<<< ", re.MULTILINE)


class Outcome(NamedTuple):
    """What rebase does to one locked override, or to a module the trunk deleted.

    *state* is ``unchanged``, ``clean``, ``conflict`` or ``gone`` (the override
    was deleted); ``whole`` (the trunk deleted its counterpart: the override is
    written whole and becomes a module the backend adds); ``identical`` (with
    *drop*: the override is the new trunk's module again, and goes); for a
    module the lock recorded as the trunk's that the trunk deleted, ``restored``
    (something imports it: written into the mirror tree from the locked
    version) or ``deleted`` (nothing imports it: left out).
    """

    key: str
    path: str
    state: str
    message: str
    text: Optional[str]  # the merged text; None when nothing changes
    conflicts: int
    definitions: tuple[tuple[str, str], ...]  # (name, state) for an inheriting override
    entry: Optional[dict[str, Any]]  # the new lock entry of a clean merge (blob not yet set)
    counterpart: Optional[str]
    remove: bool = False  # the file goes (an override identical to the trunk's module)

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
        """The counterpart of *override* as it was locked (also when it is gone now)."""
        counterpart = override.counterpart or _trunk_path(self.model, override.key)
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
                data = git.read_blob(_existing(counterpart), blob)
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

    def trunk_module(self, key: str, tree: Optional[str]) -> str:
        """The text of trunk module *key* as it was locked: from ``--old-trunk``, else
        from the git tree the lock recorded."""
        rel = key.split("/", 1)[1] if "/" in key else key
        if self.old_trunk is not None:
            path = os.path.join(self.old_trunk, *rel.split("/"))
            try:
                with open(path, "rb") as f:
                    return _decode(f.read(), path)
            except OSError as exc:
                raise InputError(
                    f"--old-trunk has no {rel} ({path}: {exc.strerror or exc}); give the trunk "
                    "the lock was made against"
                ) from None
        if tree is None:
            raise InputError(
                f"the lock has no git tree of the trunk (it was not in a git work tree when "
                f"locked), so the deleted {key} cannot be read back; pass --old-trunk DIR"
            )
        try:
            data = git.read_from_tree(self.model.rdir, tree, rel)
        except git.GitError as exc:
            raise InputError(f"cannot read the locked {key}: {exc}") from None
        return _decode(data, f"{key} of git tree {tree}")


def _trunk_path(model: Model, key: str) -> str:
    """Where trunk module *key* (``R/sub/mod.py``) lies, or lay."""
    return os.path.join(model.rdir, *key.split("/")[1:])


def _existing(path: str) -> str:
    """The nearest folder of *path* that exists (a deleted file's folder may be gone)."""
    folder = os.path.dirname(path)
    while folder and not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def _merge(ours: str, base: str, theirs: str, key: str, label: str) -> git.Merged:
    try:
        return git.merge(ours, base, theirs, (key, f"{label} at lock", f"{label} now"))
    except git.GitError as exc:
        raise InputError(str(exc)) from None


def _one(model: Model, bases: _Base, override: Override, locked: dict[str, Any]) -> Outcome:
    key = override.key
    if override.counterpart is None:
        return _gone(model, bases, override, locked)
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
    return _per_definition(
        override, locked, mine, theirs, analyse(base_text), ours_text, base_text, theirs_text
    )


def _gone(model: Model, bases: _Base, override: Override, locked: dict[str, Any]) -> Outcome:
    """An override whose counterpart the trunk deleted: written whole (state ``whole``),
    from the locked counterpart plus the override when it inherited it."""
    key, label = override.key, locked.get("counterpart", "trunk")
    ours_text = model.source(override.path).text
    if label != "trunk":
        return Outcome(
            key,
            override.path,
            "conflict",
            f"its {label} counterpart is gone (deleted or moved): nothing to merge; move the "
            "override along or delete it",
            None,
            1,
            (),
            None,
            None,
        )
    try:
        inherits = analyse(ours_text).inherit_line is not None
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"cannot rebase {key}: it does not parse ({exc})") from None
    if not inherits:
        message = (
            "the trunk deleted its counterpart: the override is the whole module already, and "
            "now a module the backend adds (its lock entry goes)"
        )
        return Outcome(key, override.path, "whole", message, None, 0, (), None, None)
    base = bases.text(override, locked)
    try:
        text = whole_module(base, ours_text)
    except SyntaxError as exc:
        raise InputError(f"cannot rebase {key}: a version does not parse ({exc})") from None
    message = (
        "the trunk deleted the file it inherits: written whole from the locked trunk version "
        "and the override (no inherit() any more); a module the backend adds now"
    )
    return Outcome(key, override.path, "whole", message, text, 0, (), None, None)


def _entry(
    override: Override, text: str, theirs: Analysis, locked: dict[str, Any]
) -> Optional[dict[str, Any]]:
    try:
        mine = analyse(text)
    except (SyntaxError, ValueError):
        return None  # a clean merge that does not parse: leave the lock, check reports it
    return entry_for(override.label, mine, theirs, None)


def _names_used(text: str) -> set[str]:
    """Every name *text* reads anywhere (function bodies included)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _per_definition(
    override: Override,
    locked: dict[str, Any],
    mine: Analysis,
    theirs: Analysis,
    base: Analysis,
    ours_text: str,
    base_text: str,
    theirs_text: str,
) -> Outcome:
    definitions: dict[str, str] = locked.get("definitions") or {}
    states: list[tuple[str, str]] = []
    edits: dict[tuple[int, int], str] = {}
    conflicts = 0
    notes = []
    used = _names_used(ours_text)
    for name in sorted(definitions):
        ours = mine.after.get(name)
        if ours is None:
            continue
        now = theirs.definitions.get(name)
        if name in mine.captured:
            states.append((name, "wrapped"))
        elif now is None and name in used:
            states.append((name, "kept: the trunk dropped it, the override uses it"))
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
    text, carried = carry_dropped(text, base_text, theirs_text)
    for name in carried:
        states.append((name, "kept: the trunk dropped it, the override reads it on import"))
    if carried:
        notes.append(f"copied {', '.join(carried)} from the locked trunk version, which the "
                     "override reads while it is imported and the trunk dropped")  # fmt: skip
    changed = text if text != ours_text else None
    if conflicts:
        state = "conflict"
    elif carried or any(s == "clean" for _, s in states):
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
    model: Model, spec_root: SpecRoot, old_trunk: Optional[str] = None, drop: bool = False
) -> tuple[Lock, list[Outcome]]:
    """What rebase would do to every locked override of *spec_root*, and to the modules
    the lock recorded as the trunk's that the trunk deleted; writes nothing.  With
    *drop*, the definitions an override replaces that are identical to the new
    trunk's are left out of it (and an override that is the trunk's module again
    goes)."""
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
        outcome = _one(model, bases, override, locked)
        if drop and outcome.state in ("clean", "unchanged") and override.counterpart:
            outcome = _drop(model, override, locked, outcome)
        outcomes.append(outcome)
    for key in sorted(set(lock.overrides) - seen):
        message = "the override is gone since the lock; run lock to drop its entry"
        outcomes.append(Outcome(key, "", "gone", message, None, 0, (), None, None))
    outcomes.extend(_deleted(model, spec_root, lock, bases, outcomes))
    return lock, sorted(outcomes, key=lambda o: o.key)


def _drop(model: Model, override: Override, locked: dict[str, Any], outcome: Outcome) -> Outcome:
    """*outcome* with the definitions identical to the new trunk's left out."""
    assert override.counterpart is not None
    text = outcome.text if outcome.text is not None else model.source(override.path).text
    try:
        theirs = analyse(model.source(override.counterpart).text)
        mine = analyse(text)
    except (SyntaxError, ValueError):
        return outcome
    if mine.inherit_line is None:
        if mine.digest != theirs.digest:
            return outcome
        message = "identical to the trunk's module now (by its tokens): the override goes"
        return outcome._replace(state="identical", message=message, text=None, remove=True)
    dropped = drop_identical(text, theirs)
    if not dropped.names:
        return outcome
    states = (*outcome.definitions, *((n, "identical: dropped") for n in dropped.names))
    if dropped.empty:
        message = "every definition it replaced is the trunk's now: the override goes"
        return outcome._replace(
            state="identical", message=message, text=None, definitions=states, remove=True
        )
    return outcome._replace(
        state="clean",
        text=dropped.text,
        definitions=states,
        entry=_entry(override, dropped.text, theirs, locked),
        counterpart=override.counterpart,
    )


def _package(key: str) -> str:
    parts = key[: -len(".py")].split("/") if key.endswith(".py") else key.split("/")
    return ".".join(parts[:-1])


def _deleted(
    model: Model, spec_root: SpecRoot, lock: Lock, bases: _Base, outcomes: Sequence[Outcome]
) -> list[Outcome]:
    """The modules the lock recorded as the trunk's that the trunk deleted (and no spec
    root has): restored into the mirror tree where something still imports them."""
    gone = {name: key for key, name in deleted_trunk_modules(model, lock)}
    if not gone:
        return []
    tree = (lock.data.get("trunk") or {}).get("tree")
    needed = _imported(model)
    needed |= imported_modules(
        (o.text, _package(o.key)) for o in outcomes if o.text is not None and o.state == "whole"
    )
    texts: dict[str, str] = {}
    while True:
        wanted = sorted(n for n in gone if n in needed and n not in texts)
        if not wanted:
            break
        for name in wanted:
            texts[name] = bases.trunk_module(gone[name], tree)
            package = name if gone[name].endswith("/__init__.py") else name.rpartition(".")[0]
            needed |= imported_modules([(texts[name], package)])
    mirror = model.mirror_of(spec_root)
    found = []
    for name, key in sorted(gone.items()):
        path = os.path.join(mirror, *key.split("/")[1:])
        if name in texts:
            message = (
                "the trunk deleted it since the lock, and the tree still imports it: written "
                "into the mirror tree from the locked trunk version (a module the backend adds)"
            )
            found.append(Outcome(key, path, "restored", message, texts[name], 0, (), None, None))
        else:
            message = (
                "the trunk deleted it since the lock, and nothing imports it: not restored "
                f"(run 'flagtree-spec lock{option(spec_root)}' to accept that it is gone)"
            )
            found.append(Outcome(key, path, "deleted", message, None, 0, (), None, None))
    return found


def _imported(model: Model) -> set[str]:
    """Every module that a file which loads imports (in a function too), with parents."""
    found: set[str] = set()
    for module, source in model.sources():
        if source.error is not None:
            continue
        package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
        names = [i.module for i in source.imports(package)]
        names += [f"{i.module}.{n}" for i in source.imports(package) for n in i.names]
        names += [name for name, *_ in source.facts().plain_imports]
        for name in names:
            parts = name.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return found


def apply(
    spec_root: SpecRoot, lock: Lock, outcomes: Sequence[Outcome], encodings: dict[str, str]
) -> int:
    """Write the merged, whole and restored files, remove the overrides identical to the
    trunk's, then write the lock (clean merges updated, overrides that became modules
    of their own or went dropped); return the files written or removed."""
    written = 0
    for outcome in outcomes:
        if outcome.remove:
            os.remove(outcome.path)
            written += 1
            continue
        if outcome.text is None:
            continue
        encoding = encodings.get(outcome.path) or _declared_encoding(outcome.text)
        os.makedirs(os.path.dirname(outcome.path), exist_ok=True)
        write_atomic(outcome.path, outcome.text, encoding)
        written += 1
    clean = [o for o in outcomes if o.state == "clean" and o.entry is not None]
    blobs = git.blob_ids([o.counterpart for o in clean if o.counterpart is not None])
    entries = dict(lock.overrides)
    for outcome in clean:
        assert outcome.entry is not None
        entries[outcome.key] = {**outcome.entry, "blob": blobs.get(outcome.counterpart or "")}
    for outcome in outcomes:
        if outcome.state in ("whole", "identical"):
            entries.pop(outcome.key, None)
    if entries != lock.overrides:
        write_atomic(lock.path, dumps({**lock.data, "overrides": entries}))
    return written


def _declared_encoding(text: str) -> str:
    """The PEP 263 encoding *text* declares (UTF-8 without a declaration)."""
    head = "".join(text.splitlines(keepends=True)[:2]).encode("ascii", "replace")
    try:
        return tokenize.detect_encoding(io.BytesIO(head).readline)[0]
    except SyntaxError:
        return "utf-8"


def encodings(model: Model, outcomes: Sequence[Outcome]) -> dict[str, str]:
    """The PEP 263 encoding of every override that rebase rewrites."""
    return {
        o.path: _encoding(model.source(o.path).data)
        for o in outcomes
        if o.text is not None and os.path.isfile(o.path)
    }
