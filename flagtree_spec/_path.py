"""``spec_path``: put the active mirror directories first on a package's ``__path__``.

Each package that calls :func:`spec_path` is recorded (its ``__path__`` list,
its trunk directories, the mirror directories now in it) so that
``activate()`` can rewrite it later and ``trunk_path`` can answer.  Excluded
modules are served by :class:`ExcludeFinder`, a meta path finder that looks
them up in the parent's path without the mirror directories that exclude
them; it is installed only while some exclusion exists or debug logging is on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, MutableSequence, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import FrameType, ModuleType
from typing import Optional

from . import _editable, _entries, _state
from ._config import is_module_name
from ._errors import SpecError
from ._log import debug_enabled, logger

__all__ = ["ExcludeFinder", "Package", "packages", "reapply", "spec_path"]


class Package:
    """A package whose ``__path__`` this library manages."""

    __slots__ = ("extra", "mirrors", "name", "path", "rel", "root", "trunk")

    def __init__(
        self, name: str, path: list[str], extra: Optional[list[str]], trunk: list[str]
    ) -> None:
        self.name = name
        self.root, _, rest = name.partition(".")
        self.rel = tuple(rest.split(".")) if rest else ()
        self.path = path
        self.extra = extra  # __spec__.submodule_search_locations when another object
        self.trunk = trunk
        self.mirrors: list[str] = []


_packages: dict[str, Package] = {}
# Full module names excluded by spec_path(exclude=...), per root package.
_user_exclude: dict[str, set[str]] = {}
# Packages that called spec_path() themselves: auto mode's uninstall() leaves them alone.
called: set[str] = set()


def packages() -> dict[str, Package]:
    """A snapshot of the managed packages, by name."""
    return dict(_packages)


def excluded(name: str, names: Iterable[str]) -> bool:
    """Whether module *name* is one of *names* or lies below one of them."""
    return any(name == e or name.startswith(e + ".") for e in names)


_excluded = excluded


def globally_excluded(state: _state.RootState, name: str) -> bool:
    """Whether *name* always loads from trunk, whatever the backend."""
    return _excluded(name, _user_exclude.get(state.root, ())) or _excluded(name, state.disabled)


def mirror_dirs(state: _state.RootState, name: str, rel: Sequence[str]) -> list[str]:
    """The mirror directories of package *name* under *state*, highest priority first."""
    return [folder for folder, _ in _mirror_pairs(state, name, rel)]


def _mirror_pairs(
    state: _state.RootState, name: str, rel: Sequence[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """Each mirror directory of package *name*, with the full names it must never serve."""
    if not state.specialised or globally_excluded(state, name):
        return []
    found = []
    for spec_root in state.mirrors():
        if _excluded(name, spec_root.exclude):
            continue
        assert spec_root.mirror is not None
        folder = os.path.join(spec_root.mirror, *rel)
        if os.path.isdir(folder):
            found.append((folder, refused_by(state, spec_root.exclude)))
    return found


def refused_by(state: _state.RootState, declared: Iterable[str]) -> tuple[str, ...]:
    """The full names a mirror must never serve: its declaration's, and the root's own."""
    return tuple(sorted({*declared, *state.disabled, *_user_exclude.get(state.root, ())}))


def excluded_mirrors(state: _state.RootState, name: str) -> list[str]:
    """The mirror trees that must never serve module *name* (every one when it is disabled)."""
    if globally_excluded(state, name):
        return [r.mirror for r in state.mirrors() if r.mirror]
    return [m for excluded, ms in state.dropped.items() if _excluded(name, (excluded,)) for m in ms]


def outside(entries: Iterable[str], trees: Sequence[str]) -> list[str]:
    """The entries of *entries* that lie in none of the folders *trees*."""
    return [e for e in entries if not any(e == t or e.startswith(t + os.sep) for t in trees)]


def _candidates(state: _state.RootState, rel: Sequence[str]) -> set[str]:
    return {os.path.normpath(os.path.join(r.mirror, *rel)) for r in state.mirrors() if r.mirror}


def trunk_dirs(name: str) -> list[str]:
    """The trunk directories of package *name* (recorded, or derived from its parent's)."""
    package = _packages.get(name)
    if package is not None:
        return list(package.trunk)
    parent, dot, last = name.rpartition(".")
    if not dot:
        known = _state.known_root(name)
        return [known.rdir if known is not None else _state.root_dir(name)]
    return [d for d in (os.path.join(t, last) for t in trunk_dirs(parent)) if os.path.isdir(d)]


def namespace_of(module: object) -> Optional[dict[str, object]]:
    """A module's ``__dict__`` read without running its code.

    ``importlib.util.LazyLoader`` makes modules that execute on their first
    attribute access, ``__dict__`` included; the descriptor of ``ModuleType``
    reads the namespace without that.  ``None`` for an entry of ``sys.modules``
    that is not a module.
    """
    if not isinstance(module, ModuleType):
        return None
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return None
    return namespace if isinstance(namespace, dict) else None


# How many frames above spec_path()'s caller a package's __init__ may call it from.
_FORWARDING_DEPTH = 4


def _package_name(path: object, frame: Optional[FrameType]) -> tuple[str, Optional[ModuleType]]:
    if frame is not None and frame.f_globals.get("__path__") is path:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str):
            return name, sys.modules.get(name)
    for name, module in list(sys.modules.items()):
        namespace = namespace_of(module)
        if namespace is not None and namespace.get("__path__") is path:
            return name, module
    # Called through a forwarding function (def spec_path(p): return lib.spec_path(p)) from
    # a package loaded by hand, which is not in sys.modules yet: the package's frame is a
    # few frames further up.
    depth = 0
    while frame is not None and depth < _FORWARDING_DEPTH:
        frame = frame.f_back
        depth += 1
        if frame is not None and frame.f_globals.get("__path__") is path:
            found = getattr(frame.f_globals.get("__spec__"), "name", None)
            found = found or frame.f_globals.get("__name__")
            if isinstance(found, str):
                return found, None
    shown = repr(path) if len(repr(path)) <= 60 else repr(path)[:57] + "..."
    if not isinstance(path, list):
        raise SpecError(
            f"spec_path() expects a package's __path__ (the list of its folders), not a "
            f"{type(path).__name__} ({shown}); call it as spec_path(__path__) in the "
            "package's __init__.py"
        )
    raise SpecError(
        f"spec_path() expects a package's __path__ list, and {shown} is the __path__ of no "
        "package; call it as spec_path(__path__) from the package's __init__.py, or pass "
        "name='package.name'"
    )


def spec_path(
    path: MutableSequence[str], *, name: Optional[str] = None, exclude: Iterable[str] = ()
) -> list[str]:
    """Put the active backends' mirror directories first on a package's ``__path__``.

    The one-line idiom, in a package's ``__init__.py``::

        from flagtree_spec import spec_path
        spec_path(__path__)

    *path* is changed in place (and ``__spec__.submodule_search_locations``
    too when that is another list): the mirror directories of this package,
    highest priority first, then the trunk directories in their original
    order.  The directories added are returned.  A second call on the same
    list adds nothing (it may add exclusions); ``importlib.reload`` makes a
    new list, which gets the overlay again.  The package is *name*, else the
    calling module when its ``__path__`` is *path*, else the module in
    ``sys.modules`` whose ``__path__`` it is.  *exclude* names modules or
    sub-packages, relative to this package, that always load from trunk.
    Namespace sub-packages of the package get the mirror directories without a
    call.  With no backend and no spec root nothing on disk is touched (the
    first call for a root package only looks for its build-time markers).
    """
    return overlay(path, name, exclude, sys._getframe(1))


def overlay(
    path: MutableSequence[str],
    name: Optional[str],
    exclude: Iterable[str],
    frame: Optional[FrameType],
) -> list[str]:
    """:func:`spec_path` for a caller whose frame is *frame* (a forwarding module's caller)."""
    module: Optional[ModuleType]
    if name is None:
        name, module = _package_name(path, frame)
    elif not isinstance(name, str) or not is_module_name(name):
        raise SpecError(f"spec_path(name={name!r}): give a dotted package name like 'pkg.sub'")
    else:
        module = sys.modules.get(name)
    if isinstance(exclude, str):
        raise SpecError(f"spec_path(exclude={exclude!r}): give a list of names, like [{exclude!r}]")
    try:
        items = list(exclude)
    except TypeError:
        raise SpecError(
            f"spec_path(exclude={exclude!r}): give a list of names, like ['runtime.jit']"
        ) from None
    extra_names = []
    for item in items:
        if not isinstance(item, str) or not is_module_name(item):
            raise SpecError(
                f"spec_path(exclude=...): {item!r} is not a module name relative to {name!r}"
            )
        extra_names.append(f"{name}.{item}")
    root = name.partition(".")[0]
    # Resolved with no lock held: the first resolution may import and warn.
    origin = (namespace_of(module) or {}).get("__file__") if name == root else None
    if isinstance(origin, str):
        # The root package's own call: the state is this package's (see state_in).
        state = _state.state_in(root, os.path.dirname(os.path.abspath(origin)))
    else:
        state = _state.state_of(root)
    if not isinstance(path, list):
        raise SpecError(
            f"spec_path() needs the list __path__ of a regular package; {name!r} has a "
            f"{type(path).__name__} (a namespace package gets mirrors from its parent, "
            "no call needed)"
        )
    with _state.lock:
        if extra_names:
            _user_exclude.setdefault(root, set()).update(extra_names)
        package = _packages.get(name)
        if package is None or package.path is not path:
            package = _record(name, path, module, state)
        called.add(name)
        if extra_names or state.excludes:
            ExcludeFinder.enable()
    if extra_names:
        with _state.lock:
            reapply([root])  # the mirror folders' finders refuse the new names too
        logger.debug("package %s: excluded %s", name, ", ".join(extra_names))
    settle(package, state)
    _state.sync_marker_module(_state.state_of(root))
    if state.specialised:
        _editable.report(root)
    return list(package.mirrors)


def settle(package: Package, state: _state.RootState, *, locked: bool = True) -> None:
    """Re-path *package* until it follows the state that is current for its root.

    A package recorded while ``activate()`` switched the state may have been
    recorded for the old one after ``activate()`` re-pathed every package it
    knew; the recorder then catches up here.  Called with no lock held; auto
    mode's finder passes ``locked=False`` and re-paths without taking the lock
    (it must never wait on it), which converges too: every writer applies the
    current state last.
    """
    while True:
        current = _state.state_of(package.root)
        if current is state:
            return
        state = current
        if not locked:
            _apply(package, state)
            continue
        with _state.lock:
            if _packages.get(package.name) is package:
                _apply(package, state)


def _record(
    name: str,
    path: list[str],
    module: Optional[ModuleType],
    state: _state.RootState,
    register: bool = True,
) -> Package:
    extra = None
    namespace = namespace_of(module)
    if namespace is not None and namespace.get("__path__") is path:
        # Read from the namespace: an attribute of a lazy module would execute it.
        locations = getattr(namespace.get("__spec__"), "submodule_search_locations", None)
        if isinstance(locations, list) and locations is not path:
            extra = locations
    if not state.specialised:
        package = Package(name, path, extra, list(path))
        if register:
            _packages[name] = package
            _state.use(package.root)
        return package
    rel = name.split(".")[1:]
    candidates = _candidates(state, rel)
    trunk = [entry for entry in path if os.path.normpath(entry) not in candidates]
    if len(trunk) < len(path) and rel:
        # The package's own __init__ came from a mirror: keep its trunk modules importable.
        parent = name.rpartition(".")[0]
        derived = [os.path.join(t, rel[-1]) for t in trunk_dirs(parent)]
        trunk.extend(d for d in derived if os.path.isdir(d) and d not in trunk)
        logger.debug("package %s: __init__ from a mirror; trunk directories %s", name, trunk)
    package = Package(name, path, extra, trunk)
    package.mirrors = [entry for entry in path if os.path.normpath(entry) in candidates]
    _apply(package, state)
    if register:
        _packages[name] = package
        _state.use(package.root)
    return package


def _apply(package: Package, state: _state.RootState) -> None:
    """Rewrite *package*'s path for *state*: its mirrors first, then everything else.

    The path-entry finders of the mirror folders learn what they must refuse,
    and in auto mode those of the other folders hand on the packages they find
    (see :mod:`flagtree_spec._entries`).
    """
    pairs = _mirror_pairs(state, package.name, package.rel)
    mirrors = [folder for folder, _ in pairs]
    old = set(package.mirrors)
    rest = [entry for entry in package.path if entry not in old]
    rest.extend(t for t in package.trunk if t not in rest)
    for folder, refused in pairs:
        _entries.watch((folder,), refused)
    if package.root in _entries.auto_roots:
        _entries.watch(rest)
    new = mirrors + rest
    if new != package.path:
        package.path[:] = new
    if package.extra is not None and package.extra != new:
        package.extra[:] = new
    for folder in mirrors:
        if folder not in old:
            logger.debug("package %s: added %s", package.name, folder)
    for folder in package.mirrors:
        if folder not in mirrors:
            logger.debug("package %s: removed %s", package.name, folder)
    package.mirrors = mirrors


def reapply(roots: Iterable[str]) -> None:
    """Rewrite the path of every managed package of *roots* for their current state."""
    wanted = set(roots)
    for package in list(_packages.values()):
        if package.root in wanted:
            _apply(package, _state.state_of(package.root))


def snapshot() -> tuple[dict[str, Package], dict[str, set[str]]]:
    """The records, for ``activate()`` to restore exactly."""
    return dict(_packages), {k: set(v) for k, v in _user_exclude.items()}


def restore(saved: tuple[dict[str, Package], dict[str, set[str]]]) -> None:
    _packages.clear()
    _packages.update(saved[0])
    _user_exclude.clear()
    _user_exclude.update(saved[1])


def _importing() -> bool:
    """Whether the lookup under way is an import, not a probe by ``importlib.util.find_spec``.

    The nearest of the two in the stack decides: a probe of ``a.b.c`` imports
    ``a.b`` for real.
    """
    frame: Optional[FrameType] = sys._getframe(2)
    while frame is not None:
        code = frame.f_code.co_name
        if code == "_find_and_load_unlocked":
            return True
        if code == "find_spec" and frame.f_globals.get("__name__") == "importlib.util":
            return False
        frame = frame.f_back
    return True


class ExcludeFinder:
    """Find excluded modules in trunk only; with debug logging, report mirror loads.

    Sits at the front of ``sys.meta_path`` (right behind auto mode's finder,
    when that is installed).  For a module that is excluded (by
    ``spec_path(exclude=...)``, ``FLAGTREE_SPEC_DISABLE`` or a declaration's
    ``exclude``) it searches the parent's path without the mirror directories
    concerned, and fails the import rather than fall back to a mirror.  For
    every other module it returns ``None`` and the normal finders proceed.
    """

    _installed = False

    @classmethod
    def enable(cls) -> None:
        if not cls._installed:
            # Behind auto mode's finder, which asks the finders after it: so auto
            # mode also records (and later re-paths) the packages served here.
            position = 0
            for index, finder in enumerate(sys.meta_path):
                if getattr(finder, "__module__", None) == "flagtree_spec._auto":
                    position = index + 1
            sys.meta_path.insert(position, cls)
            cls._installed = True

    @classmethod
    def disable(cls) -> None:
        if cls._installed:
            while cls in sys.meta_path:
                sys.meta_path.remove(cls)
            cls._installed = False

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[ModuleSpec]:
        root, dot, _ = fullname.partition(".")
        state = _state.known_root(root) if dot else None
        if state is None or not state.specialised or path is None:
            return None
        drop = excluded_mirrors(state, fullname)
        if not drop:
            if _debug:
                cls._report(fullname, path, target, state)
            return None
        spec = PathFinder.find_spec(fullname, outside(path, drop), target)
        if spec is None and _editable.editable_loader(root) is not None:
            # An editable install whose own finder serves the package (its __path__
            # is no folder): that finder loads the trunk module, mirrors never.
            return None
        if spec is None and not _importing():
            # A probe (importlib.util.find_spec): the module does not exist, as far as
            # this state goes; the mirror folders' own finders refuse it too.
            return None
        if spec is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: it is excluded from the backend's mirror tree "
                "and loads from trunk only, where it does not exist",
                name=fullname,
            )
        logger.debug("module %s: excluded, loading from trunk %s", fullname, spec.origin)
        return spec

    @staticmethod
    def _report(
        fullname: str, path: Sequence[str], target: Optional[ModuleType], state: _state.RootState
    ) -> None:
        spec = PathFinder.find_spec(fullname, list(path), target)
        origin = getattr(spec, "origin", None)
        if origin:
            for spec_root in state.mirrors():
                assert spec_root.mirror is not None
                if origin.startswith(spec_root.mirror + os.sep):
                    logger.debug("module %s: loading from mirror %s", fullname, origin)
                    return


_debug = debug_enabled()
if _debug:
    ExcludeFinder.enable()
