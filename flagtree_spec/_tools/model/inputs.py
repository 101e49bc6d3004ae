"""Where the trunk and the spec roots come from, as the command-line options name them.

An installed root package (``--package R``), found without importing it, and
the spec roots given with ``--spec-root DIR`` for a single ``-b B``; every
input that cannot be used is an :class:`InputError`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence

from ..._config import is_module_name, read_declaration
from ..._discovery import LEGACY, SpecRoot, _Finder

__all__ = ["InputError", "backend_roots", "root_package"]


class InputError(Exception):
    """The command's input is unusable (a usage or input error: exit code 2)."""


def root_package(name: str) -> str:
    """The folder of installed package *name*, found without importing it."""
    if not is_module_name(name) or "." in name:
        raise InputError(f"--package {name!r}: give a top-level package name, like 'triton'")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise InputError(f"--package {name!r}: {exc}") from None
    if spec is None:
        raise InputError(
            f"--package {name!r} is not installed in this Python ({sys.executable}); "
            "install it, or give its folder with --trunk DIR"
        )
    if spec.submodule_search_locations is None or not spec.has_location or not spec.origin:
        raise InputError(
            f"--package {name!r} is not a regular package (a module, or a namespace package "
            "without __init__.py); give a root package"
        )
    return os.path.dirname(spec.origin)


def backend_roots(root: str, rdir: str, backend: str, paths: Sequence[str]) -> list[SpecRoot]:
    """``--spec-root DIR`` given with a single ``-b B``: each DIR is a spec root of *backend*.

    Each is read as the run time reads a spec root of that backend in the
    layout it sits in (installed, alternate installed, source or legacy copy,
    when DIR is that place of the tree); anywhere else as a source-layout
    spec root, so FlagTree's hook package ``DIR/R/__init__.py`` is found
    without a declaration.
    """
    finder = _Finder(root, rdir, list)
    places = {
        os.path.realpath(os.path.join(rdir, "backends", backend, "spec")): "installed",
        os.path.realpath(os.path.join(rdir, "spec", backend)): "installed-alt",
    }
    repo = finder.repo
    if repo is not None:
        third = os.path.join(repo, "third_party", backend)
        places[os.path.realpath(os.path.join(third, "backend", "spec"))] = "source"
        places[os.path.realpath(os.path.join(third, "python"))] = LEGACY
    out: list[SpecRoot] = []
    for path in paths:
        path = os.path.abspath(path)
        if not os.path.isdir(path):
            raise InputError(f"--spec-root {path!r} is not a directory")
        kind = places.get(os.path.realpath(path), "source")
        decl = None if kind == LEGACY else read_declaration(path)
        finder.add(out, finder.make_root(path, kind, backend, decl))
    return out
