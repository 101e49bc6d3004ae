"""``inherit``: run the next lower version of a module inside an override (module inheritance).

The versions of module ``pkg.mod`` are what the path finder finds in each
folder of ``pkg.__path__``, in order: the highest backend's override first,
the trunk module last.  :func:`inherit` locates the calling override among
them by real path and executes the next one down into the override's
namespace, from that version's cached bytecode.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ExtensionFileLoader, ModuleSpec, PathFinder
from typing import Any, Optional

from . import _auto, _path, _state
from ._errors import SpecError
from ._log import logger

__all__ = ["inherit"]

_MISSING = object()

# Files (device, inode) being executed into each namespace, by id(namespace).
_running: dict[int, list[tuple[object, ...]]] = {}


def inherit(namespace: dict[str, Any]) -> str:
    """Execute the next lower version of this module into *namespace*.

    The idiom, near the top of an override in a mirror tree::

        from flagtree_spec import inherit
        inherit(globals())

        def changed(x):          # replaces the trunk's changed()
            ...

    The next lower version is the next backend's override of the same module
    in the stack, else the trunk module.  It runs from its cached bytecode
    (``loader.get_code``, which reads and writes ``__pycache__``) in the
    override's own namespace, so the definitions that follow the call replace
    only what differs, and lower functions that call a replaced function by
    its global name call the replacement.  A lower version that calls
    ``inherit(globals())`` itself chains further down.

    ``__file__`` and ``__cached__`` become the lower version's and stay so
    (after a chain of ``inherit`` calls, the lowest version that ran, usually
    the trunk file), because inherited functions locate their data from
    ``__file__`` when they are called: trunk code such as
    ``open(os.path.join(os.path.dirname(__file__), "data.bin"))`` keeps
    working.  ``__spec__.origin`` stays the override's file: use it for the
    override's own folder (and :func:`trunk_path` for trunk data).
    ``__inherits__`` holds the next lower file, which is also returned.  The
    override keeps its docstring, or takes the lower one when it has none.
    Package ``__init__`` overrides inherit the trunk ``__init__`` the same way
    (its own ``spec_path(__path__)`` then runs in the override's namespace).

    The module is identified by ``__spec__.name``, so an override run as
    ``python -m pkg.mod`` (``__name__ == "__main__"``) inherits too: while the
    lower version runs, ``__name__`` is ``"pkg.mod"``, so its
    ``if __name__ == "__main__":`` block does not run (the override's own
    does, once), and the functions and classes it defines have
    ``__module__ == "pkg.mod"``.  From the ``inherit()`` call on, the module is
    also ``sys.modules["pkg.mod"]``, so dataclasses, :mod:`pickle` and
    ``typing.get_type_hints`` of the classes the lower version defines work, and
    a later ``import pkg.mod`` gets this module rather than a second copy.

    Limit: ``inspect.getsource`` of a *class* that the override itself
    defines reads ``__file__``, the lower file: on CPython 3.9-3.12 it shows
    the lower file's class of that name (or fails when there is none), on
    3.13 the lines of the lower file at the class's line numbers.  Functions
    are not affected: their code objects carry their own file name.

    Raises :class:`SpecError` when there is no lower version, when it is of
    another kind (a package for a module or the reverse, an extension
    module), or when the versions form a cycle (two folders of the path lead
    to the same file).
    """
    if not isinstance(namespace, dict):
        raise SpecError(
            f"inherit() needs the module's namespace, inherit(globals()), not "
            f"{type(namespace).__name__} {namespace!r:.80}"
        )
    spec = namespace.get("__spec__")
    spec_name = getattr(spec, "name", None)
    name = spec_name if isinstance(spec_name, str) else namespace.get("__name__")
    running = _running.get(id(namespace))
    # The file being executed: the lower file we set while it runs, else the override's.
    here = namespace.get("__file__") if running else getattr(spec, "origin", None)
    if not isinstance(here, str):
        here = namespace.get("__file__")
    if not isinstance(name, str) or not isinstance(here, str):
        raise SpecError(
            "inherit(globals()) must be called from a module imported from a file "
            f"(this namespace has __name__={name!r}, __file__={here!r})"
        )
    parent_name, dot, _ = name.rpartition(".")
    if not dot:
        raise SpecError(
            f"inherit() called in {name!r}, which is not inside a package; only modules of a "
            "specialised package (pkg.mod) have lower versions to inherit"
        )
    parent = sys.modules.get(parent_name)
    parent_path = getattr(parent, "__path__", None)
    if parent_path is None:
        raise SpecError(
            f"inherit() called in {name!r}, but its package {parent_name!r} is not imported "
            "as a package; import the module normally (import pkg.mod), not from a file"
        )
    is_package = "__path__" in namespace
    busy = _auto.asking()
    probing = name not in busy
    if probing:
        busy.add(name)  # the folders' finders leave these lookups alone
    try:
        current, lower = _current_and_lower(name, here, list(parent_path), _below(name))
    finally:
        if probing:
            busy.discard(name)
    if current is None:
        raise SpecError(
            f"inherit() in {name!r}: {here} is not a version of {name} on {parent_name}.__path__ "
            f"{list(parent_path)!r}; was it loaded from a file outside the package's path?"
        )
    if lower is None and is_package:
        raise SpecError(
            f"inherit() in {name!r}: {here} is a package-init override (a mirror folder's "
            f"__init__.py replaces the package's own __init__.py), and {name} has no lower "
            f"__init__.py to inherit (searched {parent_name}.__path__ {list(parent_path)!r}). "
            "A mirror folder needs no __init__.py: delete this file and the modules beside it "
            "still override the package's modules; for a package the trunk does not have, "
            "delete the inherit() call"
        )
    if lower is None:
        raise SpecError(
            f"inherit() in {name!r}: {here} has no lower version (searched "
            f"{parent_name}.__path__ {list(parent_path)!r}); only an override of a trunk module "
            "can inherit, so delete the call or add the module to the trunk"
        )
    lower_file = lower.origin
    assert lower_file is not None
    lower_key = _key(lower_file)
    if running is None:
        running = [_key(here)]
    if lower_key in running:
        raise SpecError(
            f"inherit() in {name!r} forms a cycle: {here} and its lower version {lower_file} "
            f"are the same file; two folders of {parent_name}.__path__ lead to it (a symlinked "
            "mirror?), remove the duplicate"
        )
    if isinstance(lower.loader, ExtensionFileLoader):
        raise SpecError(
            f"inherit() in {name!r}: the lower version {lower_file} is an extension module, "
            "which cannot run inside another module; override it as a whole instead"
        )
    if (lower.submodule_search_locations is not None) != is_package:
        kinds = ("package", "module") if is_package else ("module", "package")
        raise SpecError(
            f"inherit() in {name!r}: this override is a {kinds[0]} ({here}) but the lower "
            f"version is a {kinds[1]} ({lower_file}); make the override the same kind"
        )
    get_code = getattr(lower.loader, "get_code", None)
    code = get_code(name) if get_code is not None else None
    if code is None:
        raise SpecError(
            f"inherit() in {name!r}: the loader of the lower version {lower_file} "
            f"({type(lower.loader).__name__}) gives no code object to run"
        )
    saved = {key: namespace.get(key, _MISSING) for key in ("__file__", "__cached__", "__name__")}
    own_doc = namespace.get("__doc__")
    namespace["__file__"] = lower_file
    namespace["__cached__"] = lower.cached
    namespace["__name__"] = name  # not "__main__": the lower version's main block stays off
    if sys.modules.get(name) is None:
        # Run as "python -m pkg.mod": the module is sys.modules["__main__"] only (or
        # "__mp_main__", in the spawn and forkserver children of such a program), and
        # what the lower version defines names "pkg.mod" as its module (dataclasses,
        # pickle and typing.get_type_hints look it up there).  It stays registered, so a
        # later "import pkg.mod" finds this module instead of executing a second copy.
        for main_name in ("__main__", "__mp_main__"):
            main = sys.modules.get(main_name)
            if main is not None and getattr(main, "__dict__", None) is namespace:
                sys.modules[name] = main
                break
    running.append(lower_key)
    _running[id(namespace)] = running
    logger.debug("module %s: %s inherits %s", name, here, lower_file)
    if is_package:
        _keep_lower_folders(name, namespace, lower)
    try:
        exec(code, namespace)
    except BaseException:
        _put(namespace, "__file__", saved["__file__"])
        _put(namespace, "__cached__", saved["__cached__"])
        raise
    finally:
        running.pop()
        if len(running) == 1:
            del _running[id(namespace)]
        _put(namespace, "__name__", saved["__name__"])
        if own_doc is not None:
            namespace["__doc__"] = own_doc
    namespace["__inherits__"] = lower_file
    return lower_file


def _keep_lower_folders(name: str, namespace: dict[str, Any], lower: ModuleSpec) -> None:
    """Put the lower version's folders on a package-init override's ``__path__``.

    Imported through the import system under ``spec_path`` or auto mode, the
    path holds them already.  Loaded by hand (a finder's ``find_spec``, then
    ``exec_module``, as ``triton.language.extra`` loads its sub-packages),
    it holds only the override's own folder, and trunk submodules that the
    ``__init__`` does not import itself could no longer be imported.  They
    are added before the lower version runs, so its own imports find them;
    under auto mode the package is then recorded as if its finder had seen it.
    """
    path = namespace.get("__path__")
    if not isinstance(path, list):
        return
    have = {os.path.normpath(entry) for entry in path}
    added = [
        entry
        for entry in lower.submodule_search_locations or ()
        if os.path.normpath(entry) not in have
    ]
    if not added:
        return
    path.extend(added)
    locations = getattr(namespace.get("__spec__"), "submodule_search_locations", None)
    if isinstance(locations, list) and locations is not path:
        locations.extend(entry for entry in added if entry not in locations)
    logger.debug("package %s: lower folders %s kept on __path__", name, ", ".join(added))
    _auto.adopt(name, path)


def _below(name: str) -> list[str]:
    """The mirror trees whose version of *name* is never a lower version: they exclude it."""
    state = _state.known_root(name.partition(".")[0])
    return _path.excluded_mirrors(state, name) if state is not None else []


def _current_and_lower(
    name: str, here: str, path: list[str], excluded: list[str]
) -> tuple[Optional[ModuleSpec], Optional[ModuleSpec]]:
    """The version of *name* that is *here* and the next one down, on *path*.

    The versions are what the path finder finds in each folder of *path*, in
    order; a folder without ``__init__.py`` is at most a namespace portion,
    never a version.  *here* is matched by name, else by identity of the file
    (the same file reached through a symlink).  Folders inside the mirror trees
    *excluded* never give the lower version: their backend excludes the module.
    """
    versions = []
    current = None
    for entry in path:
        spec = PathFinder.find_spec(name, [entry])
        if spec is None or spec.origin is None or spec.loader is None:
            continue
        if current is not None:
            if excluded and not _path.outside([spec.origin], excluded):
                continue
            return current, spec
        versions.append(spec)
        if spec.origin == here:
            current = spec
    if current is None:
        # Not found by name: compare files (stat follows symlinks).
        try:
            key = _key(here)
        except OSError:
            return None, None
        for i, spec in enumerate(versions):
            assert spec.origin is not None
            if _key(spec.origin) == key:
                lower = [v for v in versions[i + 1 :] if _path.outside([v.origin or ""], excluded)]
                return spec, lower[0] if lower else None
    return current, None


def _key(path: str) -> tuple[object, ...]:
    """Identity of a file: device and inode, through symlinks.

    A module inside a zip or egg archive (zipimport) has no file of its own: its
    path names it.
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ("archive", os.path.normpath(path))
    return st.st_dev, st.st_ino


def _put(namespace: dict[str, Any], key: str, value: object) -> None:
    if value is _MISSING:
        namespace.pop(key, None)
    else:
        namespace[key] = value
