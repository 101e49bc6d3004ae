"""The rules of ``flagtree-spec check``: one small class per code, in a registry.

A rule is declared with its code, default severity and one-line summary::

    @rule("FTS008", "info", "module added by the backend")
    class AddedModule(Rule):
        def file(self, mf: MirrorFile) -> Iterator[Hit]: ...

and looks at one file of a mirror tree at a time (:meth:`Rule.file`, given
the :class:`~flagtree_spec._static.check.MirrorFile` that says what the import
system does with it), at the whole model once (:meth:`Rule.model`), or both.
It yields :class:`Hit` objects; the check turns them into findings carrying
its code and severity.  Adding a code is adding one class here (and its row
in ``docs/check.md``).
"""

from __future__ import annotations

import ast
import os
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Callable, ClassVar, NamedTuple, Optional

from .._config import read_declaration
from .._discovery import SpecRoot, close_matches
from .drift import drift
from .hooks import DEFINED, NOT_DEFINED, HookModule, first_hook
from .model import Model, Module
from .signatures import bind_error
from .source import Source, resolve_relative

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


def _shown(names: list[str]) -> str:
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _sources(model: Model) -> Iterator[tuple[Module, Source]]:
    """Every module that loads from a source file, with that source."""
    for module in model.modules():
        if module.file is not None and module.file.endswith(".py"):
            yield module, model.source(module.file)


def _declaration_hint(model: Model, spec_root: SpecRoot) -> str:
    """For a spec root without a declaration whose hook package holds its mirror tree."""
    if spec_root.declaration is not None or spec_root.hooks is None or spec_root.mirror is None:
        return ""
    folder = os.path.dirname(spec_root.hooks)
    mirror = model.mirror_of(spec_root)
    if not (mirror == folder or mirror.startswith(folder + os.sep)):
        return ""
    hooks = os.path.relpath(spec_root.hooks, spec_root.path).replace(os.sep, "/")
    return (
        f". If {mirror} is a tree of hook fragments rather than overrides (usually the case), "
        f"declare it in {os.path.join(spec_root.path, 'flagtree_spec.json')}: "
        f'{{"mirror": null, "hooks": "{hooks}"}}'
    )


def _dispatches(model: Model, module: Module, source: Source, name: str, depth: int = 4) -> bool:
    """Whether bare name *name* of *module* certainly calls hooks the way ``spec()`` does:
    flagtree_spec's ``spec``, ``for_root(...).spec``, a ``def spec(hook, *args,
    **kwargs)`` that forwards them, or such a name imported from another trunk module."""
    found = source.dispatchers().get(name)
    if found is None or depth == 0:
        return False
    if found[0] in ("flagtree_spec", "for_root"):
        return found[1] == "spec"
    if found[0] == "forwarder":
        return True
    _, level, target, imported = found
    assert isinstance(level, int) and isinstance(target, str) and isinstance(imported, str)
    package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
    absolute = resolve_relative(level, target or None, package)
    if absolute is None or absolute.partition(".")[0] != model.root:
        return False
    other = model.resolve(absolute)
    if other.file is None or not other.file.endswith(".py"):
        return False
    return _dispatches(model, other, model.source(other.file), imported, depth - 1)


def _definition_elsewhere(model: Model, spec_root: SpecRoot, name: str) -> str:
    """``path:line`` of a top-level ``def``/``class`` *name* in the spec root, if any."""
    for dirpath, dirnames, filenames in os.walk(spec_root.path):
        dirnames[:] = sorted(d for d in dirnames if d.isidentifier())
        for filename in sorted(f for f in filenames if f.endswith(".py")):
            path = os.path.join(dirpath, filename)
            if path == spec_root.hooks:
                continue
            tree = model.source(path).tree
            for node in tree.body if tree is not None else ():
                if (
                    isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.name == name
                ):
                    return f"{path}:{node.lineno}"
    return ""


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


@rule("FTS002", "error", "package-init override that hides trunk modules, or that never loads")
class PackageInitOverride(Rule):
    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        path, module = mf.entry.path, mf.module
        if mf.state == "root-init" and os.path.normpath(path) not in mf.model.hook_fragments():
            yield Hit(
                path,
                1,
                1,
                f"override of the root package's own __init__ ({mf.entry.name}) never loads: the "
                "root package is found on sys.path, never in a mirror; move its code into a module",
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
            if hidden:
                yield Hit(
                    path,
                    1,
                    1,
                    f"package-init override of {module.name} does not call spec_path(__path__), "
                    f"so its __path__ is the mirror folder only and trunk modules "
                    f"{_shown(hidden)} cannot be imported; add 'spec_path(__path__)' to it",
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


@rule("FTS007", "warning", "override derives paths from __file__")
class OwnFile(Rule):
    """``__file__`` in an override names its own file, or after ``inherit()`` the lower one.

    In an override that calls ``inherit(globals())``, ``__file__`` is the
    override's own file before the call and the lowest version that ran after
    it, so a read at module level after the call, and any read in a function
    body (which runs later), sees the lower file.
    """

    _ADVICE = (
        "use os.path.dirname(__spec__.origin) for the override's own folder and "
        "flagtree_spec.trunk_path(__package__, ...) for trunk data"
    )

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        source = mf.parsed
        if mf.state != "live" or source is None or "__file__" not in source.text:
            return
        assert source.tree is not None
        call = _first_inherit(source.tree)
        lower = ""
        for node, in_function in sorted(
            _file_reads(source.tree), key=lambda r: (r[0].lineno, r[0].col_offset)
        ):
            if call is None:
                message = (
                    "derives a path from its own __file__, which is in the mirror tree; use "
                    "flagtree_spec.trunk_path(__package__, ...) to reach trunk files"
                )
            elif not in_function and (node.lineno, node.col_offset) < call:
                message = (
                    "reads __file__ before inherit(), where it is this override's own file in "
                    f"the mirror tree (after the call it is the lower version's); {self._ADVICE}"
                )
            else:
                where = (
                    "in a function, which runs after inherit()"
                    if in_function
                    else "after inherit()"
                )
                lower = lower or _lowest_that_runs(mf)
                message = (
                    f"reads __file__ {where}: it is then the lower version's file ({lower}), "
                    f"not this override's; {self._ADVICE}"
                )
            yield Hit(mf.entry.path, node.lineno, node.col_offset + 1, message)


def _first_inherit(tree: ast.Module) -> Optional[tuple[int, int]]:
    """Position of the first ``inherit(...)`` call that runs at import time, if any."""
    found: list[tuple[int, int]] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # its body runs when called, not at import time
        if isinstance(node, ast.Call) and _call_name(node.func) == "inherit":
            found.append((node.lineno, node.col_offset))
        pending.extend(ast.iter_child_nodes(node))
    return min(found) if found else None


def _file_reads(tree: ast.Module) -> Iterator[tuple[ast.Name, bool]]:
    """Every read of ``__file__``, and whether it sits in a function body (runs when called).

    Decorators, default values and annotations of a function run where it is
    defined; its body, and a lambda's, run when it is called.
    """
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, in_function = pending.pop()
        if isinstance(node, ast.Name) and node.id == "__file__":
            yield node, in_function
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = {id(b) for b in body}
            pending.extend(
                (child, in_function or id(child) in inner) for child in ast.iter_child_nodes(node)
            )
        else:
            pending.extend((child, in_function) for child in ast.iter_child_nodes(node))


def _lowest_that_runs(mf: MirrorFile) -> str:
    """The file ``__file__`` names after this override's ``inherit()``: the end of the chain."""
    chain = mf.module.candidates
    if not chain:
        return "none: inherit() fails here, there is no lower version"
    index = 0
    while index + 1 < len(chain) and chain[index].endswith(".py"):
        lower = mf.model.source(chain[index])
        if lower.tree is None or not lower.facts().inherits:
            break
        index += 1
    lowest = chain[index]
    return _rel(mf.model, lowest) if mf.model.origin_of(lowest) is not None else lowest


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


@rule(
    "FTS009",
    "warning",
    "hook called by trunk and defined by no backend (info), or the reverse",
)
class UnmatchedHook(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        if not model.spec_roots:
            return
        hook_modules = [hooks for _, hooks in model.hook_modules()]
        called: set[str] = set()
        for module, source in _sources(model):
            assert module.file is not None
            for call in source.hook_calls():
                called.add(call.hook)
                if first_hook(hook_modules, call.hook)[0] == NOT_DEFINED:
                    yield Hit(
                        module.file,
                        call.line,
                        call.col,
                        f"hook {call.hook!r} is called here and defined by no backend of the "
                        "stack (fine for an optional hook)",
                        "info",
                    )
        for hooks in hook_modules:
            for name, binding in hooks.declared():
                if name not in called and binding.kind in ("function", "lambda", "class"):
                    yield Hit(
                        binding.path,
                        binding.line,
                        binding.col,
                        f"hook {name!r} is defined here and never called by spec({name!r}) or "
                        f"spec_func({name!r}); a typo?",
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


@rule("FTS012", "error", "a trunk hook call whose arguments the hook's signature cannot accept")
class HookCallArguments(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        hook_modules = [hooks for _, hooks in model.hook_modules()]
        if not hook_modules:
            return
        for module, source in _sources(model):
            assert module.file is not None
            for call in source.hook_calls():
                # Judged only where the callee certainly dispatches and the arguments are known.
                if not call.callee or call.unpacked:
                    continue
                state, binding, _ = first_hook(hook_modules, call.hook)
                if state != DEFINED or binding is None or binding.signature is None:
                    continue  # no hook, a class, a decorated def, or any other callable
                error = bind_error(binding.signature, call.positional, call.keywords)
                if error is None or not _dispatches(model, module, source, call.callee):
                    continue
                yield Hit(
                    module.file,
                    call.line,
                    call.col,
                    f"{call.callee}({call.hook!r}, ...): the hook "
                    f"{binding.origin}{binding.signature.describe()} at "
                    f"{binding.path}:{binding.line} {error}; change the call or the hook's "
                    "parameters",
                )


@rule("FTS013", "error", "override also imported through the hook package")
class OverrideThroughHookPackage(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        live = {
            os.path.normpath(entry.path): entry.name
            for _, entry in model.mirror_files()
            if entry.kind != "folder"
            and os.path.normpath(model.resolve(entry.name).file or "")
            == os.path.normpath(entry.path)
        }
        fragments = model.hook_fragments()
        for spec_root, hooks in model.hook_modules():
            yield from self.loaded(model, spec_root, hooks, live)
            if spec_root.hooks_package and spec_root.mirror is not None:
                assert spec_root.hooks is not None
                yield from self.hook_package(
                    model, spec_root, os.path.dirname(spec_root.hooks), fragments
                )

    def loaded(
        self, model: Model, spec_root: SpecRoot, hooks: HookModule, live: dict[str, str]
    ) -> Iterator[Hit]:
        """Modules the hook package loads that also load as overrides."""
        for loaded in hooks.files():
            assert loaded.path is not None
            name = live.get(os.path.normpath(loaded.path))
            if name is None or loaded.key == "":
                continue
            yield Hit(
                loaded.importer,
                loaded.line,
                loaded.col,
                f"imports {loaded.path} through the hook package (as its module {loaded.key}), "
                f"and it also loads as the override {name}: two module objects of one file, two "
                f"copies of every class; import {name} instead"
                + _declaration_hint(model, spec_root),
            )

    def hook_package(
        self, model: Model, spec_root: SpecRoot, folder: str, fragments: frozenset[str]
    ) -> Iterator[Hit]:
        """Files of the hook package's folder that the model did not see load (imported
        some other way) and that import an override through the hook package's name."""
        mirror = model.mirror_of(spec_root)
        rel = os.path.relpath(mirror, folder)
        if rel.startswith(os.pardir) or os.path.isabs(rel):
            return
        hook = spec_root.hook_name or "__hooks__"
        prefix = ".".join([hook, *rel.split(os.sep)])
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d.isidentifier() and os.path.join(dirpath, d) != mirror and d != "__pycache__"
            )
            parts = os.path.relpath(dirpath, folder).split(os.sep)
            package = ".".join([hook, *(p for p in parts if p != os.curdir)])
            for filename in sorted(f for f in filenames if f.endswith(".py")):
                path = os.path.join(dirpath, filename)
                source = model.source(path)
                if source.tree is None or os.path.normpath(path) in fragments:
                    continue
                for imp in source.imports(package):
                    for target in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)):
                        if not target.startswith(prefix + "."):
                            continue
                        rest = target[len(prefix) + 1 :].split(".")
                        file = os.path.join(mirror, *rest)
                        if os.path.isfile(file + ".py") or os.path.isfile(
                            os.path.join(file, "__init__.py")
                        ):
                            name = ".".join([model.root, *rest])
                            yield Hit(
                                path,
                                imp.line,
                                imp.col,
                                f"imports the override {name} through the hook package as "
                                f"{target}: two module objects of one file, two copies of every "
                                f"class; import {name} instead"
                                + _declaration_hint(model, spec_root),
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


@rule("FTS015", "error", "the hook module's __all__ names a hook it never binds")
class UnboundHookInAll(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        for spec_root, hooks in model.hook_modules():
            entries = hooks.all_entries()
            assert spec_root.hooks is not None
            if entries is None or hooks.broken is not None or hooks.uncertain:
                continue
            folder = os.path.dirname(spec_root.hooks)
            for name, line, col in entries:
                if hooks.answer(name)[1] is not None or hooks.answer(name)[0] != NOT_DEFINED:
                    continue  # bound (maybe to no hook), or unknown
                if spec_root.hooks_package and model.folder(folder).find(name) is not None:
                    continue  # a submodule: 'from hook import *' imports it
                elsewhere = _definition_elsewhere(model, spec_root, name)
                fix = (
                    f"{elsewhere} defines it: import it into the hook module"
                    if elsewhere
                    else "define or import it, or drop it from __all__"
                )
                yield Hit(
                    spec_root.hooks,
                    line,
                    col,
                    f"__all__ names hook {name!r}, which the hook module never binds, so "
                    f"spec({name!r}) finds nothing and 'from ... import *' raises "
                    f"AttributeError; {fix}",
                )


@rule("FTS016", "warning", "the version an override was made against changed since the lock")
class DriftSinceLock(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        for found in drift(model):
            yield Hit(found.path, found.line, 1, found.message, found.severity)


def _inherits(mf: MirrorFile) -> bool:
    return mf.parsed is not None and mf.parsed.facts().inherits


def _inherit_line(source: Source) -> int:
    """The line of the first top-level ``inherit(...)`` call (1 when it is elsewhere)."""
    assert source.tree is not None
    for node in source.tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and _call_name(node.value.func) == "inherit"
        ):
            return node.lineno
    return 1


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _trunk_names(model: Model) -> list[str]:
    """The modules and packages the trunk has (what an override can inherit from)."""
    return [e.name for e in model.tree(model.rdir) if e.kind in ("file", "init")]


def _close_trunk_module(model: Model, name: str) -> list[str]:
    """Trunk modules whose name is close to *name*: in the same package, else the same
    module name in another package."""
    parent, _, last = name.rpartition(".")
    names = [n for n in _trunk_names(model) if n != model.root]
    siblings = {n.rpartition(".")[2]: n for n in names if n.rpartition(".")[0] == parent}
    found = [siblings[m] for m in close_matches(last, list(siblings))]
    return found or [n for n in names if n.rpartition(".")[2] == last]


@rule("FTS017", "error", "a mirror module calls inherit() but has no lower version")
class InheritWithoutLower(Rule):
    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state != "live" or mf.lower is not None or not _inherits(mf):
            return
        assert mf.parsed is not None
        name, model = mf.entry.name, mf.model
        what = (
            f"{name} calls inherit(globals()) but has no lower version (no trunk module, no "
            "lower backend's override), so importing it raises SpecError"
        )
        if mf.entry.kind == "init":
            what += (
                "; a mirror folder's __init__.py is a package-init override, and a mirror folder "
                "needs none: delete it, or the inherit() call"
            )
        else:
            matches = _close_trunk_module(model, name)
            if matches:
                lower = model.trunk_only(matches[0])
                what += f"; did you mean {matches[0]} ({lower})? Rename this file"
            else:
                what += "; for a module trunk does not have, delete the inherit() call"
        yield Hit(mf.entry.path, _inherit_line(mf.parsed), 1, what)


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
