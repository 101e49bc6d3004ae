"""Spec-root discovery: where each backend's spec roots are and what they hold.

Given a root package, its folder and a backend stack, find the spec roots in
priority order, read their declarations, expand declared ``base`` backends
and describe each root's mirror tree and hook module.  Pure file-system
inspection: nothing is imported or executed, so the static checker uses the
same code as the runtime.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple, Optional

from . import _entrypoints
from ._config import (
    MAX_STACK,
    Declaration,
    parse_module_names,
    quote,
    read_declaration,
)
from ._errors import SpecConfigError
from ._log import logger
from ._missing import misplaced_note, warn_nowhere

__all__ = [
    "CONVENTION_KINDS",
    "Discovery",
    "HookModule",
    "SpecRoot",
    "discover",
    "explicit_roots",
    "hook_module_name",
    "hook_module_of",
    "same_tree",
    "spec_path_env",
]


class SpecRoot(NamedTuple):
    """One spec root as seen by one root package.

    ``path`` is the folder as found (symlinks unresolved), ``real`` its real
    path.  ``backend`` is ``None`` for roots from ``FLAGTREE_SPEC_PATH`` or
    ``activate(spec_roots=...)``.  ``mirror`` is the mirror tree for the root
    package (``None`` when there is none), ``hooks`` the hook module's file
    (a package's ``__init__.py`` when ``hooks_package``) and ``hook_name`` the
    module name it is imported under.  ``exclude`` holds full dotted names.
    ``mirror_rule`` and ``hooks_rule`` say which rule of discovery chose the
    mirror tree and the hook module (what ``flagtree-spec status`` prints).
    """

    path: str
    real: str
    backend: Optional[str]
    kind: str
    mirror: Optional[str]
    hooks: Optional[str]
    hooks_package: bool
    hook_name: Optional[str]
    exclude: frozenset[str]
    declaration: Optional[str]
    mirror_rule: str = ""
    hooks_rule: str = ""


class Discovery(NamedTuple):
    """The outcome of discovery for one root package."""

    stack: tuple[str, ...]
    spec_roots: tuple[SpecRoot, ...]


_PRIVATE_PREFIX = "flagtree_spec._hooks."


def hook_module_name(label: Optional[str], hooks_file: str) -> str:
    """The private, stable name of a hook module outside the root package.

    The suffix is a 64-bit FNV-1a digest of the file's real path: stable
    across processes (so a child process finds the same module again) and
    cheap, with no import of :mod:`hashlib` on the start-up path.
    """
    digest = 0xCBF29CE484222325
    for byte in os.path.realpath(hooks_file).encode("utf-8", "surrogateescape"):
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    tag = (label or "path").replace("-", "_")
    return f"{_PRIVATE_PREFIX}{tag}_{digest:016x}"


LEGACY: Final = "legacy"
# The kinds of spec root where <spec root>/R/__init__.py can be the hook module.
CONVENTION_KINDS: Final = frozenset({"installed", "installed-alt", "source"})


class HookModule(NamedTuple):
    """Which file is a spec root's hook module: the answer of :func:`hook_module_of`.

    ``file`` is the hook module's file (a package's ``__init__.py`` when
    ``package``), or ``None`` when the spec root has none.  ``stray`` is
    ``<spec root>/R/__init__.py`` when that file exists but is not the hook
    module because it is a copy of the trunk's root ``__init__.py``.  ``rule``
    says which rule of :func:`hook_module_of` decided.
    """

    file: Optional[str]
    package: bool
    stray: Optional[str] = None
    rule: str = ""


def hook_module_of(
    spec_root: str, kind: str, root: str, rdir: str, decl: Optional[Declaration]
) -> HookModule:
    """Which file is the hook module of *spec_root*, a spec root of root package *root*.

    *kind* is where the spec root was found (``"installed"``,
    ``"installed-alt"``, ``"source"``, ``"legacy"``, ``"entry point"``,
    ``"FLAGTREE_SPEC_PATH"`` or ``"activate"``), *rdir* the trunk folder of
    *root* and *decl* the spec root's declaration, if any.  The rules, first
    that applies:

    1. A legacy whole-tree copy (``third_party/B/python``) has no hook module.
    2. A declaration that gives ``hooks`` decides: a ``.py`` file, a package
       folder (its ``__init__.py``), or ``null`` for none.
    3. ``<spec root>/__init__.py``: the spec root is the hook package.
    4. In the installed and source layouts only (*kind* in
       :data:`CONVENTION_KINDS`): ``<spec root>/R/__init__.py``, FlagTree's own
       convention, a hook package whose folder is the mirror's root folder.
       Such a file could never load as an override (the root package is never
       found in a mirror).  It is not the hook module when it is a stray copy
       of the trunk's ``<rdir>/__init__.py``: byte-identical, or identical
       as a syntax tree (what ``ast.dump`` compares, so comments and layout
       do not count); it is then returned as ``stray``.
    5. None.

    Cost: rule 4 reads both files only when ``<spec root>/R/__init__.py``
    exists and the spec root has no ``__init__.py`` of its own, and parses
    them only when their bytes differ, with ``compile()`` and the built-in
    ``_ast`` module (never the :mod:`ast` module, whose import costs
    milliseconds); spec roots that do not follow the convention pay one
    ``stat``.  Used by the run time and by the static tools, so both agree on
    the hook module.
    """
    if kind == LEGACY:
        return HookModule(None, False, rule="a whole-tree copy has no hook module")
    if decl is not None and "hooks" in decl.given:
        if decl.hooks is None:
            return HookModule(None, False, rule="the declaration says hooks: null")
        target = os.path.join(spec_root, decl.hooks)
        rule = f"the declaration says hooks: {decl.hooks!r}"
        if os.path.isdir(target) and os.path.isfile(os.path.join(target, "__init__.py")):
            return HookModule(os.path.join(target, "__init__.py"), True, rule=rule)
        if os.path.isfile(target) and target.endswith(".py"):
            return HookModule(target, os.path.basename(target) == "__init__.py", rule=rule)
        raise SpecConfigError(
            f"backend declaration {decl.path}: hooks {decl.hooks!r} is neither a .py "
            "file nor a package folder with an __init__.py"
        )
    init = os.path.join(spec_root, "__init__.py")
    if os.path.isfile(init):
        return HookModule(init, True, rule="the spec root's own __init__.py, tried first")
    if kind not in CONVENTION_KINDS:
        return HookModule(None, False, rule="no __init__.py in the spec root")
    candidate = os.path.join(spec_root, root, "__init__.py")
    if not os.path.isfile(candidate):
        return HookModule(
            None, False, rule=f"no __init__.py in the spec root or in its {root}/ folder"
        )
    if _same_module(candidate, os.path.join(rdir, "__init__.py")):
        logger.debug(
            "%s is a copy of the trunk's root __init__.py, not a hook module; ignored", candidate
        )
        return HookModule(
            None,
            False,
            candidate,
            rule=f"{root}/__init__.py is a copy of the trunk's root __init__.py, not hooks",
        )
    return HookModule(
        candidate,
        True,
        rule=f"FlagTree's convention {root}/__init__.py: the spec root has no __init__.py",
    )


def _same_module(path: str, trunk: str) -> bool:
    """Whether *path* is byte-identical or AST-identical to the file *trunk*."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        with open(trunk, "rb") as f:
            other = f.read()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SpecConfigError(
            f"cannot read {exc.filename!r}: {exc.strerror or exc}; it is read to tell whether "
            f"{path} is a hook package or a copy of the trunk's root __init__.py: make it a "
            "readable file"
        ) from exc
    if data == other:
        return True
    # The syntax trees through the built-in _ast module and compile(): importing
    # the ast module would cost milliseconds at the start of every process.
    import _ast

    try:
        mine = compile(data, path, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
        theirs = compile(other, trunk, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        # Not a copy of a working trunk file: as the hook module, its import reports it.
        return False
    return same_tree(mine, theirs)


def same_tree(a: object, b: object) -> bool:
    """Whether two syntax trees are equal, ignoring positions (what ``ast.dump`` compares).

    Walks both trees in step and stops at the first difference, so it costs
    far less than dumping both when the files differ.  Here because the run
    time needs it without importing :mod:`ast`; the tools use it too.
    """
    import _ast

    pending: list[tuple[object, object]] = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, _ast.AST):
            pending.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y))
        elif x != y:
            return False
    return True


# FLAGTREE_SPEC_PATH is resolved against the working directory once per value.
_spec_path_cache: dict[str, tuple[str, ...]] = {}


def spec_path_env() -> tuple[str, ...]:
    """The directories named by ``FLAGTREE_SPEC_PATH`` that exist, highest priority first.

    Empty entries are ignored; relative entries are resolved against the
    working directory the first time a value is read; a missing directory is
    skipped with a debug line; a file, or a path inside a zip archive, is a
    :class:`SpecConfigError`.
    """
    value = os.environ.get("FLAGTREE_SPEC_PATH", "")
    if not value:
        return ()
    cached = _spec_path_cache.get(value)
    if cached is None:
        cached = tuple(os.path.abspath(e) for e in value.split(os.pathsep) if e.strip())
        _spec_path_cache[value] = cached
    found = []
    for entry in cached:
        if os.path.isdir(entry):
            found.append(entry)
            continue
        probe = entry
        while probe and not os.path.lexists(probe):
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        if os.path.isfile(probe):
            where = (
                "is a file"
                if probe == entry
                else f"lies inside the file {probe!r} (a zip archive?)"
            )
            raise SpecConfigError(
                f"FLAGTREE_SPEC_PATH entry {entry!r} {where}; entries must be directories"
            )
        logger.debug("FLAGTREE_SPEC_PATH entry %s does not exist; skipped", entry)
    return tuple(found)


# FLAGTREE_SOURCE_ROOT, like FLAGTREE_SPEC_PATH, is resolved against the working
# directory once per value: a later chdir does not move it.
_source_root_cache: dict[str, str] = {}


def _repo_of(rdir_real: str, root: str) -> Optional[str]:
    source_root = os.environ.get("FLAGTREE_SOURCE_ROOT", "")
    if source_root:
        resolved = _source_root_cache.get(source_root)
        if resolved is None:
            resolved = _source_root_cache.setdefault(source_root, os.path.abspath(source_root))
        return resolved
    parent = os.path.dirname(rdir_real)
    if os.path.basename(rdir_real) == root and os.path.basename(parent) == "python":
        return os.path.dirname(parent)
    return None


class _Finder:
    """Discovery for one root package; caches what it reads."""

    def __init__(
        self,
        root: str,
        rdir: str,
        entry_points: Callable[[], Sequence[_entrypoints.EntryPoint]],
    ) -> None:
        self.root = root
        self.rdir = rdir
        self.entry_points = entry_points
        self.seen: set[str] = set()
        self._real: Optional[str] = None

    # Resolved on first use: with no backend and no FLAGTREE_SPEC_PATH,
    # discovery touches nothing on disk.
    @property
    def rdir_real(self) -> str:
        if self._real is None:
            self._real = os.path.realpath(self.rdir)
        return self._real

    @property
    def repo(self) -> Optional[str]:
        repo = _repo_of(self.rdir_real, self.root)
        if repo is None:
            # setuptools' strict editable mode imports the package from a link tree
            # (build/__editable__.<dist>/R/__init__.py, a symlink to the source file):
            # the source layout is where the real __init__.py lies.
            init = os.path.realpath(os.path.join(self.rdir_real, "__init__.py"))
            source = os.path.dirname(init)
            if source != self.rdir_real:
                repo = _repo_of(source, self.root)
        return repo

    def backend_folders(self, backend: str) -> list[tuple[str, str]]:
        """``(kind, folder)`` of every source of *backend* that exists, highest priority first."""
        candidates = [
            ("installed", os.path.join(self.rdir, "backends", backend, "spec")),
            ("installed-alt", os.path.join(self.rdir, "spec", backend)),
        ]
        repo = self.repo
        if repo is not None:
            third = os.path.join(repo, "third_party", backend)
            candidates.append(("source", os.path.join(third, "backend", "spec")))
            candidates.append((LEGACY, os.path.join(third, "python")))
        found = [(kind, path) for kind, path in candidates if os.path.isdir(path)]
        points = [ep for ep in self.entry_points() if ep.name == backend]
        if points:
            if found:
                raise SpecConfigError(
                    f"backend {backend!r} exists in the tree ({found[0][1]}) and as an entry point "
                    f"of {points[0].dist}; uninstall that distribution or rename one of them"
                )
            if len(points) > 1:
                raise SpecConfigError(
                    f"backend {backend!r} is declared as an entry point by {points[0].dist} "
                    f"and {points[1].dist}; uninstall one of them"
                )
            found.append(("entry point", _entry_point_folder(points[0])))
        return found

    def make_root(
        self, path: str, kind: str, backend: Optional[str], decl: Optional[Declaration]
    ) -> SpecRoot:
        real = os.path.realpath(path)
        mirror: Optional[str]
        r = self.root
        if kind == LEGACY:
            copy = os.path.join(path, r)
            found = os.path.isdir(copy)
            return SpecRoot(
                path,
                real,
                backend,
                kind,
                copy if found else None,
                None,
                False,
                None,
                frozenset(),
                None,
                f"the whole-tree copy's {r}/ folder" if found else f"no {r}/ folder in the copy",
                "a whole-tree copy has no hook module",
            )
        if decl is not None and "mirror" in decl.given:
            if decl.mirror is None:
                mirror, mirror_rule = None, "the declaration says mirror: null"
            else:
                # "" and "." name the spec root itself: a flat mirror, with no "/./" in paths.
                mirror = path if decl.mirror == os.curdir else os.path.join(path, decl.mirror)
                mirror_rule = (
                    "the declaration names the spec root itself as the mirror"
                    if decl.mirror == os.curdir
                    else f"the declaration says mirror: {decl.mirror!r}"
                )
            if mirror is not None and not os.path.isdir(mirror):
                raise SpecConfigError(
                    f"backend declaration {decl.path}: mirror {decl.mirror!r} is not a directory"
                )
        elif os.path.isdir(os.path.join(path, r)):
            mirror, mirror_rule = os.path.join(path, r), f"the spec root's {r}/ folder"
        elif kind == "installed-alt":
            # FlagTree's <Rdir>/spec/B mirrors R itself (spec/B/runtime/jit.py overrides
            # R.runtime.jit) unless it holds a folder R (spec/B/R/runtime/jit.py).
            mirror = path
            mirror_rule = f"flat: the spec root mirrors {r} itself, having no {r}/ folder"
        else:
            mirror, mirror_rule = None, f"no {r}/ folder in the spec root"
        hooks = hook_module_of(path, kind, r, self.rdir, decl)
        exclude = frozenset(f"{r}.{name}" for name in (decl.exclude if decl else ()))
        return SpecRoot(
            path,
            real,
            backend,
            kind,
            mirror,
            hooks.file,
            hooks.package,
            self.hook_name(path, kind, backend, hooks.file, hooks.package),
            exclude,
            decl.path if decl else None,
            mirror_rule,
            hooks.rule,
        )

    def hook_name(
        self, path: str, kind: str, backend: Optional[str], hooks: Optional[str], package: bool
    ) -> Optional[str]:
        if hooks is None:
            return None
        if kind == "entry point":
            return _entry_point_module(path)
        # Inside the root package: import under the real dotted name, from the
        # unresolved path, so the module is never executed under two names.
        base = self.rdir if kind in ("installed", "installed-alt") else self.rdir_real
        where = hooks if kind in ("installed", "installed-alt") else os.path.realpath(hooks)
        rel = os.path.relpath(os.path.dirname(where) if package else where[:-3], base)
        if not rel.startswith(os.pardir) and not os.path.isabs(rel):
            return ".".join([self.root, *rel.split(os.sep)])
        return hook_module_name(backend, hooks)

    def add(self, out: list[SpecRoot], root: SpecRoot) -> None:
        if root.real in self.seen:
            logger.debug("spec root %s is %s again; first occurrence wins", root.path, root.real)
            return
        self.seen.add(root.real)
        out.append(root)


_entry_point_modules: dict[str, str] = {}


def _entry_point_folder(ep: _entrypoints.EntryPoint) -> str:
    import importlib.util
    from importlib.machinery import PathFinder

    value = ep.value.strip()
    if ":" in value or not parse_module_names(value, f"entry point {ep.name!r} of {ep.dist}"):
        raise SpecConfigError(
            f"entry point {ep.name} = {quote(value)} of {ep.dist} must name an importable "
            "package (no ':attr')"
        )
    # Locate the package without importing anything: find_spec() of a dotted
    # name would import (run) its parent packages; walk their folders instead.
    parts = value.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for end in range(2, len(parts) + 1):
            if spec is None or not spec.submodule_search_locations:
                break
            spec = PathFinder.find_spec(
                ".".join(parts[:end]), list(spec.submodule_search_locations)
            )
    except (ImportError, ValueError) as exc:
        raise SpecConfigError(f"entry point {ep.name} = {value} of {ep.dist}: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise SpecConfigError(
            f"entry point {ep.name} = {value} of {ep.dist} is not an importable package"
        )
    folder = os.path.abspath(next(iter(spec.submodule_search_locations)))
    _entry_point_modules[folder] = value
    return folder


def _entry_point_module(folder: str) -> str:
    return _entry_point_modules[folder]


def discover(
    root: str,
    rdir: str,
    stack: tuple[str, ...],
    entry_points: Callable[[], Sequence[_entrypoints.EntryPoint]],
    strict: bool = False,
    named_by: Optional[str] = None,
) -> Discovery:
    """Find the spec roots of *root* (folder *rdir*) for *stack*, highest priority first.

    Roots from ``FLAGTREE_SPEC_PATH`` come first, then each backend's sources
    in order, with declared ``base`` backends inserted right below the
    backend that declares them.  Returns the expanded stack too.

    *named_by* says where a stack typed by a person came from
    (``FLAGTREE_BACKEND`` or ``activate()``); a backend of such a stack that
    exists nowhere gets a :class:`SpecWarning` (see :func:`warn_nowhere`).
    ``None`` for a stack read from a build marker, which is never judged.
    """
    finder = _Finder(root, rdir, entry_points)
    out: list[SpecRoot] = []
    for path in spec_path_env():
        finder.add(out, _unnamed_root(finder, path, "FLAGTREE_SPEC_PATH"))
    expanded: dict[str, None] = {}
    nowhere: list[str] = []

    def visit(backend: str, chain: tuple[str, ...]) -> None:
        if backend in chain:
            cycle = " -> ".join((*chain[chain.index(backend) :], backend))
            raise SpecConfigError(f"backend declarations form a 'base' cycle: {cycle}")
        if backend in expanded:
            return
        if len(expanded) >= MAX_STACK:
            raise SpecConfigError(
                f"the backend stack {','.join(stack)!r} grows past {MAX_STACK} backends through "
                f"the 'base' declarations (at {' -> '.join((*chain, backend)[-4:])}); a stack "
                f"holds at most {MAX_STACK} backends, bases included"
            )
        expanded[backend] = None
        folders = finder.backend_folders(backend)
        if not folders:
            message = f"backend {backend!r} has no spec root for package {root!r}"
            message += misplaced_note(finder, backend, warn=not strict)
            if strict:
                raise SpecConfigError(
                    f"{message} (FLAGTREE_SPEC_STRICT=1); looked in "
                    f"{rdir}/backends/{backend}/spec, "
                    f"{rdir}/spec/{backend}"
                    + (f", {finder.repo}/third_party/{backend}" if finder.repo else "")
                    + " and the entry points of group flagtree_spec.backends"
                )
            logger.debug("%s; nothing to do for it", message)
            if named_by is not None and not chain:
                nowhere.append(backend)
        bases: list[str] = []
        for kind, path in folders:
            decl = None if kind == LEGACY else read_declaration(path)
            finder.add(out, finder.make_root(path, kind, backend, decl))
            if decl is not None:
                bases.extend(b for b in decl.base if b not in bases)
        for base in bases:
            visit(base, (*chain, backend))

    for backend in stack:
        visit(backend, ())
    if nowhere:
        assert named_by is not None
        warn_nowhere(finder, nowhere, named_by)
    return Discovery(tuple(expanded), tuple(out))


def explicit_roots(root: str, rdir: str, paths: Sequence[str]) -> tuple[SpecRoot, ...]:
    """Spec roots given to ``activate(spec_roots=...)``: each must be a directory."""
    finder = _Finder(root, rdir, list)
    out: list[SpecRoot] = []
    for path in paths:
        path = os.path.abspath(os.fspath(path))
        if not os.path.isdir(path):
            raise SpecConfigError(f"spec root {path!r} is not a directory")
        finder.add(out, _unnamed_root(finder, path, "activate"))
    return tuple(out)


def _unnamed_root(finder: _Finder, path: str, kind: str) -> SpecRoot:
    """A spec root that belongs to no named backend, so its declaration has no ``base``."""
    decl = read_declaration(path)
    if decl is not None and decl.base:
        where = "a FLAGTREE_SPEC_PATH root" if kind == "FLAGTREE_SPEC_PATH" else "an explicit root"
        raise SpecConfigError(
            f"backend declaration {decl.path}: 'base' needs a named backend, and {where} has "
            "none; activate the base backend, or give its spec root too"
        )
    return finder.make_root(path, kind, None, decl)
