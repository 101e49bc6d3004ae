"""The check rules about whether a mirror file loads at all: FTS001 (its package
is never specialised) and FTS002 (a package-init override that hides trunk
modules, or that never loads), with the advice the trunk's own ``spec_path``
calls for.  They register in :mod:`.registry`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..model.model import Model
from ..model.overrides import inits_needing_spec_path
from ..model.source import same_code
from .foreign import (
    foreign_does,
    foreign_fix,
    spec_path_import,
    trunk_foreign_spec_path,
    trunk_spec_file,
)
from .registry import Hit, Rule, _rel, _shown, rule

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__ = ["hides_namespace"]


def _loaded_too_early(mf: MirrorFile) -> bool:
    """Whether *mf* never loads because its package imports it before spec_path (FTS019)."""
    early = mf.module.early
    return (
        early is not None
        and early.shadowed is not None
        and os.path.normpath(early.shadowed) == os.path.normpath(mf.entry.path)
    )


def _dead_reason(mf: MirrorFile) -> str:
    """Why the dead override *mf* never loads, and what to do."""
    model, name, module = mf.model, mf.entry.name, mf.module
    parent_name = name.rpartition(".")[0]  # never the root itself: its __init__ is root-init
    parent = model.resolve(parent_name)
    what = f"{_rel(model, mf.entry.path)} never loads"
    if parent.kind == "missing":
        return f"{what}: its package {parent_name} does not import ({parent.reason})"
    if parent.kind == "module":
        return (
            f"{what}: {parent_name} is a module ({parent.file}), and a mirror folder without "
            "__init__.py never shadows a module"
        )
    while parent.kind == "namespace":
        # A namespace package follows its parent's path: the package above decides.
        parent_name = parent_name.rpartition(".")[0]
        parent = model.resolve(parent_name)
    if parent.kind == "package" and not parent.specialised:
        return (
            f"{what}: package {parent_name} never calls spec_path(__path__), so it is never "
            f"specialised; add '{spec_path_import(model)}' and "
            f"'spec_path(__path__)' to {parent.file}, or delete this file"
        )
    loads = module.file or "nothing"
    return f"{what}: {name} loads {loads} instead (a package or another file kind wins)"


# Per model: whether no package of the trunk calls spec_path (computed once), and the
# files that are dead for that reason alone (reported once, by FTS001's model()).
_unmodified: weakref.WeakKeyDictionary[Model, bool] = weakref.WeakKeyDictionary()
_dead_in_unmodified: weakref.WeakKeyDictionary[Model, list[str]] = weakref.WeakKeyDictionary()


def _trunk_unmodified(model: Model) -> bool:
    """Whether no package of the trunk calls ``spec_path`` and auto mode is not assumed.

    Then every override is dead, and editing files of an installed trunk is
    not the fix: auto mode (``flagtree-spec run``, ``install()``) is.
    """
    found = _unmodified.get(model)
    if found is None:
        found = not model.auto and not any(
            m.kind == "package" and m.specialised for m in model.modules()
        )
        _unmodified[model] = found
    return found


def _dead_for_unmodified_trunk(mf: MirrorFile) -> bool:
    """Record and skip a dead file that is dead only because the trunk is unmodified."""
    if mf.state != "dead" or not _trunk_unmodified(mf.model):
        return False
    parent = mf.model.resolve(mf.entry.name.rpartition(".")[0])
    if parent.kind == "module":
        return False  # dead for another reason: its package is a module
    _dead_in_unmodified.setdefault(mf.model, []).append(mf.entry.path)
    return True


def _installed(path: str) -> bool:
    parts = os.path.normpath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


@rule("FTS001", "error", "dead override: its package is never specialised, so it never loads")
class DeadOverride(Rule):
    """## What it does
    Finds a file of a mirror tree whose package is never specialised: the
    trunk package it belongs to never calls `spec_path(__path__)` (or is a
    module, or does not import), so its `__path__` never holds the mirror
    folder and the file never loads.

    ## Why is this bad?
    The backend's change is silently not there: the trunk's version runs, and
    nothing fails until a test notices that the backend's behaviour is missing.

    ## Example
    ```python
    # python/R/runtime/__init__.py (trunk): no spec_path call
    from .jit import JITFunction
    ```

    ## Use instead
    ```python
    # python/R/runtime/__init__.py (trunk)
    from flagtree_spec import spec_path

    spec_path(__path__)
    from .jit import JITFunction
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if os.path.normpath(mf.entry.path) in mf.model.hook_fragments():
            return  # a fragment of the hook package: it loads through that package
        if (
            mf.state == "dead"
            and mf.entry.kind != "init"
            and not _loaded_too_early(mf)
            and not _dead_for_unmodified_trunk(mf)
        ):
            yield Hit(mf.entry.path, 1, 1, _dead_reason(mf))

    def model(self, model: Model) -> Iterator[Hit]:
        dead = sorted(_dead_in_unmodified.pop(model, []))
        if not dead:
            return
        if _installed(model.rdir):
            fix = "The trunk is installed: editing its files is not the fix"
        else:
            inits = inits_needing_spec_path(model) or [os.path.join(model.rdir, "__init__.py")]
            backend = f" -b {','.join(model.stack)}" if model.stack else ""
            fix = (
                f"Or add 'spec_path(__path__)' to the {len(inits)} package "
                f"init{'s' if len(inits) != 1 else ''} the mirror files need: "
                f"{', '.join(inits)} ('flagtree-spec spec-path{backend} --apply' inserts it)"
            )
        files = f"{len(dead)} file{'s' if len(dead) != 1 else ''}"
        yield Hit(
            dead[0],
            1,
            1,
            f"the trunk looks unmodified: no package of {model.root} calls spec_path(__path__), "
            f"so no override loads ({files} in the mirror trees) unless auto mode specialises "
            "the trunk; 'check --auto' models 'flagtree-spec run' (and install()), which does "
            f"that. {fix}",
        )


def _copy_of(model: Model, path: str, trunk: str) -> bool:
    """Whether source file *path* is byte- or AST-identical to the trunk file *trunk*."""
    mine, theirs = model.source(path), model.source(trunk)
    if mine.data == theirs.data:  # also two empty files, but not two unreadable ones
        return bool(mine.data) or (mine.error is None and theirs.error is None)
    return same_code(mine, theirs)


@rule("FTS002", "error", "package-init override that hides trunk modules, or that never loads")
class PackageInitOverride(Rule):
    """## What it does
    Finds an `__init__.py` in a mirror tree that replaces a trunk package's
    `__init__` without calling `spec_path(__path__)`, or that never loads (the
    root package's own, or one below a package that is never specialised).

    ## Why is this bad?
    A package's `__path__` comes from the `__init__` that loads. Without the
    call it is the mirror folder alone, so every trunk module of the package
    that the backend does not override can no longer be imported.

    ## Example
    ```python
    # third_party/B/backend/spec/R/language/__init__.py
    from .core import *
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/language/__init__.py
    from flagtree_spec import spec_path

    spec_path(__path__)
    from .core import *
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        path, module = mf.entry.path, mf.module
        if mf.state == "root-init" and os.path.normpath(path) not in mf.model.hook_fragments():
            trunk = os.path.join(mf.model.rdir, "__init__.py")
            fix = (
                f"it is a copy of the trunk's {trunk}: delete it"
                if _copy_of(mf.model, path, trunk)
                else "move its code into a module"
            )
            yield Hit(
                path,
                1,
                1,
                f"override of the root package's own __init__ ({mf.entry.name}) never loads: the "
                f"root package is found on sys.path, never in a mirror; {fix}",
            )
        elif (
            mf.state == "dead"
            and mf.entry.kind == "init"
            and os.path.normpath(path) not in mf.model.hook_fragments()
            and not _loaded_too_early(mf)
            and not _dead_for_unmodified_trunk(mf)
        ):
            yield Hit(path, 1, 1, _dead_reason(mf))
        elif (
            mf.state == "live"
            and mf.entry.kind == "init"
            and not module.specialised
            and not hides_namespace(mf)
        ):
            hidden = [
                child
                for trunk in module.trunk
                for child in sorted(mf.model.folder(trunk).children())
                if mf.model.resolve(f"{module.name}.{child}").kind == "missing"
            ]
            foreign = trunk_foreign_spec_path(mf)
            trunk_spec = trunk_spec_file(mf.model)
            if foreign is None and trunk_spec is not None and trunk_spec.kind == "flagtree":
                foreign = trunk_spec.path  # the spec_path the trunk's package inits call
            if hidden and foreign:
                yield Hit(
                    path,
                    1,
                    1,
                    f"package-init override of {module.name} does not call spec_path(__path__), "
                    f"so its __path__ is the mirror folder only and trunk modules "
                    f"{_shown(hidden)} cannot be imported. The trunk's spec_path, from "
                    f"{foreign}, would not help: {foreign_does(mf.model, foreign)}. "
                    f"{foreign_fix(mf.model, foreign, calls=False)}",
                )
            elif hidden:
                yield Hit(
                    path,
                    1,
                    1,
                    f"package-init override of {module.name} does not call spec_path(__path__), "
                    f"so its __path__ is the mirror folder only and trunk modules "
                    f"{_shown(hidden)} cannot be imported; add 'spec_path(__path__)' to it",
                )
        elif mf.state == "live" and mf.entry.kind == "init" and mf.parsed is not None:
            facts = mf.parsed.facts()
            foreign = (
                mf.model.foreign_spec_path(path, module.name)
                if facts.spec_path is not None and not facts.inherits
                else None
            )
            own = mf.model.folder(os.path.dirname(path)).children()
            hidden = sorted(
                {
                    child
                    for trunk in module.trunk
                    for child in mf.model.folder(trunk).children()
                    if child not in own
                }
            )
            if foreign and hidden:
                yield Hit(
                    path,
                    1,
                    1,
                    f"package-init override of {module.name} calls the spec_path of {foreign}, "
                    f"not flagtree_spec's: {foreign_does(mf.model, foreign)}, so its "
                    f"__path__ stays the mirror folder and trunk modules {_shown(hidden)} cannot "
                    f"be imported. {foreign_fix(mf.model, foreign, calls=True)}",
                )


def _namespace_portion(model: Model, name: str) -> str:
    """The trunk's folder for *name* when it is a namespace package there, else ``""``."""
    folder = model.rdir
    for part in name.split(".")[1:]:
        hit = model.folder(folder).find(part)
        if hit is None:
            return ""
        if hit.kind != "package" and hit.kind != "namespace":
            return ""
        folder = os.path.join(folder, part)
    return folder if model.folder(folder).init() is None else ""


def hides_namespace(mf: MirrorFile) -> str:
    """The trunk namespace folder that this live mirror ``__init__`` hides, or ``""``."""
    if mf.state != "live" or mf.entry.kind != "init" or mf.entry.name == mf.model.root:
        return ""
    portion = _namespace_portion(mf.model, mf.entry.name)
    if not portion or any(os.path.normpath(p) == portion for p in mf.module.path):
        return ""
    return portion
