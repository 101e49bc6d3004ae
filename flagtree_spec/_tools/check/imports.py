"""The check rules about imports: FTS004, an import that fails (a module that
exists nowhere, or a name the version which loads does not define), and
FTS019, a submodule imported before its package's ``spec_path`` call.  They
register in :mod:`.registry`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator

from ..model.facts import MODULE_NAMES
from ..model.hooks import HookModule
from ..model.model import Model, Module
from ..model.source import Source, resolve_relative
from ..model.startup import describe
from .registry import Hit, Rule, _sources, rule

__all__: list[str] = []


_HOOKS = "<hook package>"  # the hook package's name, for resolving its relative imports


def _package_of(module: Module) -> str:
    return module.name if module.kind == "package" else module.name.rpartition(".")[0]


def _failures(
    model: Model, source: Source, package: str, skip_trunk_targets: bool = False
) -> Iterator[tuple[int, int, str, str, str]]:
    """Every import of *source* (in package *package*) that fails with the backend
    stack active: ``(line, col, module, name, why)``; *name* is empty when the module
    itself is missing.  Imports guarded by ``except ImportError`` (or only for type
    checkers, or under ``__main__``) and imports from outside the root package are
    not judged, nor names imported from a file that does not parse (FTS010 says it).
    With *skip_trunk_targets*, names imported from trunk files are not judged."""
    root = model.root
    for level, module, names, line, col, guarded in source.facts().imports:
        if guarded:
            continue
        target = resolve_relative(level, module, package)
        if target is None:
            if level and package.partition(".")[0] == root:
                yield line, col, "." * level + (module or ""), "", "beyond the root package"
            continue
        if target.partition(".")[0] != root:
            continue
        found = model.resolve(target)
        if found.kind == "missing":
            if not _provided_by_build(model, target):
                yield line, col, target, "", found.reason
            continue
        if found.file is None or not found.file.endswith(".py"):
            continue
        if skip_trunk_targets and found.origin is None:
            continue
        other = model.source(found.file)
        if other.error is not None:
            continue  # does not parse: FTS010, and what it defines is unknown
        facts = other.facts()
        if facts.defines_all:
            continue
        # "from . import x" in a package's own __init__ binds x only by importing
        # the submodule: the statement itself does not define it.
        own = os.path.normpath(found.file) == os.path.normpath(source.path)
        defined = facts.defined - facts.imported if own else facts.defined
        for name in names:
            if name == "*" or name in defined or _import_system_binds(found, name):
                continue
            submodule = model.resolve(f"{target}.{name}")
            if submodule.kind != "missing":
                continue  # a submodule
            if own:
                yield line, col, submodule.name, "", submodule.reason
            else:
                yield line, col, target, name, found.file
    for name, line, col, guarded in source.facts().plain_imports:
        if guarded or name.partition(".")[0] != root:
            continue
        parts = name.split(".")
        for end in range(2, len(parts) + 1):
            found = model.resolve(".".join(parts[:end]))
            if found.kind == "missing":
                if not _provided_by_build(model, found.name):
                    yield line, col, found.name, "", found.reason
                break


def _import_system_binds(module: Module, name: str) -> bool:
    """Whether *name* is bound in *module* before its code runs (``from .. import
    __path__`` reads the package's own path)."""
    return name in MODULE_NAMES or (name == "__path__" and module.kind == "package")


# Per model: the modules a build provides (see _built).
_BUILT: weakref.WeakKeyDictionary[Model, frozenset[str]] = weakref.WeakKeyDictionary()


def _built(model: Model) -> frozenset[str]:
    """The modules trunk itself imports that its source tree does not hold: the build
    provides them (``triton._C.libtriton``, compiled by it)."""
    found = _BUILT.get(model)
    if found is not None:
        return found
    names: set[str] = set()
    for entry in model.tree(model.rdir):
        if entry.kind not in ("file", "init") or not entry.path.endswith(".py"):
            continue
        source = model.source(entry.path)
        if source.error is not None:
            continue
        package = entry.name if entry.kind == "init" else entry.name.rpartition(".")[0]
        targets = [imp.module for imp in source.imports(package)]
        targets += [name for name, *_ in source.facts().plain_imports]
        for target in targets:
            if target.partition(".")[0] == model.root and not _in_trunk(model, target):
                names.add(target)
    found = _BUILT[model] = frozenset(names)
    return found


def _in_trunk(model: Model, name: str) -> bool:
    """Whether the trunk's source tree holds module *name* (a file, package or folder)."""
    folder = model.rdir
    for part in name.split(".")[1:]:
        hit = model.folder(folder).find(part)
        if hit is None:
            return False
        folder = os.path.join(folder, part)
    return True


def _provided_by_build(model: Model, name: str) -> bool:
    """Whether missing module *name* is one a build provides, so that importing it is
    not judged: a module trunk itself imports and its source tree lacks (or one below
    such a module), or one in the installed layout ``R.backends``, where the build
    puts each backend's package (``triton.backends.mlu`` for third_party/cambricon)."""
    if name.startswith(f"{model.root}.backends."):
        return True
    built = _built(model)
    parts = name.split(".")
    return any(".".join(parts[:end]) in built for end in range(2, len(parts) + 1)) or any(
        b.startswith(name + ".") for b in built
    )


def _what(module: str, name: str, why: str) -> str:
    if name:
        return f"imports {name!r} from {module}, which {why} does not define"
    return f"imports {module}, which exists nowhere ({why})"


def _hook_package_name(hooks: HookModule, key: str, path: str) -> str:
    """The package a file of the hook package resolves its relative imports in."""
    if key == "":
        return _HOOKS if hooks.package else ""
    full = f"{_HOOKS}.{key}"
    return full if os.path.basename(path).startswith("__init__.") else full.rpartition(".")[0]


@rule("FTS004", "error", "an import fails: a module that exists nowhere, or a name it lacks")
class UndefinedImport(Rule):
    """## What it does
    Resolves every import of every file that loads with the backend stack
    active (overrides, added modules, the lower versions `inherit()` runs, the
    hook module and its fragments) and reports a module that exists nowhere,
    or a name that the module which loads does not define, including a name
    that trunk imports from a module the backend overrides.

    ## Why is this bad?
    The import raises `ImportError` at run time, on the backend only, often far
    from the override that dropped the name.

    ## Example
    ```python
    # python/R/language/semantic.py (trunk)
    from .core import async_task

    # third_party/B/backend/spec/R/language/core.py: defines no async_task
    def dot(a, b): ...
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/language/core.py
    from flagtree_spec import inherit

    inherit(globals())  # the trunk's async_task and the rest stay defined


    def dot(a, b): ...
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        reported: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for module, source in _sources(model):
            assert module.file is not None
            if source.error is not None:
                if module.origin is None:
                    model.problem(source.error)
                continue
            package = _package_of(module)
            if module.origin is not None:
                # An override or an added module: every import it makes.
                for line, col, target, name, why in _failures(model, source, package):
                    fails = describe(model, module.file, line)
                    yield Hit(module.file, line, col, _what(target, name, why) + fails)
                yield from self.inherited(model, module, source)
                continue
            # Trunk files are not needed again as trees; keeping thousands of
            # them alive makes the cyclic garbage collector rescan them.
            source.release()
            for level, written, names, line, _, guarded in source.facts().imports:
                if guarded:
                    continue
                imported = resolve_relative(level, written, package)
                if imported is None or imported.partition(".")[0] != model.root:
                    continue
                loads = model.resolve(imported)
                if loads.file is None or not loads.file.endswith(".py"):
                    continue
                if loads.origin is None:
                    continue  # trunk importing trunk is not the backend's business
                other = model.source(loads.file)
                if other.error is not None:
                    continue  # FTS010 reports it; what it defines is unknown
                facts = other.facts()
                if facts.defines_all:
                    continue
                for name in names:
                    if name == "*" or name in facts.defined or _import_system_binds(loads, name):
                        continue
                    if model.resolve(f"{imported}.{name}").kind != "missing":
                        continue  # a submodule
                    reported.setdefault((loads.file, name), []).append((module.file, line))
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
            for loaded in hooks.files():
                assert loaded.path is not None
                if not loaded.path.endswith(".py"):
                    continue
                source = model.source(loaded.path)
                if source.error is not None:
                    continue  # FTS010
                package = _hook_package_name(hooks, loaded.key, loaded.path)
                for line, col, target, name, why in _failures(model, source, package):
                    what = "hook module" if loaded.key == "" else "hook package module"
                    yield Hit(loaded.path, line, col, f"the {what} {_what(target, name, why)}")
        for (path, name), sites in sorted(reported.items()):
            more = f" and {len(sites) - 1} more" if len(sites) > 1 else ""
            importer, line = sites[0]
            yield Hit(
                path,
                1,
                1,
                f"does not define {name!r}, which {importer}:{line}{more} imports from it"
                f"{describe(model, importer, line)}; define it or call inherit(globals())",
            )

    def inherited(self, model: Model, module: Module, source: Source) -> Iterator[Hit]:
        """The imports of the lower versions that ``inherit()`` runs in *module*'s
        namespace (each that inherits runs the next one), judged as *module*'s own."""
        if not source.facts().inherits:
            return
        assert module.file is not None
        line = source.facts().inherit_line or 1
        package = _package_of(module)
        for lower in module.candidates:
            if not lower.endswith(".py"):
                break
            other = model.source(lower)
            if other.error is not None:
                break
            # Names from trunk files are trunk's business, as for trunk files that load.
            for at, _, target, name, why in _failures(
                model, other, package, skip_trunk_targets=True
            ):
                yield Hit(
                    module.file,
                    line,
                    1,
                    f"inherit() runs {lower}, whose line {at} {_what(target, name, why)}: "
                    f"importing {module.name} fails{describe(model, lower, at)}",
                )
            if not other.facts().inherits:
                break


@rule(
    "FTS019",
    "error",
    "a package init imports a submodule before its spec_path call, so its override never loads",
)
class ImportBeforeSpecPath(Rule):
    """## What it does
    Finds a trunk package `__init__` that imports one of its submodules before
    its `spec_path(__path__)` call (directly, or through the modules those
    imports run), while a mirror tree overrides that submodule.

    ## Why is this bad?
    Until the call, the package's `__path__` is its own folder: the submodule
    loads from trunk and stays loaded, so its override never runs.

    ## Example
    ```python
    # python/R/__init__.py (trunk)
    from . import jit
    from flagtree_spec import spec_path

    spec_path(__path__)
    ```

    ## Use instead
    ```python
    # python/R/__init__.py (trunk)
    from flagtree_spec import spec_path

    spec_path(__path__)
    from . import jit
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        for module in model.modules():
            early = module.early
            if early is None or early.shadowed is None:
                continue
            via = f" (through {', '.join(early.via)})" if early.via else ""
            yield Hit(
                early.init,
                early.line,
                early.col,
                f"imports {module.name}{via} before the spec_path call (line {early.call}), "
                f"so it loads from {os.path.dirname(early.init)} and the override "
                f"{early.shadowed} never loads; move the spec_path call above this import",
            )
