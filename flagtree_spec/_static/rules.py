"""The rules of ``flagtree-spec check``: one small class per code, in a registry.

A rule is declared with its code, default severity and one-line summary::

    @rule("FTS008", "info", "module added by the backend")
    class AddedModule(Rule):
        def file(self, mf: MirrorFile) -> Iterator[Hit]: ...

and looks at one file of a mirror tree at a time (:meth:`Rule.file`, given
the :class:`~flagtree_spec._static.check.MirrorFile` that says what the import
system does with it), at the whole model once (:meth:`Rule.model`), or both.
It yields :class:`Hit` objects; the check turns them into findings carrying
its code and severity.  Adding a code is adding one class here, or in the
module of its concern (:mod:`.rules_hooks` for hook modules,
:mod:`.rules_inherit` for ``inherit`` overrides), and its row in
``docs/check.md``.
"""

from __future__ import annotations

import ast
import os
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Callable, ClassVar, NamedTuple, Optional

from .._config import read_declaration
from .._discovery import SpecRoot, close_matches, same_tree
from .drift import drift
from .model import Model, Module
from .source import Source

if TYPE_CHECKING:  # the check builds the mirror files the rules look at
    from .check import MirrorFile

__all__ = ["RULES", "Hit", "Rule", "rule"]


class Hit(NamedTuple):
    """What a rule found: where, and what to do about it."""

    path: str
    line: int
    col: int
    message: str
    severity: str = ""  # empty: the rule's default severity


class Rule:
    """One check code.  MirrorFile :meth:`file`, :meth:`model` or both."""

    code: ClassVar[str]
    severity: ClassVar[str]  # "error", "warning" or "info"
    summary: ClassVar[str]

    def file(self, mf: MirrorFile) -> Iterable[Hit]:
        """Findings for one file of a mirror tree (every file, every state)."""
        return ()

    def model(self, model: Model) -> Iterable[Hit]:
        """Findings that need the whole model (after every file was seen)."""
        return ()


RULES: dict[str, Rule] = {}


def rule(code: str, severity: str, summary: str) -> Callable[[type[Rule]], type[Rule]]:
    """Declare a rule class with its code, default severity and one-line summary."""
    assert severity in ("error", "warning", "info") and code not in RULES, (code, severity)

    def register(cls: type[Rule]) -> type[Rule]:
        cls.code, cls.severity, cls.summary = code, severity, summary
        RULES[code] = cls()
        # In code order, whichever module declares the rule (rules_hooks, rules_inherit).
        ordered = sorted(RULES.items())
        RULES.clear()
        RULES.update(ordered)
        return cls

    return register


# --------------------------------------------------------------------------- helpers


def _rel(model: Model, path: str) -> str:
    """A short name of the mirror file *path* for messages: relative to its mirror."""
    origin = model.origin_of(path)
    assert origin is not None
    if origin.backend:
        label = f"{origin.backend}:"
    else:  # FLAGTREE_SPEC_PATH or --spec-root: no backend name, so name the folder
        label = f"{os.path.basename(os.path.normpath(origin.path))}:"
    return label + os.path.join(model.root, os.path.relpath(path, model.mirror_of(origin)))


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


def _shown(names: list[str]) -> str:
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _sources(model: Model) -> Iterator[tuple[Module, Source]]:
    """Every module that loads from a source file, with that source."""
    for module in model.modules():
        if module.file is not None and module.file.endswith(".py"):
            yield module, model.source(module.file)


# --------------------------------------------------------------------------- the rules


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
        if mf.state == "dead" and mf.entry.kind != "init" and not _dead_for_unmodified_trunk(mf):
            yield Hit(mf.entry.path, 1, 1, _dead_reason(mf))

    def model(self, model: Model) -> Iterator[Hit]:
        dead = sorted(_dead_in_unmodified.pop(model, []))
        if not dead:
            return
        init = os.path.join(model.rdir, "__init__.py")
        fix = (
            "The trunk is installed: editing its files is not the fix"
            if _installed(model.rdir)
            else f"Or add 'spec_path(__path__)' to {init} and the packages the overrides are in"
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
    return mine.tree is not None and theirs.tree is not None and same_tree(mine.tree, theirs.tree)


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
            and not _dead_for_unmodified_trunk(mf)
        ):
            yield Hit(path, 1, 1, _dead_reason(mf))
        elif mf.state == "live" and mf.entry.kind == "init" and not module.specialised:
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
        if mf.state == "live" and mf.identical():
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"identical to the module it shadows ({mf.lower}); delete the override",
            )


@rule("FTS004", "error", "a name imported from a module is not defined by the version that loads")
class UndefinedImport(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        reported: dict[tuple[str, str], list[str]] = {}
        for module, source in _sources(model):
            assert module.file is not None
            if source.error is not None:
                if module.origin is None:
                    model.problem(source.error)
                continue
            package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
            imports = list(source.imports(package))
            if module.origin is None:
                # Trunk files are not needed again as trees; keeping thousands of
                # them alive makes the cyclic garbage collector rescan them.
                source.release()
            for imp in imports:
                if imp.guarded or imp.module.partition(".")[0] != model.root:
                    continue
                target = model.resolve(imp.module)
                if target.file is None or not target.file.endswith(".py"):
                    continue
                if module.origin is None and target.origin is None:
                    continue  # trunk importing trunk is not the backend's business
                facts = model.source(target.file).facts()
                if facts.defines_all:
                    continue
                for name in imp.names:
                    if name == "*" or name in facts.defined:
                        continue
                    if model.resolve(f"{imp.module}.{name}").kind != "missing":
                        continue  # a submodule
                    if module.origin is not None:
                        yield Hit(
                            module.file,
                            imp.line,
                            imp.col,
                            f"imports {name!r} from {imp.module}, which {target.file} does not "
                            "define",
                        )
                    else:
                        where = f"{module.file}:{imp.line}"
                        reported.setdefault((target.file, name), []).append(where)
        for spec_root, hooks in model.hook_modules():
            if hooks.broken is not None and hooks.broken[3].startswith("'from"):
                path, line, col, message = hooks.broken
                yield Hit(
                    path,
                    line,
                    col,
                    f"{message}: the hook module {spec_root.hooks} fails to import, so every "
                    "spec() call raises SpecImportError",
                )
        for (path, name), sites in sorted(reported.items()):
            more = f" and {len(sites) - 1} more" if len(sites) > 1 else ""
            yield Hit(
                path,
                1,
                1,
                f"does not define {name!r}, which {sites[0]}{more} imports from it; define it "
                "or call inherit(globals())",
            )


@rule("FTS005", "warning", "public names of the shadowed module missing from the override")
class MissingPublicNames(Rule):
    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        other = mf.lower_source()
        if mf.state != "live" or other is None or mf.parsed is None or mf.identical():
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
                f"public names of the shadowed {mf.lower} missing here: {_shown(missing)} (API "
                "drift); define them or call inherit(globals())",
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


@rule("FTS008", "info", "module added by the backend")
class AddedModule(Rule):
    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if (
            mf.state == "live"
            and mf.lower is None
            and mf.model.trunk_only(mf.entry.name) is None
            and not _inherits(mf)
        ):
            yield Hit(
                mf.entry.path,
                1,
                1,
                f"adds module {mf.entry.name} (no trunk counterpart); it loads from "
                f"{mf.spec_root.backend or mf.spec_root.path}",
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


@rule("FTS014", "warning", "symlink in a spec root that leaves it")
class SymlinkLeavesSpecRoot(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        for spec_root in model.spec_roots:
            for dirpath, dirnames, filenames in os.walk(spec_root.path):
                for entry in sorted([*dirnames, *filenames]):
                    path = os.path.join(dirpath, entry)
                    if not os.path.islink(path):
                        continue
                    real = os.path.realpath(path)
                    if real != spec_root.real and not real.startswith(spec_root.real + os.sep):
                        yield Hit(
                            path,
                            1,
                            1,
                            f"symlink leaves the spec root {spec_root.path}: it points to {real}; "
                            "Python follows it, so copy the file in or remove the link",
                        )


@rule("FTS016", "warning", "the version an override was made against changed since the lock")
class DriftSinceLock(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        for found in drift(model):
            yield Hit(found.path, found.line, 1, found.message, found.severity)


def _inherits(mf: MirrorFile) -> bool:
    return mf.parsed is not None and mf.parsed.facts().inherits


def _trunk_names(model: Model) -> list[str]:
    """The modules and packages the trunk has (what an override can inherit from)."""
    return [e.name for e in model.tree(model.rdir) if e.kind in ("file", "init")]


@rule(
    "FTS018",
    "warning",
    "a .py file in a spec root that belongs to no mirror tree and is not part of the hook package",
)
class StrayFile(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        trunk = set(_trunk_names(model))
        for spec_root in model.spec_roots:
            if spec_root.kind == "legacy":
                continue  # a whole-tree copy: its other files are the old layout's
            mirror = model.mirror_of(spec_root) if spec_root.mirror else None
            used = _hook_package_files(model, spec_root)
            for path in _python_files(spec_root.path, mirror):
                if path in used:
                    continue
                yield Hit(path, 1, 1, _stray_message(model, spec_root, path, trunk))


def _python_files(top: str, mirror: str | None) -> Iterator[str]:
    """The ``.py`` files below *top*, outside the mirror tree *mirror*."""
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != "__pycache__"
            and os.path.normpath(os.path.abspath(os.path.join(dirpath, d))) != mirror
        )
        for filename in sorted(filenames):
            if filename.endswith(".py"):
                yield os.path.normpath(os.path.join(dirpath, filename))


def _hook_package_files(model: Model, spec_root: SpecRoot) -> set[str]:
    """The hook module and every file of its package that it imports, directly or not."""
    if not spec_root.hooks:
        return set()
    hooks = os.path.normpath(spec_root.hooks)
    used = {hooks}
    if not spec_root.hooks_package or spec_root.hook_name is None:
        return used
    package, folder = spec_root.hook_name, os.path.dirname(hooks)
    pending = [(hooks, package)]
    while pending:
        path, inside = pending.pop()
        source = model.source(path)
        if source.tree is None:
            continue
        targets = [
            t
            for imp in source.imports(inside)
            for t in (imp.module, *(f"{imp.module}.{n}" for n in imp.names))
        ]
        targets += [
            alias.name
            for node in ast.walk(source.tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
        for target in targets:
            if not target.startswith(package + "."):
                continue
            rest = target[len(package) + 1 :].split(".")
            for candidate, sub in (
                (os.path.join(folder, *rest) + ".py", ".".join(rest[:-1])),
                (os.path.join(folder, *rest, "__init__.py"), ".".join(rest)),
            ):
                candidate = os.path.normpath(candidate)
                if candidate not in used and os.path.isfile(candidate):
                    used.add(candidate)
                    pending.append((candidate, ".".join(filter(None, [package, sub]))))
    return used


def _stray_message(model: Model, spec_root: SpecRoot, path: str, trunk: set[str]) -> str:
    """Why *path* never loads, and the mirror path it probably meant."""
    rel = os.path.relpath(path, spec_root.path)
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    where = spec_root.backend or spec_root.path
    text = (
        f"belongs to no mirror tree of {where} and the hook module never imports it, so Python "
        "never loads it"
    )
    declared = read_declaration(spec_root.path) if spec_root.declaration else None
    if declared is not None and "mirror" in declared.given and declared.mirror is None:
        return f"{text} ({declared.path} declares no mirror tree)"
    mirror = os.path.join(spec_root.path, model.root)
    if spec_root.mirror is not None:
        mirror = model.mirror_of(spec_root)
    if parts and ".".join([model.root, *parts]) in trunk:
        # The root package's level left out: spec/sub/calc.py for spec/R/sub/calc.py.
        return f"{text}; did you mean {os.path.join(mirror, rel)}?"
    if len(parts) > 1 and close_matches(parts[0], [model.root]):
        # The root package's name misspelled.
        return f"{text}; did you mean {os.path.join(mirror, *rel.split(os.sep)[1:])}?"
    return f"{text}; an override goes into the mirror tree {mirror}, laid out like the trunk"


# The rules kept in modules of their own register when this registry is imported.
from . import rules_hooks, rules_inherit  # noqa: E402, F401
