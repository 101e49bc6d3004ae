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
from typing import TYPE_CHECKING, Optional

from ..model.model import Model
from ..model.overrides import inits_needing_spec_path
from ..model.source import same_code
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
            f"specialised; add 'from flagtree_spec import spec_path' and "
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
            foreign = _trunk_foreign_spec_path(mf)
            if hidden and foreign:
                yield Hit(
                    path,
                    1,
                    1,
                    f"package-init override of {module.name} does not call spec_path(__path__), "
                    f"so its __path__ is the mirror folder only and trunk modules "
                    f"{_shown(hidden)} cannot be imported. The trunk's spec_path, from "
                    f"{foreign}, would not help: {_foreign_does(mf.model, foreign)}. "
                    f"{_foreign_fix(foreign)}",
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
                    f"not flagtree_spec's: {_foreign_does(mf.model, foreign)}, so its "
                    f"__path__ stays the mirror folder and trunk modules {_shown(hidden)} cannot "
                    f"be imported. {_foreign_fix(foreign)}",
                )


@rule("FTS003", "warning", "override identical to the module it shadows")
class IdenticalOverride(Rule):
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
    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state == "compiled":
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"compiled file in the mirror tree of {mf.spec_root.backend or mf.spec_root.path}: "
                "Python loads it like a module, but nobody can review it; keep sources only",
            )


def _trunk_foreign_spec_path(mf: MirrorFile) -> Optional[str]:
    """The trunk's own ``spec_path`` that the lower ``__init__`` of package-init
    override *mf* calls (the next lower version, else the trunk's), if any."""
    inits = [mf.lower] if mf.lower else []
    inits += [os.path.join(t, "__init__.py") for t in mf.module.trunk]
    for init in inits:
        if init and os.path.isfile(init):
            return mf.model.foreign_spec_path(init, mf.module.name)
    return None


def _foreign_does(model: Model, foreign: str) -> str:
    """What a trunk's own ``spec_path`` (defined in *foreign*) does, for FTS002."""
    if os.path.basename(foreign) == "flagtree_spec.py":
        r = model.root
        return (
            f"that one (FlagTree's own) puts a single folder, <{r}>/backends/<B>/spec/{r}/"
            f"<package>, which it finds by searching __path__[0] for '/{r}', in front of "
            "__path__, and never adds a package's trunk folders to the path of a package "
            "whose __init__ comes from a mirror"
        )
    return (
        "it is not flagtree_spec's, and nothing says it puts a package's trunk folders on "
        "the path of a package whose __init__ comes from a mirror"
    )


def _foreign_fix(foreign: str) -> str:
    return (
        f"Replace {foreign} by the few lines that forward to flagtree_spec (its FlagTree "
        "page shows them), whose spec_path keeps the trunk folders; or call "
        "'from flagtree_spec import inherit' and 'inherit(globals())' in this override, "
        "which runs the trunk __init__ and keeps its folders; or delete this __init__.py"
    )
