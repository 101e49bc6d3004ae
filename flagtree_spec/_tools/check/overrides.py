"""The check rules about what a mirror file is, one by one: FTS003, FTS005,
FTS006, FTS008, FTS010, FTS011, FTS020 and FTS021.

Whether an override changes anything (identical, public names missing), and
what kind of file it is (excluded, added, unparsable, compiled, one that
hides a namespace portion or a lower whole-file override).  Whether it loads
at all (FTS001, FTS002) is :mod:`.loading`'s.  They register in
:mod:`.registry`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..model.model import Model
from .loading import hides_namespace
from .registry import Hit, Rule, _rel, _running, _shown, rule

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__: list[str] = []


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
            and not hides_namespace(mf)
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
        portion = hides_namespace(mf)
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
