"""The path-entry finders of the folders the library manages.

A meta path finder placed in front of auto mode's (typeguard's import hook,
pytest's assertion rewriter for the packages it rewrites) answers a root's
imports through ``PathFinder``, which asks the finder of each folder in
``sys.path_importer_cache``.  So the folders that matter get a
:class:`WatchedFileFinder`: the class of their ``FileFinder`` is switched,
nothing else about it changes.  It applies the library's rules whichever
meta path finder asked:

* a package found in a folder of an auto-mode root is handed to auto mode
  (:data:`on_package`), which puts the mirrors on its path as its own finder
  would have;
* a mirror folder refuses the modules its backend must never override
  (declarations, ``spec_path(exclude=...)``, ``FLAGTREE_SPEC_DISABLE``), so
  the path finder goes on to the lower folders, and ``importlib.util.find_spec``
  of such a module that trunk lacks finds nothing.

The watched folders are recorded when the state changes (a package recorded
or re-pathed, ``install()``); a finder made later for one of them is switched
by :func:`path_hook`, first on ``sys.path_hooks`` once a folder is watched.
Only plain ``FileFinder`` objects are switched: another tool's finder class
is left as it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from importlib.machinery import FileFinder, ModuleSpec
from types import ModuleType
from typing import Any, Optional

__all__ = [
    "WatchedFileFinder",
    "auto_roots",
    "keep_only",
    "on_package",
    "path_hook",
    "watch",
    "watch_finders_of",
]

# Folder -> the full module names it must not answer (empty: it answers everything).
# Keyed by the folder as given and normalised: FileFinder keeps the path as given
# before CPython 3.13, normalised from 3.13 on.
_watched: dict[str, tuple[str, ...]] = {}
# The root packages auto mode is installed for (auto mode's own set).
auto_roots: set[str] = set()
# Set by auto mode: called with every package a watched folder finds.
on_package: Optional[Callable[[str, ModuleSpec, Optional[ModuleType]], None]] = None

_find = FileFinder.find_spec


class WatchedFileFinder(FileFinder):
    """The ``FileFinder`` of a folder the library manages (see the module docstring)."""

    def find_spec(self, fullname: str, target: Optional[ModuleType] = None) -> Optional[ModuleSpec]:
        refused = _watched.get(self.path)
        if refused and any(fullname == n or fullname.startswith(n + ".") for n in refused):
            return None
        spec = _find(self, fullname, target)
        if spec is not None and spec.submodule_search_locations is not None:
            hand = on_package
            if hand is not None:
                hand(fullname, spec, target)
        return spec


def _switch(finder: object) -> None:
    if type(finder) is FileFinder:
        finder.__class__ = WatchedFileFinder


def watch(folders: Iterable[str], refused: tuple[str, ...] = ()) -> None:
    """Watch *folders*, which must not answer the modules *refused* (full names).

    Dictionary operations only (no file system, no import system), so it may
    run under the library's lock.
    """
    cache = sys.path_importer_cache
    for folder in folders:
        for key in (folder, os.path.normpath(folder)):
            _watched[key] = refused
            _switch(cache.get(key))
    if path_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, path_hook)


def watch_finders_of(folder: str) -> None:
    """Watch *folder* and switch every cached finder of it, whatever key it is cached under.

    For the folder that holds a root package: ``sys.path`` may name it by a
    relative path or ``''``.
    """
    watch((folder,))
    target = os.path.normpath(folder)
    for key, finder in list(sys.path_importer_cache.items()):
        if type(finder) is FileFinder and os.path.normpath(os.path.abspath(key or ".")) == target:
            _switch(finder)


def keep_only(folders: Iterable[str]) -> None:
    """Stop watching every folder but *folders*; their finders become plain ``FileFinder``s.

    With nothing left to watch, :func:`path_hook` leaves ``sys.path_hooks``
    (``uninstall()`` puts the import system back as it found it).
    """
    kept = set(folders)
    kept.update([os.path.normpath(f) for f in kept])
    for key in [k for k in _watched if k not in kept]:
        del _watched[key]
    for finder in list(sys.path_importer_cache.values()):
        if type(finder) is WatchedFileFinder and finder.path not in _watched:
            finder.__class__ = FileFinder  # type: ignore[assignment]
    if not _watched:
        while path_hook in sys.path_hooks:
            sys.path_hooks.remove(path_hook)


def path_hook(entry: str) -> Any:
    """``sys.path_hooks`` entry: the finder of a watched folder, made by the other hooks."""
    if entry not in _watched and os.path.normpath(os.path.abspath(entry or ".")) not in _watched:
        raise ImportError("not a folder the library manages")
    for hook in list(sys.path_hooks):
        if hook is path_hook:
            continue
        try:
            finder = hook(entry)
        except ImportError:
            continue
        _switch(finder)
        return finder
    raise ImportError(f"no path hook handles {entry!r}")
