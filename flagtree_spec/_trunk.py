"""Trunk locations and the spec fingerprint.

:func:`trunk_path` answers "where is the trunk's copy of this package",
whatever backends are active, so an override reaches the trunk's data files.
:func:`fingerprint` digests what the active backends change, for compilation
caches keyed on the trunk.
"""

from __future__ import annotations

import importlib.util
import os
import stat
from collections.abc import Callable
from typing import Union

from . import _path, _state
from ._config import is_module_name, open_regular
from ._discovery import SpecRoot
from ._errors import SpecError

__all__ = ["fingerprint", "trunk_path"]

PathPart = Union[str, "os.PathLike[str]"]


def trunk_path(package: str, *parts: PathPart) -> str:
    """Return the trunk directory of *package*, or the path *parts* inside it.

    ``trunk_path("triton.runtime", "data", "table.json")`` is the trunk's
    ``triton/runtime/data/table.json`` even when ``triton.runtime`` has mirror
    directories in front of it or its ``__init__`` is an override.  For a
    package that is not specialised it is simply the package's directory.
    ``importlib.resources`` sees only the folder of a package's ``__init__``,
    so an override uses this to reach trunk data.  The package is imported
    if it is not yet (its parents too, as ``importlib.util.find_spec`` does).
    A name that is not a package is a :class:`SpecError`.
    """
    if not isinstance(package, str) or not is_module_name(package):
        raise SpecError(f"trunk_path({package!r}): give a dotted package name like 'pkg.sub'")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as exc:
        raise SpecError(f"trunk_path({package!r}): cannot find it: {exc}") from exc
    if spec is None:
        raise SpecError(f"trunk_path({package!r}): no such package; check the name and sys.path")
    if spec.submodule_search_locations is None:
        parent, _, last = package.rpartition(".")
        hint = f"trunk_path({parent!r}, '{last}.py')" if parent else "its directory"
        raise SpecError(f"trunk_path({package!r}): it is a module, not a package; use {hint}")
    dirs = _path.trunk_dirs(package)
    if not dirs:
        # A package found only in a mirror tree (added by a backend) has no trunk folder.
        raise SpecError(
            f"trunk_path({package!r}): the package has no trunk directory (it exists only in "
            f"a backend's mirror tree: {list(spec.submodule_search_locations)!r})"
        )
    if not os.path.isdir(dirs[0]):
        from ._editable import editable_loader

        found = editable_loader(package.partition(".")[0])
        if found is not None:
            raise SpecError(
                f"trunk_path({package!r}): the package's trunk location {dirs[0]!r} is not a "
                f"directory: it is an editable install made by {found[0]}, whose import hook "
                f"({found[1]}) serves its modules from a list of files; install it without -e "
                "to have a trunk folder, or read its data with importlib.resources"
            )
    return os.path.join(dirs[0], *(os.fspath(p) for p in parts))


# root package -> (the RootState and the spec_path(exclude=...) names it was computed
# for, digest).  activate() replaces the RootState objects, which invalidates the entry.
_fingerprints: dict[str, tuple[_state.RootState, frozenset[str], str]] = {}


def fingerprint(root: str) -> str:
    """Return a stable hex digest of what the active backends change in *root*.

    The digest covers the backend stack and the contents of every file in the
    active spec roots' mirror trees, hook modules (a hook package's whole
    folder) and declarations, by their paths relative to the spec root, so it
    is the same wherever the backend is installed.  ``__pycache__`` folders
    and the lock file ``flagtree_spec.lock`` (a record for the tools, not
    spec content) are skipped, and so are the mirror files of modules that
    never override (a declaration's ``exclude``, ``spec_path(exclude=...)``,
    ``FLAGTREE_SPEC_DISABLE``): the digest follows the overrides that run, so
    disabling one to bisect a problem changes it.  Computed once per state
    and cached: :func:`activate` and a new ``spec_path(exclude=...)``
    invalidate it.  Add it to the key of a cache keyed on the trunk::

        key = (trunk_key, fingerprint("triton"))
    """
    if not isinstance(root, str) or "." in root or not is_module_name(root):
        raise SpecError(f"fingerprint({root!r}): give a top-level package name like 'triton'")
    state = _state.state_of(root)
    excluded = _path._user_exclude.get(root, set())
    cached = _fingerprints.get(root)
    if cached is not None and cached[0] is state and cached[1] == excluded:
        return cached[2]
    import hashlib  # only here: importing it costs milliseconds at start-up

    digest = hashlib.sha256()
    digest.update(f"flagtree-spec fingerprint 1\0stack\0{','.join(state.stack)}\0".encode())
    everywhere = frozenset((*state.disabled, *excluded))
    for spec_root in state.spec_roots:
        _add_root(digest.update, spec_root, root, everywhere | spec_root.exclude)
    value = digest.hexdigest()
    _fingerprints[root] = (state, frozenset(excluded), value)
    return value


def _add_root(
    update: Callable[[bytes], object], spec_root: SpecRoot, root: str, excluded: frozenset[str]
) -> None:
    label = spec_root.backend or spec_root.kind
    update(f"root\0{label}\0{spec_root.kind}\0".encode())
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    inside = _Inside(spec_root.real)
    if spec_root.mirror is not None:
        _walk(spec_root.mirror, spec_root.path, files, links, inside)
    if spec_root.hooks is not None:
        if spec_root.hooks_package:
            _walk(os.path.dirname(spec_root.hooks), spec_root.path, files, links, inside)
        else:
            _add_file(spec_root.hooks, spec_root.path, files, links, inside)
    if spec_root.declaration is not None:
        _add_file(spec_root.declaration, spec_root.path, files, links, inside)
    if excluded and spec_root.mirror is not None:
        # After the hook package's walk too: its folder may hold the mirror.
        prefix = _rel(spec_root.mirror, spec_root.path) + "/"
        for found in (files, links):
            for rel in [r for r in found if _path.excluded(_module_of(root, r, prefix), excluded)]:
                del found[rel]
    for rel in sorted(set(files) | set(links)):
        if rel in links:
            # A symlink that leaves the spec root: its target path, never what it reaches.
            update(f"link\0{rel}\0{links[rel]}\0".encode("utf-8", "surrogatepass"))
            continue
        fd = open_regular(files[rel])
        if fd is None:  # a FIFO or a device: never read
            update(f"special\0{rel}\0".encode("utf-8", "surrogatepass"))
            continue
        with open(fd, "rb") as f:
            data = f.read()
        update(f"file\0{rel}\0{len(data)}\0".encode("utf-8", "surrogatepass"))
        update(data)


def _module_of(root: str, rel: str, prefix: str) -> str:
    """The module a mirror file stands for (for a data file: the name it would have)."""
    if not rel.startswith(prefix):
        return ""  # outside the mirror tree
    parts = rel[len(prefix) :].split("/")
    stem = parts[-1].split(".")[0]
    names = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    return ".".join([root, *names])


class _Inside:
    """Whether a path, symlinks resolved, lies inside the spec root *real*."""

    def __init__(self, real: str) -> None:
        self.real = real

    def __call__(self, path: str) -> bool:
        target = os.path.realpath(path)
        return target == self.real or target.startswith(self.real.rstrip(os.sep) + os.sep)


# Written by "flagtree-spec lock" at the top of a spec root; not spec content.
_LOCK = "flagtree_spec.lock"


def _add_file(
    path: str, base: str, files: dict[str, str], links: dict[str, str], inside: _Inside
) -> None:
    rel = _rel(path, base)
    if inside(path):
        files[rel] = path
    else:
        links[rel] = _link_target(path)


def _link_target(path: str) -> str:
    """What a path that leaves the spec root points at: its real path."""
    return os.path.realpath(path)


def _walk(top: str, base: str, out: dict[str, str], links: dict[str, str], inside: _Inside) -> None:
    if not inside(top):
        links[_rel(top, base)] = _link_target(top)
        return
    seen: set[str] = set()
    for folder, subdirs, names in os.walk(top, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a symlink loop
            subdirs[:] = []
            continue
        seen.add(real)
        kept = []
        for d in sorted(subdirs):
            if d == "__pycache__":
                continue
            path = os.path.join(folder, d)
            if inside(path):
                kept.append(d)
            else:
                links[_rel(path, base)] = _link_target(path)
        subdirs[:] = kept
        for name in names:
            path = os.path.join(folder, name)
            if name == _LOCK and os.path.samefile(folder, base):
                continue
            if not inside(path):
                links[_rel(path, base)] = _link_target(path)
            elif os.path.isfile(path) or _special(path):
                out[_rel(path, base)] = path


def _special(path: str) -> bool:
    """A FIFO, socket or device: listed by its name, never read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISDIR(mode) and not stat.S_ISREG(mode)


def _rel(path: str, base: str) -> str:
    return os.path.relpath(path, base).replace(os.sep, "/")
