"""The check rules about mirror files one by one: FTS001-FTS003, FTS005, FTS006,
FTS008, FTS010, FTS011, FTS020 and FTS021.

Whether an override loads (dead, a package-init override that hides trunk
modules, the root package's own ``__init__``), whether it changes anything
(identical, public names missing), and what kind of file it is (excluded,
added, unparsable, compiled).  They register in :mod:`.registry`.
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
from .registry import Hit, Rule, _rel, _running, _shown, rule

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__: list[str] = []


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
            and not _hides_namespace(mf)
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


@rule("FTS003", "warning", "override identical to the module it shadows")
class IdenticalOverride(Rule):
    """## What it does
    Finds an override that is byte- or AST-identical to the module it shadows.

    ## Why is this bad?
    It changes nothing, yet it hides every later change of the trunk's module:
    after an upgrade the old copy keeps loading.

    ## Example
    ```python
    # third_party/B/backend/spec/R/util.py: a copy of python/R/util.py
    def clamp(x, lo, hi):
        return max(lo, min(x, hi))
    ```

    ## Use instead
    ```text
    Delete third_party/B/backend/spec/R/util.py: the trunk's module loads.
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state == "live" and mf.identical:
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"identical to the module it shadows ({mf.counterpart}); delete the override",
            )


@rule("FTS005", "warning", "public names of the shadowed module missing from the override")
class MissingPublicNames(Rule):
    """## What it does
    Compares the public names of an override (its literal `__all__`, else its
    top-level names without a leading underscore that no import binds) with
    those of the module it shadows, and reports the names it lacks.

    ## Why is this bad?
    Code that uses the trunk's module (`triton.language.core.dot`) breaks on
    this backend only: API drift that no import statement shows.

    ## Example
    ```python
    # python/R/api.py (trunk)
    def launch(): ...
    def compile_kernel(): ...

    # third_party/B/backend/spec/R/api.py
    def launch(): ...
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/api.py
    from flagtree_spec import inherit

    inherit(globals())


    def launch(): ...
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        other = mf.lower_source
        if mf.state != "live" or other is None or mf.parsed is None or mf.identical:
            return
        mine = mf.parsed.facts()
        if mine.defines_all:
            return
        missing = [n for n in other.facts().public() if n not in mine.defined]
        if missing:
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"public names of the shadowed {mf.counterpart} missing here: "
                f"{_shown(missing)} (API drift); define them or call inherit(globals())",
            )


@rule("FTS006", "error", "override of an excluded name")
class ExcludedOverride(Rule):
    """## What it does
    Finds an override of a module that its package's `spec_path(exclude=...)`
    or the spec root's declaration (`flagtree_spec.json`) excludes.

    ## Why is this bad?
    An excluded module always loads from trunk, so the override never loads:
    the backend's change is dead code.

    ## Example
    ```python
    # python/R/__init__.py (trunk)
    spec_path(__path__, exclude=["kernels"])

    # third_party/B/backend/spec/R/kernels.py
    def fused(): ...
    ```

    ## Use instead
    ```text
    Delete the override, or drop "kernels" from the exclusion.
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state == "excluded":
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"overrides {mf.entry.name}, which {mf.excluded} excludes, so it never loads; "
                "delete it or drop the exclusion",
            )


def _one_edit(a: str, b: str) -> bool:
    """Whether *a* becomes *b* by one insertion, deletion, substitution or swap of
    two neighbouring characters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )  # fmt: skip
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


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


def _hides_namespace(mf: MirrorFile) -> str:
    """The trunk namespace folder that this live mirror ``__init__`` hides, or ``""``."""
    if mf.state != "live" or mf.entry.kind != "init" or mf.entry.name == mf.model.root:
        return ""
    portion = _namespace_portion(mf.model, mf.entry.name)
    if not portion or any(os.path.normpath(p) == portion for p in mf.module.path):
        return ""
    return portion


@rule("FTS008", "info", "module added by the backend")
class AddedModule(Rule):
    """## What it does
    Lists a module that the backend adds: a mirror file with no trunk
    counterpart (the message asks about a trunk module one edit away).

    ## Why is this bad?
    It is not: adding modules is allowed. It is reported (as info) because a
    misspelt override looks exactly like an added module, and never loads in
    place of the trunk's.

    ## Example
    ```python
    # third_party/B/backend/spec/R/runtime/jitt.py: meant to override jit.py
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/runtime/jit.py
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if (
            mf.state == "live"
            and mf.lower is None
            and mf.model.trunk_only(mf.entry.name) is None
            and not mf.inherits
            and not _hides_namespace(mf)
        ):
            parent, _, last = mf.entry.name.rpartition(".")
            folder = os.path.join(mf.model.rdir, *parent.split(".")[1:])
            close = sorted(
                c
                for c in mf.model.folder(folder).children()
                if _one_edit(c, last) and mf.model.trunk_only(f"{parent}.{c}") is not None
            )
            where = mf.spec_root.backend or mf.spec_root.path
            if close and mf.entry.name not in _imported(mf.model):
                # Misnamed: nothing imports it, so it never loads, and the trunk
                # module it was meant to override loads instead.
                yield Hit(
                    mf.entry.path,
                    1,
                    1,
                    f"adds module {mf.entry.name} (no trunk counterpart), which nothing imports, "
                    f"so it never loads and trunk's {parent}.{close[0]} loads unchanged; did you "
                    f"mean {parent}.{close[0]}? Rename this file",
                    "error",
                )
                return
            hint = f"; did you mean {parent}.{close[0]}? Rename this file" if close else ""
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"adds module {mf.entry.name} (no trunk counterpart); it loads from {where}{hint}",
            )


# Per model: every module name an import statement of a file that loads names.
_IMPORTED: weakref.WeakKeyDictionary[Model, frozenset[str]] = weakref.WeakKeyDictionary()


def _imported(model: Model) -> frozenset[str]:
    """The modules of the root package that some file which runs imports (at module
    level or in a function), found once per model when first asked: the files that
    load, the lower versions ``inherit()`` runs, the hook modules and their fragments."""
    found = _IMPORTED.get(model)
    if found is not None:
        return found
    names: set[str] = set()
    files = [(m, s) for m, s, _ in _running(model)]
    for _, hooks in model.hook_modules():
        for loaded in (*hooks.files(), *hooks.later_files()):
            if loaded.path is not None and loaded.path.endswith(".py"):
                files.append((model.resolve(model.root), model.source(loaded.path)))
    for module, source in files:
        package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
        for imp in source.imports(package):
            names.add(imp.module)
            names.update(f"{imp.module}.{n}" for n in imp.names if n != "*")
        for name, *_ in source.facts().plain_imports:
            parts = name.split(".")
            names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    found = _IMPORTED[model] = frozenset(names)
    return found


@rule(
    "FTS020",
    "error",
    "a mirror __init__.py turns a trunk namespace package into a regular one, hiding it",
)
class NamespaceShadowed(Rule):
    """## What it does
    Finds an `__init__.py` that a mirror tree adds over a folder that is a
    namespace package in trunk (Triton's `_C`, which holds the compiled
    `libtriton`).

    ## Why is this bad?
    The package becomes a regular one whose `__path__` is the mirror folder
    only, so nothing of trunk's portion imports any more
    (`No module named 'triton._C.libtriton'`).

    ## Example
    ```python
    # third_party/B/backend/spec/R/_C/__init__.py
    VERSION = "b"
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/_C/__init__.py: or delete the file
    from flagtree_spec import spec_path

    spec_path(__path__)
    VERSION = "b"
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        portion = _hides_namespace(mf)
        if not portion:
            return
        held = sorted(n for n in mf.model.folder(portion).names if n != "__pycache__")
        what = f"holding {_shown(held)}" if held else "empty here; a build puts its modules there"
        yield Hit(
            mf.entry.path,
            1,
            1,
            f"makes {mf.entry.name} a regular package whose __path__ is this folder only, "
            f"while trunk's {mf.entry.name} is a namespace package ({portion}, {what}): "
            "nothing of trunk's portion can be imported any more; delete this __init__.py, "
            "or call spec_path(__path__) in it",
        )


@rule(
    "FTS021",
    "info",
    "a whole-file override shadowed by a higher backend's whole-file override never runs",
)
class ShadowedWholeFile(Rule):
    """## What it does
    In a stack `a,b`, finds `b`'s override of a module that `a` also overrides
    as a whole file (without `inherit(globals())`).

    ## Why is this bad?
    The higher backend's file replaces the module whole: the lower backend's
    override never runs, and its changes are lost without a word.

    ## Example
    ```python
    # third_party/a/backend/spec/R/whole.py
    def f(): return "a"

    # third_party/b/backend/spec/R/whole.py
    def g(): return "b"
    ```

    ## Use instead
    ```python
    # third_party/a/backend/spec/R/whole.py
    from flagtree_spec import inherit

    inherit(globals())  # runs b's version (then trunk's) first


    def f(): return "a"
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state != "shadowed" or mf.module.file is None:
            return
        chain = [mf.module.file, *mf.module.candidates]
        here = os.path.normpath(mf.entry.path)
        index = next((i for i, f in enumerate(chain) if os.path.normpath(f) == here), 0)
        if index == 0:
            return
        above = chain[index - 1]
        source = mf.model.source(above) if above.endswith(".py") else None
        if source is None or source.error is not None or source.facts().inherits:
            return  # the file above runs this one through inherit(), or is unknown
        yield Hit(
            mf.entry.path,
            1,
            1,
            f"never runs: {_rel(mf.model, above)} ({above}) overrides {mf.entry.name} as a "
            "whole file (no inherit(globals())), so this lower backend's version is dead; "
            "delete it, or make the higher one call inherit(globals())",
        )


@rule("FTS010", "error", "override that does not parse")
class Unparsable(Rule):
    """## What it does
    Finds a file that loads (an override, the hook package) and cannot be read,
    decoded per PEP 263 or parsed.

    ## Why is this bad?
    Importing it raises `SyntaxError` (or `UnicodeDecodeError`) on this
    backend, and none of the other checks can judge what it defines.

    ## Example
    ```python
    # third_party/B/backend/spec/R/broken.py
    def f(:
        pass
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/broken.py
    def f():
        pass
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        error = mf.source.error if mf.source is not None else None
        if error is not None:
            yield Hit(mf.entry.path, error.line, error.col, error.message)

    def model(self, model: Model) -> Iterator[Hit]:
        for _, hooks in model.hook_modules():
            for loaded in hooks.files():
                assert loaded.path is not None
                error = model.source(loaded.path).error if loaded.path.endswith(".py") else None
                if error is not None:
                    what = "hook module" if loaded.key == "" else "hook package module"
                    yield Hit(loaded.path, error.line, error.col, f"{what} {error.message}")


@rule("FTS011", "error", "compiled file in a mirror tree")
class CompiledFile(Rule):
    """## What it does
    Finds a compiled file (an extension module `.so`/`.pyd`, or a `.pyc`
    outside `__pycache__`) in a mirror tree.

    ## Why is this bad?
    Python loads it like a module, but nobody can review, diff or rebase it.

    ## Example
    ```text
    third_party/B/backend/spec/R/fast.so
    third_party/B/backend/spec/R/helper.pyc
    ```

    ## Use instead
    ```text
    Keep the sources in the mirror tree; build extension modules where the
    trunk builds its own.
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state == "compiled":
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"compiled file in the mirror tree of {mf.spec_root.backend or mf.spec_root.path}: "
                "Python loads it like a module, but nobody can review it; keep sources only",
            )
