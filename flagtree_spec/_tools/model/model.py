"""The static model: which file the import system would load for every module.

Given a trunk (the root package's folder) and the spec roots of a backend
stack, the model predicts, without importing or executing anything, what
Python's path finder does once the runtime has put the mirror directories on
the packages' ``__path__``:

* within one folder a package folder (with an ``__init__``) beats an
  extension module beats ``.py`` beats ``.pyc``; across the folders of a
  ``__path__`` the first folder that has the module wins, and a folder
  without ``__init__`` is only a namespace portion, used when no folder has
  a module or a package of that name;
* a package is specialised when its ``__init__`` that loads calls
  ``spec_path(__path__)`` (the guarded ``try``/``else`` idiom counts; so does
  a package-init override that runs ``inherit(globals())`` on an ``__init__``
  that calls it), or in auto mode; namespace sub-packages follow their
  parent's path;
* ``spec_path`` puts the mirror directories of the package first, then its
  trunk directories; for a package-init override the trunk directories are
  derived from the parent's, exactly as the runtime does;
* names excluded by ``spec_path(exclude=...)`` or by a declaration load from
  the trunk only (or not at all, when the trunk has no such module).

Every file is read, decoded (PEP 263) and parsed at most once; the facts the
checks need are extracted from each syntax tree in one pass.
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator, Sequence
from typing import Optional

from ... import _entrypoints
from ..._config import is_module_name, parse_stack, read_marker
from ..._discovery import SpecRoot, discover, explicit_roots
from ..._errors import SpecError, SpecWarning
from .backends import Absent, absent_backends
from .files import Files, under
from .finder import Entry, Folder, Found
from .hooks import HookModule
from .inherited import Lower, lower_versions
from .inputs import InputError, backend_roots, root_package
from .modules import Early, Module
from .repo import RepoError, detect_repo, missing
from .settings import Settings
from .source import Source, SpecPathCall, Statement, resolve_relative

__all__ = [
    "Early",
    "Entry",
    "InputError",
    "Model",
    "Module",
    "backend_roots",
    "detect_repo",
    "load",
]


class Model(Files):
    """Trunk plus spec roots; answers which file loads for each module.

    *rdir* is the folder of root package *root*, a package folder (:func:`load`
    checks it).
    """

    def __init__(
        self,
        root: str,
        rdir: str,
        spec_roots: Sequence[SpecRoot],
        *,
        stack: tuple[str, ...] = (),
        stack_source: str = "",
        auto: bool = False,
    ) -> None:
        super().__init__(root, rdir, spec_roots)
        self.stack = stack
        self.stack_source = stack_source
        self.auto = auto
        # Whether a declaration excludes names, and whether a package resolved so far
        # excludes some with its spec_path call: without either, nothing is dropped.
        self._declared_exclusions = any(r.exclude for r, _ in self.mirrors)
        self._call_exclusions = False
        # Backends named on the command line that have no spec root (see .backends).
        self.absent: list[Absent] = []
        self._modules: dict[str, Module] = {}
        self._early: dict[str, dict[str, tuple[Statement, tuple[str, ...]]]] = {}
        self._hook_modules: Optional[list[tuple[SpecRoot, HookModule]]] = None
        self._fragments: Optional[frozenset[str]] = None
        self._all: Optional[list[Module]] = None
        self._lower: dict[str, list[Lower]] = {}

    # -- hook modules

    def hook_modules(self) -> list[tuple[SpecRoot, HookModule]]:
        """The hook module of every spec root that has one, highest priority first,
        with the names it binds (see :mod:`.hooks`), resolved once."""
        if self._hook_modules is None:
            self._hook_modules = [
                (r, HookModule(r.hooks, r.hooks_package, r.hook_name, self.tree_of, self.folder))
                for r in self.spec_roots
                if r.hooks is not None
            ]
        return self._hook_modules

    def hook_fragments(self) -> frozenset[str]:
        """The files (normalised paths) that load as modules of a hook package, when it
        is imported or when its functions run."""
        if self._fragments is None:
            self._fragments = frozenset(
                os.path.normpath(loaded.path)
                for _, hooks in self.hook_modules()
                for loaded in (*hooks.files(), *hooks.later_files())
                if loaded.path is not None
            )
        return self._fragments

    def foreign_spec_path(self, init: str, package: str) -> Optional[str]:
        """The file that defines the ``spec_path`` the ``__init__`` *init* of *package*
        imports, when that is not this library's; ``None`` when it is (directly, or
        re-exported by a forwarding module such as ``triton/flagtree_spec.py``) or
        when the model cannot tell.
        """
        tree = self.tree_of(init) if init.endswith(".py") else None
        if tree is None:
            return None
        for node in _top_level(tree.body):
            if not isinstance(node, ast.ImportFrom) or not any(
                (a.asname or a.name) == "spec_path" for a in node.names
            ):
                continue
            if node.level == 0 and (node.module or "").partition(".")[0] == "flagtree_spec":
                return None
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            target = self.resolve(name).file if name.partition(".")[0] == self.root else None
            lower = self.tree_of(target) if target and target.endswith(".py") else None
            if lower is None:
                return None
            for item in _top_level(lower.body):
                if isinstance(item, ast.FunctionDef) and item.name == "spec_path":
                    return target
            return None
        return None

    def _extends_own_path(self, init: str) -> bool:
        """Whether the package init *init* puts folders on its own ``__path__``."""
        if not init.endswith(".py"):
            return False
        source = self.source(init)
        return source.error is None and source.facts().extends_path

    def _calls_spec_path(
        self, name: str, init: str, lower: Sequence[str]
    ) -> Optional[SpecPathCall]:
        """The spec_path call a package's ``__init__`` makes (directly or through inherit)."""
        if not init.endswith(".py"):
            return SpecPathCall(0, ()) if self.auto else None
        source = self.source(init)
        if source.error is not None:
            if self.origin_of(init) is None:
                self.problem(source.error)
            return SpecPathCall(0, ()) if self.auto else None
        facts = source.facts()
        call = facts.spec_path
        if facts.inherits and lower:
            below = self._calls_spec_path(name, lower[0], lower[1:])
            if below is not None:
                call = (
                    below if call is None else SpecPathCall(call.line, call.exclude + below.exclude)
                )
        if call is None and self.auto:
            return SpecPathCall(0, ())
        return call

    # -- resolution

    def _declaration_excludes(self, name: str, spec_root: SpecRoot) -> bool:
        return any(name == e or name.startswith(e + ".") for e in spec_root.exclude)

    def user_excluded(self, name: str) -> bool:
        """Whether a spec_path(exclude=...) call of an ancestor package excludes *name*."""
        parent = name.rpartition(".")[0]
        while parent:
            module = self._modules.get(parent)
            if module is not None and any(
                name == e or name.startswith(e + ".") for e in module.exclude
            ):
                return True
            parent = parent.rpartition(".")[0]
        return False

    def dropped(self, name: str) -> list[str]:
        """The mirror folders that may not provide *name* (its exclusions)."""
        if not (self._call_exclusions or self._declared_exclusions):
            return []
        if self.user_excluded(name):
            return [m for _, m in self.mirrors]
        return [m for r, m in self.mirrors if self._declaration_excludes(name, r)]

    def resolve(self, name: str) -> Module:
        """The model's answer for the dotted module *name*."""
        found = self._modules.get(name)
        if found is None:
            found = self._resolve(name)
            self._modules[name] = found
        return found

    def _missing(self, name: str, reason: str) -> Module:
        return Module(name, "missing", None, (), None, (), (), False, (), reason)

    def _resolve(self, name: str) -> Module:
        parts = name.split(".")
        if parts[0] != self.root or not is_module_name(name):
            return self._missing(name, f"{name!r} is not inside root package {self.root!r}")
        if len(parts) == 1:
            init = self.folder(self.rdir).init()
            assert init is not None
            return self._package(name, (), init, self.rdir, (), None)
        parent = self.resolve(".".join(parts[:-1]))
        if parent.kind == "missing":
            return self._missing(name, f"its parent {parent.name} does not import")
        if parent.kind == "module":
            return self._missing(name, f"its parent {parent.name} is a module, not a package")
        drop = self.dropped(name)
        entries = (
            [e for e in parent.path if not any(under(e, m) for m in drop)] if drop else parent.path
        )
        last = parts[-1]
        chain, portions = self._find(entries, last)
        early: Optional[Early] = None
        before = self.imported_early(parent).get(last) if parent.specialised else None
        if before is not None and parent.file is not None:
            # Imported while the package's __path__ was its own folder only: the
            # module object (and a package's __path__) is fixed from then on.  A
            # namespace package recomputes its path, so it follows the call.
            statement, via = before
            first_chain, first_portions = self._find(self._first_path(parent, name), last)
            if first_chain:
                later = chain[0].file if chain else None
                shadowed = later if later != first_chain[0].file else None
                early = Early(
                    parent.file,
                    statement.line,
                    statement.col,
                    self._spec_path_line(parent),
                    via,
                    shadowed,
                )
                chain, portions = first_chain, first_portions
            elif first_portions and chain:
                # A namespace package then; its path is recomputed later, but a
                # regular package found first in a folder keeps it as it was.
                early = Early(
                    parent.file,
                    statement.line,
                    statement.col,
                    self._spec_path_line(parent),
                    via,
                    chain[0].file,
                )
                chain, portions = [], first_portions
        if not chain:
            if portions:
                trunk = self._derived_trunk(parent, last)
                return Module(
                    name, "namespace", None, (), None, tuple(portions), trunk, False, (), "", early
                )
            return self._missing(name, "no folder on its parent's __path__ has it")
        first = chain[0]
        below = tuple(h.file for h in chain[1:] if h.file) if len(chain) > 1 else ()
        if first.kind == "module":
            assert first.file is not None
            return Module(
                name,
                "module",
                first.file,
                below,
                self.origin_of(first.file),
                (),
                (),
                False,
                (),
                "",
                early,
            )
        assert first.file is not None
        found = self._package(name, tuple(parts[1:]), first.file, first.folder, below, parent)
        if found.specialised:
            for child, (statement, _) in self.imported_early(found).items():
                if not statement.guarded and not self._first_path(found, f"{name}.{child}"):
                    return self._missing(
                        name,
                        f"its __init__ ({found.file}:{statement.line}) imports {name}.{child} "
                        "before its spec_path call, when the package's own folder, from which "
                        f"{child} is excluded, is its whole __path__",
                    )
        return found._replace(early=early) if early is not None else found

    def _first_path(self, package: Module, name: str) -> list[str]:
        """The ``__path__`` of *package* before its ``spec_path`` call, as it serves
        submodule *name*: its own folder, unless a declaration (or the ``spec_path``
        call of a package above it) excludes *name* from the mirror that holds it."""
        assert package.file is not None
        folder = os.path.dirname(package.file)
        drop = [m for r, m in self.mirrors if self._declaration_excludes(name, r)]
        above = package.name.rpartition(".")[0]
        while above and not drop:
            module = self._modules.get(above)
            if module is not None and any(
                name == e or name.startswith(e + ".") for e in module.exclude
            ):
                drop = [m for _, m in self.mirrors]
            above = above.rpartition(".")[0]
        if package.name == self.root:
            drop = []  # nothing is excluded before the root package's first call
        return [] if any(under(folder, m) for m in drop) else [folder]

    def _find(self, entries: Sequence[str], last: str) -> tuple[list[Found], list[str]]:
        """What the path finder finds for *last* in each of *entries*: the modules and
        packages in order, and the namespace portions."""
        chain: list[Found] = []
        portions: list[str] = []
        for entry in entries:
            hit = self.folder(entry).find(last)
            if hit is None:
                continue
            if hit.kind == "namespace":
                portions.append(hit.folder)
            else:
                chain.append(hit)
        return chain, portions

    def _spec_path_line(self, package: Module) -> int:
        assert package.file is not None
        call = self.source(package.file).facts().spec_path
        return call.line if call is not None else 0

    def imported_early(self, package: Module) -> dict[str, tuple[Statement, tuple[str, ...]]]:
        """The submodules of *package* that its ``__init__`` imports before its own
        ``spec_path`` call, each with the statement of the ``__init__`` that leads to
        it and the package's modules that import it on the way.

        Followed through the modules of the package that those imports load (in
        the package's own folder, as at that moment), not through other packages.
        A call that comes only through ``inherit`` is not judged.
        """
        found = self._early.get(package.name)
        if found is not None:
            return found
        found = self._early[package.name] = {}
        init = package.file
        if init is None or not init.endswith(".py"):
            return found
        source = self.source(init)
        call = source.facts().spec_path if source.error is None else None
        if call is None or call.line == 0:
            return found
        folder = os.path.dirname(init)
        prefix = package.name + "."
        # (file, its package name, statement of the __init__, modules on the way)
        pending: list[tuple[str, str, Optional[Statement], tuple[str, ...]]] = [
            (init, package.name, None, ())
        ]
        seen = {init}
        while pending:
            path, inside, start, via = pending.pop(0)
            facts = self.source(path).facts() if path.endswith(".py") else None
            if facts is None:
                continue
            for statement in facts.order:
                if start is None and statement.line >= call.line:
                    continue  # runs after the call
                for target in _targets(statement, inside):
                    if not target.startswith(prefix):
                        continue
                    rest = target[len(prefix) :].split(".")
                    child = rest[0]
                    hit = self.folder(folder).find(child)
                    if hit is None:
                        continue  # not a submodule (a name of the package), or missing
                    origin = start or statement
                    if child not in found:
                        found[child] = (origin, via)
                    # Follow the files this import runs, in the package's own folder.
                    where, base = folder, package.name
                    for part in rest:
                        step = self.folder(where).find(part)
                        if step is None or step.kind == "namespace":
                            break
                        assert step.file is not None
                        name = f"{base}.{part}"
                        if step.file not in seen:
                            seen.add(step.file)
                            package_name = name if step.kind == "package" else base
                            pending.append((step.file, package_name, origin, (*via, name)))
                        if step.kind != "package":
                            break
                        where, base = step.folder, name
        return found

    def _derived_trunk(self, parent: Module, last: str) -> tuple[str, ...]:
        return tuple(d for d in (os.path.join(t, last) for t in parent.trunk) if os.path.isdir(d))

    def _package(
        self,
        name: str,
        rel: tuple[str, ...],
        init: str,
        folder: str,
        below: Sequence[str],
        parent: Optional[Module],
    ) -> Module:
        call = self._calls_spec_path(name, init, below)
        origin = self.origin_of(init)
        if call is None:
            trunk = (self.rdir,) if parent is None else self._derived_trunk(parent, rel[-1])
            path: tuple[str, ...] = (folder,)
            if origin is not None and self._extends_own_path(init):
                # A package-init override that puts folders on its own __path__ (FlagTree's
                # iluvatar: each folder of the parent's path joined with its name) is
                # read as keeping its trunk folders after its own, as spec_path would.
                path += tuple(t for t in trunk if t != folder)
            return Module(name, "package", init, tuple(below), origin, path, trunk, False, (), "")
        exclude = tuple(f"{name}.{e}" for e in call.exclude)
        self._call_exclusions = self._call_exclusions or bool(exclude)
        path0 = [folder]
        candidates = {os.path.normpath(os.path.join(m, *rel)) for _, m in self.mirrors}
        recorded = [e for e in path0 if os.path.normpath(e) not in candidates]
        if len(recorded) < len(path0) and rel:
            assert parent is not None
            derived = [os.path.join(t, rel[-1]) for t in parent.trunk]
            recorded.extend(d for d in derived if os.path.isdir(d) and d not in recorded)
        old = [e for e in path0 if os.path.normpath(e) in candidates]
        excluded_here = self.user_excluded(name)
        mirrors = []
        if not excluded_here:
            for spec_root, mirror in self.mirrors:
                if self._declaration_excludes(name, spec_root):
                    continue
                candidate = os.path.join(mirror, *rel)
                if os.path.isdir(candidate):
                    mirrors.append(candidate)
        rest = [e for e in path0 if e not in old]
        rest.extend(t for t in recorded if t not in rest)
        return Module(
            name,
            "package",
            init,
            tuple(below),
            origin,
            tuple(mirrors + rest),
            tuple(recorded),
            True,
            exclude,
            "",
        )

    # -- enumeration

    def modules(self) -> list[Module]:
        """The answer for every name in :meth:`names`, parents first."""
        if self._all is None:
            self._all = [self.resolve(n) for n in self.names()]
        return list(self._all)

    def sources(self) -> Iterator[tuple[Module, Source]]:
        """Every module that loads from a source file, with that source, parents first;
        each file read as it comes (a rule that drops its syntax tree once read keeps
        memory flat)."""
        source = self.source
        for module in self.modules():
            file = module.file
            if file is not None and file.endswith(".py"):
                yield module, source(file)

    def inherited(self, module: Module) -> list[Lower]:
        """The lower versions that run in the namespace of *module*'s file through
        ``inherit(globals())``, highest first (see :mod:`.inherited`), found once."""
        found = self._lower.get(module.name)
        if found is None:
            found = self._lower[module.name] = lower_versions(module, self.source, self.tree_of)
        return found

    def lower_version(self, name: str) -> Optional[str]:
        """The file that the file loading for *name* shadows: the next one down its chain."""
        candidates = self.resolve(name).candidates
        return candidates[0] if candidates else None

    def counterpart(self, name: str) -> Optional[str]:
        """The version the file loading for *name* is compared with: the next one down
        its chain, else the trunk's file of that name, which is not on the path when
        the override sits inside a package-init override that does not call
        ``spec_path`` (the package's ``__path__`` is then the mirror folder only)."""
        lower = self.lower_version(name)
        if lower is not None:
            return lower
        module = self.resolve(name)
        trunk = self.trunk_only(name) if module.origin is not None else None
        if trunk is None or module.file is None:
            return None
        return None if os.path.normpath(trunk) == os.path.normpath(module.file) else trunk


def _targets(statement: Statement, package: str) -> list[str]:
    """The modules an import statement in package *package* may import."""
    if not statement.names:  # import a.b.c: a, a.b and a.b.c
        parts = (statement.module or "").split(".")
        return [".".join(parts[: i + 1]) for i in range(len(parts))]
    base = resolve_relative(statement.level, statement.module, package)
    if base is None:
        return []
    found = [base]
    found.extend(f"{base}.{n}" for n in statement.names if n != "*")
    return found


# --------------------------------------------------------------------------- loading


def load(
    *,
    trunk: Optional[str] = None,
    package: Optional[str] = None,
    repo: Optional[str] = None,
    backends: Sequence[str] = (),
    spec_roots: Sequence[str] = (),
    auto: bool = False,
    root: Optional[str] = None,
    settings: Optional[Settings] = None,
) -> Model:
    """Build a :class:`Model` from command-line style options.

    The trunk is *trunk* (the root package's folder), else installed package
    *package*, else detected from the FlagTree-style repository *repo* (or
    the working directory).  The backend stack is *backends* (``"a,b"``
    elements), else ``FLAGTREE_BACKEND``, else the ``backend`` of *settings*
    (a ``[tool.flagtree-spec]`` table), else the trunk's build-time marker.
    Explicit *spec_roots* come first, then the roots discovered for the stack.
    *root* is short for ``trunk=<repo>/python/<root>``.  Raises
    :class:`InputError` for anything unusable.
    """
    if root is None and trunk is None and package is None and settings and settings.root:
        # The table's default; --root, --trunk and --package win.
        python = os.path.join(os.path.abspath(repo if repo is not None else os.getcwd()), "python")
        if not os.path.isfile(os.path.join(python, settings.root, "__init__.py")):
            raise InputError(
                f"[tool.flagtree-spec] in {settings.path}: root {settings.root!r} is not a "
                f"package folder in {python}"
            )
        root = settings.root
    if root is not None:
        if trunk is not None or package is not None:
            raise InputError(
                f"--root {root} is short for --trunk <repo>/python/{root}; give one of --root, "
                "--trunk and --package"
            )
        if not is_module_name(root) or "." in root:
            raise InputError(f"--root {root!r}: give a top-level package name, like 'triton'")
        python = os.path.join(os.path.abspath(repo if repo is not None else os.getcwd()), "python")
        trunk = os.path.join(python, root)
        if not os.path.isfile(os.path.join(trunk, "__init__.py")):
            raise InputError(
                f"--root {root}: {trunk} is no package (no __init__.py); give the name of a "
                f"package folder in {python}, or --repo DIR for another checkout"
            )
    if trunk is not None:
        if not os.path.exists(trunk):
            raise InputError(f"--trunk {trunk!r} does not exist; give the root package's folder")
        rdir = trunk
    elif package is not None:
        rdir = root_package(package)
    else:
        where = repo if repo is not None else os.getcwd()
        if repo is not None and not os.path.isdir(repo):
            raise InputError(f"--repo {repo!r} is not a directory")
        try:
            found = detect_repo(where)
            # Like git: without --repo, the repository may be a folder above.
            above = os.path.abspath(where)
            while found is None and repo is None and os.path.dirname(above) != above:
                above = os.path.dirname(above)
                found = detect_repo(above)
        except RepoError as exc:
            raise InputError(str(exc)) from None
        if found is None:
            folder = os.path.abspath(where)
            if repo is not None:
                raise InputError(
                    f"--repo {folder} is not a FlagTree-style repository: it has "
                    f"{missing(folder)}; give the checkout's top folder, or --trunk DIR"
                )
            raise InputError(
                f"no trunk given, and {folder} is not a FlagTree-style repository (it has "
                f"{missing(folder)}), nor is a folder above it; pass --trunk DIR, --package R "
                "or --repo DIR"
            )
        rdir = found
    rdir = os.path.normpath(os.path.abspath(rdir))
    root = os.path.basename(rdir)
    if not os.path.isdir(rdir):
        raise InputError(f"trunk {rdir!r} is not a directory; give the root package's folder")
    if Folder(rdir).init() is None:
        raise InputError(
            f"trunk {rdir!r} is not a package: it has no __init__.py "
            "(top-level namespace packages are not supported); give the root package's folder"
        )
    if not is_module_name(root) or "." in root:
        raise InputError(
            f"trunk folder name {root!r} is not a top-level package name; "
            "give the root package's folder"
        )
    try:
        if backends:
            stack = parse_stack(",".join(backends), "--backend")
            source = "--backend"
        elif os.environ.get("FLAGTREE_BACKEND", "").strip():
            stack = parse_stack(os.environ["FLAGTREE_BACKEND"], "FLAGTREE_BACKEND")
            source = "FLAGTREE_BACKEND"
        elif settings is not None and settings.backend:
            source = f"[tool.flagtree-spec] in {settings.path}"
            stack = parse_stack(",".join(settings.backend), f"{source}: backend")
        else:
            marker = read_marker(rdir)
            stack, source = (
                (marker.stack, f"marker {marker.path}") if marker else ((), "no backend set")
            )
        roots: list[SpecRoot] = []
        for path in spec_roots:
            if not os.path.exists(path):
                raise InputError(f"--spec-root {path!r} does not exist")
        if spec_roots and source == "--backend" and len(stack) == 1:
            roots.extend(backend_roots(root, rdir, stack[0], spec_roots))
        else:
            roots.extend(explicit_roots(root, rdir, list(spec_roots)))
        entry_points = [ep for ep in _entrypoints.scan() if "." not in ep.value.strip()]
        with warnings.catch_warnings():
            # The run time warns of a spec root in a wrong place; the commands report
            # it themselves (see .backends).
            warnings.simplefilter("ignore", SpecWarning)
            found_roots = discover(root, rdir, stack, lambda: entry_points)
    except SpecError as exc:
        raise InputError(str(exc)) from None
    seen = {r.real for r in roots}
    roots.extend(r for r in found_roots.spec_roots if r.real not in seen)
    model = Model(
        root,
        rdir,
        roots,
        stack=found_roots.stack if stack else (),
        stack_source=source,
        auto=auto,
    )
    if source != "no backend set" and not source.startswith("marker "):
        # Typed by a person; the build chose a marker's backend, which is not judged.
        has_root = [r.backend for r in (*roots, *found_roots.spec_roots) if r.backend]
        model.absent = absent_backends(root, rdir, stack, source, has_root)
    return model


def _top_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module body, with those of top-level ``try`` and ``if`` blocks
    (the guarded import idiom)."""
    for node in body:
        yield node
        if isinstance(node, ast.Try):
            yield from _top_level([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                yield from _top_level(handler.body)
        elif isinstance(node, ast.If):
            yield from _top_level([*node.body, *node.orelse])
