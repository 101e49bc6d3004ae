"""Auto mode: specialise every package of a root as it is imported.

:func:`install` puts :class:`AutoFinder` at the front of ``sys.meta_path``.
For a package under an installed root it asks the finders after it for the
spec (so editable-install finders keep working) and rewrites the spec's
``submodule_search_locations`` list in place, exactly as ``spec_path`` would:
that list becomes the module's ``__path__`` before its ``__init__`` runs.  The
packages are recorded in :mod:`flagtree_spec._path`, so ``activate()``
rewrites them and ``trunk_path`` knows their trunk folders.

A probe such as ``importlib.util.find_spec`` creates a spec that never
becomes a module; its list is rewritten too, but it replaces the record of a
package only when no imported module owns the recorded list, so the record
always follows the module object that is in ``sys.modules``.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from . import _editable, _entries, _missing, _path, _state
from ._config import MAX_NAMES, is_module_name, parse_module_names
from ._errors import SpecError
from ._log import logger

__all__ = ["AutoFinder", "adopt", "install", "installed", "start_from_environment", "uninstall"]

_roots = _entries.auto_roots
# Records created by auto mode, by package name: uninstall() undoes exactly these.
_owned: dict[str, _path.Package] = {}
_local = threading.local()


class AutoFinder:
    """Meta path finder that applies ``spec_path`` to every package under the installed roots."""

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] not in _roots:
            return None
        busy: set[str] | None = getattr(_local, "busy", None)
        if busy is None:
            busy = _local.busy = set()
        if fullname in busy:
            # Resolving the root's state looks the root up again: let the others answer.
            return None
        busy.add(fullname)
        try:
            spec = _find_rest(fullname, path, target)
            if spec is not None and spec.submodule_search_locations is not None:
                _manage(fullname, spec, target)
            return spec
        finally:
            busy.discard(fullname)

    @classmethod
    def invalidate_caches(cls) -> None:
        """Nothing is cached here (part of the finder protocol)."""


def asking() -> set[str]:
    """The names this thread's library code is looking up now (auto mode then keeps out)."""
    busy: set[str] | None = getattr(_local, "busy", None)
    if busy is None:
        busy = _local.busy = set()
    return busy


def _found_in_folder(fullname: str, spec: ModuleSpec, target: ModuleType | None) -> None:
    """A watched folder found package *fullname* for a finder in front of ours.

    Another meta path finder (typeguard's import hook, pytest's assertion
    rewriter) answered through ``PathFinder``, bypassing :class:`AutoFinder`:
    the spec's path gets the mirrors all the same.  Nothing happens when this
    library's own code is asking.
    """
    if fullname.partition(".")[0] not in _roots:
        return
    busy = getattr(_local, "busy", None)
    if busy is not None and fullname in busy:
        return
    _manage(fullname, spec, target)


_entries.on_package = _found_in_folder


def _find_rest(
    fullname: str, path: Sequence[str] | None, target: ModuleType | None
) -> ModuleSpec | None:
    finders = sys.meta_path
    try:
        start = finders.index(AutoFinder) + 1
    except ValueError:  # removed while an import was running
        start = 0
    for finder in finders[start:]:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec: ModuleSpec | None = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


def _manage(fullname: str, spec: ModuleSpec, target: ModuleType | None) -> None:
    locations = spec.submodule_search_locations
    root = fullname.partition(".")[0]
    if not isinstance(locations, list):
        if fullname == root:
            raise SpecError(
                f"auto mode for {root!r}: it is a namespace package (no __init__.py); top-level "
                "namespace packages are not supported: add an __init__.py to it"
            )
        return  # a namespace sub-package follows its parent's path
    loader = spec.loader
    if loader is not None and not hasattr(loader, "exec_module") and hasattr(loader, "get_code"):
        spec.loader = _CodeLoader(loader)  # type: ignore[assignment]
    # No lock here: this runs while the import system holds its own lock, so it must
    # never wait for a thread that may be importing.  Resolving the state may import
    # (this thread holds the import lock, so that cannot wait either); the record is
    # published with single dictionary stores and re-pathed by settle() if activate()
    # switched the state meanwhile.
    if fullname == root and spec.origin:
        # The root package being imported decides (sys.path may have changed since install()).
        state = _state.state_in(root, os.path.dirname(os.path.abspath(spec.origin)))
    else:
        state = _state.state_of(root)
    previous = _path._packages.get(fullname)
    live = _path.namespace_of(sys.modules.get(fullname))
    probe = (
        target is None
        and previous is not None
        and live is not None
        and live.get("__path__") is previous.path
    )
    # A probe for a package that is imported already keeps following the module.
    package = _path._record(fullname, locations, None, state, register=not probe)
    if probe:
        return
    _owned[fullname] = package
    if state.excludes or _path._user_exclude.get(root):
        _path.ExcludeFinder.enable()
    _path.settle(package, state, locked=False)
    if state.specialised and fullname == root:
        _editable.report(root)
    if package.mirrors:
        logger.debug("auto mode: package %s gets %s", fullname, ", ".join(package.mirrors))


class _CodeLoader:
    """Runs a package whose loader has only the legacy ``load_module()`` the modern way.

    zipimport on CPython 3.9 loads a package with ``load_module()``, which gives
    the module a ``__path__`` of its own, so the list auto mode rewrote would never
    be the one the package's ``__init__`` runs with.  Executing the loader's code
    object into the module that the import system made from the spec keeps it.
    """

    def __init__(self, loader: object) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__spec__.name if module.__spec__ is not None else module.__name__
        code = self._loader.get_code(name)  # type: ignore[attr-defined]
        exec(code, module.__dict__)

    def __getattr__(self, name: str) -> object:
        return getattr(self._loader, name)


def adopt(name: str, path: list[str]) -> None:
    """Record package *name*, loaded without this finder, if auto mode covers its root.

    ``inherit()`` calls it for a package-init override loaded by hand, once
    the lower version's folders are on *path*: the record puts every mirror
    folder of the stack in front, as the finder would have.
    """
    root = name.partition(".")[0]
    if root not in _roots:
        return
    state = _state.state_of(root)  # with no lock held: resolving may import
    with _state.lock:
        known = _path._packages.get(name)
        if known is not None and known.path is path:
            return
        package = _owned[name] = _path._record(name, path, None, state)
    _path.settle(package, state)


def install(root: str) -> None:
    """Specialise every package of root package *root* as it is imported.

    ``install("triton")`` before ``import triton`` is the same as a
    ``spec_path(__path__)`` line in every ``__init__.py`` of the package, so an
    unmodified trunk (a wheel from a package index) is specialised with no
    edits.  The packages of *root* imported already get their ``__path__``
    specialised now.  Installing a root twice does nothing more.
    """
    if not isinstance(root, str) or "." in root or not is_module_name(root):
        raise SpecError(f"install({root!r}): give a top-level package name like 'triton'")
    imported = []
    for name, module in sorted(sys.modules.items()):
        # By name first: reading another module's namespace could run it (LazyLoader).
        if not (name == root or name.startswith(root + ".")):
            continue
        namespace = _path.namespace_of(module)
        path = None if namespace is None else namespace.get("__path__")
        if isinstance(path, list) and name not in _path._packages:
            imported.append((name, path, module))
    # Resolved before changing anything, with no lock held (it may import): a bad
    # configuration installs nothing.
    state = _state.state_of(root) if imported else None
    if state is None:
        # Resolved now, not by the finder at the root's first import (where the import
        # system holds its lock, and reading a declaration would import json under it).
        # A configuration error is raised at that import, as without this, and so is a
        # warning about a backend that exists nowhere raised as an error (-W error).
        try:
            _state.state_of(root)
        except SpecError:
            pass
        except Warning as exc:
            _missing.unsay(exc)
    recorded = []
    with _state.lock:
        _state.use(root)
        if root not in _roots:
            _roots.add(root)
            if state is not None:
                for name, path, module in imported:
                    if name not in _path._packages:
                        _owned[name] = _path._record(name, path, module, state)
                        recorded.append(_owned[name])
        if AutoFinder not in sys.meta_path:
            sys.meta_path.insert(0, AutoFinder)
    # The folder the root is found in: a finder put in front of AutoFinder later still
    # gets the root's spec from that folder's path-entry finder.
    known = _state.known_root(root)
    if known is not None:
        _entries.watch_finders_of(os.path.dirname(known.rdir))
    if state is not None:
        for package in recorded:
            _path.settle(package, state)
    logger.debug("auto mode installed for %s", root)


def uninstall(root: str) -> None:
    """Stop auto mode for *root*; it affects later imports only.

    The mirror directories auto mode added to the ``__path__`` of packages of
    *root* are removed, so their submodules imported from now on come from
    the trunk; modules already imported stay as they are, and so do packages
    whose ``__init__`` calls ``spec_path`` itself.  When no root is
    left, the finder leaves ``sys.meta_path``.
    """
    if not isinstance(root, str):
        raise SpecError(f"uninstall({root!r}): give a top-level package name like 'triton'")
    with _state.lock:
        _roots.discard(root)
        for name in [n for n in list(_owned) if n == root or n.startswith(root + ".")]:
            package = _owned.pop(name, None)
            if package is None:
                continue
            if _path._packages.get(name) is not package or name in _path.called:
                continue
            del _path._packages[name]
            added = set(package.mirrors)
            for locations in (package.path, package.extra):
                if locations is not None:
                    locations[:] = [entry for entry in locations if entry not in added]
            package.mirrors = []
        if not _roots:
            while AutoFinder in sys.meta_path:
                sys.meta_path.remove(AutoFinder)
        if not any(p.root == root for p in list(_path._packages.values())):
            _state.unuse(root)  # nothing of it is specialised any more
        _entries.keep_only(_still_watched())
    importlib.invalidate_caches()
    logger.debug("auto mode uninstalled for %s", root)


def _still_watched() -> set[str]:
    """The folders whose finders still have work once a root is uninstalled."""
    folders = set()
    for package in list(_path._packages.values()):
        if package.root in _roots:
            folders.update(package.path)
        else:
            folders.update(package.mirrors)
    for root in _roots:
        known = _state.known_root(root)
        if known is not None:
            folders.add(os.path.dirname(known.rdir))
    return folders


def installed() -> tuple[str, ...]:
    """The root packages auto mode is installed for."""
    return tuple(sorted(_roots))


def start_from_environment() -> tuple[str, ...]:
    """Install auto mode for the roots in ``FLAGTREE_SPEC_AUTO=root[,root]``.

    Called at interpreter start-up (by the ``autostart`` line and by child
    processes of ``flagtree-spec run``); it never raises: a bad value is
    reported on stderr and ignored, so a Python process always starts.
    """
    value = os.environ.get("FLAGTREE_SPEC_AUTO", "")
    try:
        roots = parse_module_names(value, "FLAGTREE_SPEC_AUTO", MAX_NAMES)
        for root in roots:
            if "." in root:
                raise SpecError(
                    f"FLAGTREE_SPEC_AUTO={value!r}: {root!r} is not a top-level package name; "
                    "auto mode applies to whole root packages like 'triton'"
                )
        for root in roots:
            install(root)
    except SpecError as exc:
        sys.stderr.write(f"flagtree-spec: auto mode not started: {exc}\n")
        return ()
    return roots
