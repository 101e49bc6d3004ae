"""``flagtree_spec.lock``: what each override was made against, and what changed since.

``flagtree-spec lock -b B`` writes the lock file into the spec root of
backend ``B``.  Per override (keyed by its mirror path, ``R/sub/mod.py``) it
records its *counterpart*, the version the override shadows (the trunk
module, or the override of a base backend below it), as a token digest (see
:mod:`.digest`: comments, blank lines and docstrings do not count), the
counterpart's git blob id when it lies in a git work tree, and, for an
override that calls ``inherit(globals())``, one digest per counterpart
definition the override replaces; and the trunk's own modules, with the id of
a git tree holding them, so that a module the trunk deletes later is seen and
can be read back.  The file is sorted JSON, written only when its content
changes, so locking an unchanged tree changes nothing.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any, NamedTuple, Optional

from ..._discovery import SpecRoot
from ..model.model import InputError, Model
from . import git
from .digest import Analysis, analyse

__all__ = [
    "LOCK_NAME",
    "Override",
    "blob_id",
    "build",
    "entry_for",
    "lock_path",
    "option",
    "overrides",
    "read",
    "target",
    "trunk_modules",
    "write",
]

LOCK_NAME = "flagtree_spec.lock"
FORMAT = 1


class Override(NamedTuple):
    """One override of a spec root and the version it shadows."""

    key: str  # its mirror path, "R/sub/mod.py"
    name: str  # its module name
    path: str
    counterpart: Optional[str]  # the file it shadows; None when nothing is below it
    label: str  # "trunk" or "backend NAME": where the counterpart comes from


def lock_path(spec_root: SpecRoot) -> str:
    """Where the lock file of *spec_root* lives: at its top, next to a declaration."""
    return os.path.join(spec_root.path, LOCK_NAME)


def option(spec_root: SpecRoot) -> str:
    """The command-line option that names *spec_root* again: `` -b B`` or `` --spec-root DIR``."""
    if spec_root.backend:
        return f" -b {spec_root.backend}"
    return f" --spec-root {spec_root.path}"


def target(model: Model) -> SpecRoot:
    """The spec root ``lock`` and ``rebase`` work on.

    The first spec root with a mirror tree of the top backend of the stack;
    else (no backend given, or none of its roots has a mirror) the first
    one given by folder (``--spec-root``, ``FLAGTREE_SPEC_PATH``).
    """
    if not model.spec_roots:
        raise InputError(
            f"no spec root for {model.root} (backend stack {','.join(model.stack) or 'none'}); "
            "pass --backend B or --spec-root DIR"
        )
    top = model.stack[0] if model.stack else None
    mirrored = [r for r in model.spec_roots if r.mirror is not None]
    for spec_root in [r for r in mirrored if r.backend == top] + mirrored:
        if spec_root.backend in (top, None):
            return spec_root
    raise InputError(
        f"backend {top} has no mirror tree in its spec roots "
        f"({', '.join(r.path for r in model.spec_roots)}): nothing to lock"
    )


def _label(model: Model, path: str) -> str:
    origin = model.origin_of(path)
    if origin is None:
        return "trunk"
    return f"backend {origin.backend or os.path.basename(os.path.normpath(origin.path))}"


def overrides(model: Model, spec_root: SpecRoot) -> Iterator[Override]:
    """Every source file in *spec_root*'s mirror tree that loads, with its counterpart.

    The counterpart is ``None`` for an added module (nothing below it, or a
    trunk file deleted since the lock).  Files that never load, compiled
    files, and overrides of a compiled file are left out; a file that a
    higher backend shadows counts, with the version right below it as its
    counterpart.
    """
    mirror = model.mirror_of(spec_root)
    for root, entry in model.mirror_files():
        if root is not spec_root or not entry.path.endswith(".py") or entry.kind == "compiled":
            continue
        module = model.resolve(entry.name)
        chain = [module.file, *module.candidates] if module.file else []
        here = os.path.normpath(entry.path)
        index = next((i for i, f in enumerate(chain) if os.path.normpath(f or "") == here), None)
        if index is None:
            continue  # never loads: check says why
        below = chain[index + 1] if index + 1 < len(chain) else None
        if below is None and index == 0:
            below = model.counterpart(entry.name)  # inside a package-init override
        key = "/".join([model.root, *os.path.relpath(entry.path, mirror).split(os.sep)])
        if below is None:
            yield Override(key, entry.name, entry.path, None, "trunk")  # an added module
        elif below.endswith(".py"):
            yield Override(key, entry.name, entry.path, below, _label(model, below))


def _analysis(model: Model, path: str) -> Analysis:
    source = model.source(path)
    if source.error is not None and not source.text:
        raise InputError(f"cannot read {path}: {source.error.message}")
    try:
        return analyse(source.text)
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"{path} does not parse ({exc}); fix it, then lock again") from None


def replaced(mine: Analysis, theirs: Analysis) -> list[str]:
    """The counterpart definitions an inheriting override replaces, sorted."""
    return sorted(n for n in mine.after if n in theirs.definitions)


def blob_id(data: bytes) -> str:
    """The git blob id of a file holding *data* (what ``git hash-object`` prints without filters).

    ``check`` compares it with the locked blob id to skip digesting a
    counterpart whose bytes did not change.
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def trunk_version(model: Model) -> Optional[str]:
    """The root package's literal ``__version__``, when its ``__init__.py`` states one."""
    init = os.path.join(model.rdir, "__init__.py")
    if not os.path.isfile(init):
        return None
    tree = model.source(init).tree
    for node in tree.body if tree is not None else ():
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def entry_for(label: str, mine: Analysis, theirs: Analysis, blob: Optional[str]) -> dict[str, Any]:
    """The lock entry of an override (analysed as *mine*) whose counterpart is *theirs*."""
    data: dict[str, Any] = {"counterpart": label, "digest": theirs.digest, "blob": blob}
    if mine.inherit_line is not None:
        data["definitions"] = {n: theirs.definitions[n].digest for n in replaced(mine, theirs)}
    return data


def _trunk_files(model: Model) -> list[str]:
    return sorted(
        e.path
        for e in model.tree(model.rdir)
        if e.kind in ("file", "init") and e.path.endswith(".py")
    )


def trunk_modules(model: Model) -> list[str]:
    """The keys (``R/sub/mod.py``) of every source module of the trunk, sorted: what the
    backend takes from the trunk, besides what it overrides."""
    return sorted(
        "/".join([model.root, *os.path.relpath(path, model.rdir).split(os.sep)])
        for path in _trunk_files(model)
    )


def build(model: Model, spec_root: SpecRoot) -> dict[str, Any]:
    """The lock of *spec_root* for the tree as it is now."""
    found = [o for o in overrides(model, spec_root) if o.counterpart is not None]
    blobs = git.blob_ids([o.counterpart for o in found if o.counterpart is not None])
    entries = {
        o.key: entry_for(
            o.label,
            _analysis(model, o.path),
            _analysis(model, o.counterpart or ""),
            blobs.get(o.counterpart or ""),
        )
        for o in sorted(found, key=lambda o: o.key)
    }
    return {
        "format": FORMAT,
        "root": model.root,
        "backend": spec_root.backend,
        "trunk_version": trunk_version(model),
        "overrides": entries,
        # The trunk's modules and their git tree: a module the trunk deletes later is
        # drift too (check says so; rebase restores it where something imports it).
        "trunk": {"modules": trunk_modules(model), "tree": _tree_id(model)},
    }


def _tree_id(model: Model) -> Optional[str]:
    try:
        return git.tree_id(model.rdir, _trunk_files(model))
    except git.GitError:
        return None


def dumps(data: dict[str, Any]) -> str:
    """The lock file's text: sorted, indented JSON, one key a line, a final newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _installed(path: str) -> bool:
    parts = os.path.realpath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def write_atomic(path: str, text: str, encoding: str = "utf-8") -> None:
    """Replace *path* by *text* at once: a crash leaves the old or the new file.

    A symlink is followed: the file it points to is replaced, the link stays.
    """
    path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
            f.write(text)
        if os.path.exists(path):
            os.chmod(temp, os.stat(path).st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def write(spec_root: SpecRoot, data: dict[str, Any]) -> bool:
    """Write the lock of *spec_root*; return whether the file changed."""
    path = lock_path(spec_root)
    if _installed(spec_root.path):
        raise InputError(
            f"the spec root {spec_root.path} is an installed copy (under site-packages): a lock "
            "belongs in the backend's source tree; pass --repo DIR or --spec-root DIR"
        )
    text = dumps(data)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    write_atomic(path, text)
    return True


class Lock(NamedTuple):
    """A lock file as read."""

    path: str
    text: str
    data: dict[str, Any]
    overrides: dict[str, dict[str, Any]]


def read(spec_root: SpecRoot) -> Optional[Lock]:
    """The lock file of *spec_root*, or ``None`` when it has none."""
    path = lock_path(spec_root)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}; fix it or delete it") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{path} is not JSON ({exc}); run flagtree-spec lock again") from None
    entries = data.get("overrides") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(entries, dict)
        or not all(_valid(e) for e in entries.values())
        or not _valid_trunk(data.get("trunk"))
    ):
        raise InputError(
            f"{path} is not a lock file of format {FORMAT}; run flagtree-spec lock again"
        )
    return Lock(path, text, data, entries)


def _valid(e: object) -> bool:
    if not isinstance(e, dict) or not isinstance(e.get("digest"), str):
        return False
    if not isinstance(e.get("blob"), (str, type(None))):
        return False
    definitions = e.get("definitions", {})
    return isinstance(definitions, dict) and all(isinstance(v, str) for v in definitions.values())


def _valid_trunk(trunk: object) -> bool:
    """A lock's record of the trunk's modules: absent (an older lock), or a list of keys
    with a tree id (``null`` outside git)."""
    if trunk is None:
        return True
    if not isinstance(trunk, dict) or not isinstance(trunk.get("tree"), (str, type(None))):
        return False
    modules = trunk.get("modules")
    return isinstance(modules, list) and all(isinstance(m, str) for m in modules)
