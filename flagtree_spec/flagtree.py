"""FlagTree's own spec file, in every variant it has had, as one module.

FlagTree's trunk imports its backend helpers from a file of its own,
``python/triton/flagtree_spec.py`` (since 2026 ``python/triton/_flagtree_spec.py``).
That file, under either name, becomes one line::

    from flagtree_spec.flagtree import *

and every name that a variant's trunk or spec trees import from it exists
here, spelled as FlagTree spells it and mapped to this library:

================================================  ==========================================
name                                              introduced by
================================================  ==========================================
``spec_path(path, exclude=())``                   every variant; ``exclude`` (positional or
                                                  by keyword) with the source-checkout
                                                  overlay (FEP #98, tsingmicro)
``spec(name, *args, **kwargs)``                   every ``flagtree_spec.py``
``spec_func(name)``                               every variant
``bind_language_extension_symbols_to_tl(ext)``    ``triton_v3.5.x`` (the ``[SPEC]`` rework)
``spec_call(name, *args, **kwargs)``              ``_flagtree_spec.py`` (flagos-ai ``main``)
================================================  ==========================================

``spec``, ``spec_call`` and ``spec_func`` *are* :func:`flagtree_spec.spec`
and :func:`flagtree_spec.spec_func` (the same function objects: a hook call
costs what it costs in this library).  ``spec_path`` is
:func:`flagtree_spec.spec_path` with FlagTree's signature.  Where the
variants put a backend's mirror tree and hook module, and which of two
candidates wins, is this library's discovery (``docs/flagtree.md`` has the
table); nothing here depends on which variant the trunk came from.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, MutableSequence
from types import ModuleType
from typing import Optional

from . import _path
from ._bind import BindResult, bind_symbols
from ._calls import spec, spec_func

__all__ = [
    "bind_language_extension_symbols_to_tl",
    "spec",
    "spec_call",
    "spec_func",
    "spec_path",
]

# _flagtree_spec.py's name for spec(): the same function.
spec_call = spec


def spec_path(path: MutableSequence[str], exclude: Optional[Iterable[str]] = ()) -> list[str]:
    """Put the active backends' mirror folders first on a package's ``__path__``.

    FlagTree's signature of :func:`flagtree_spec.spec_path`: *exclude* may be
    given by keyword, as FlagTree's root ``__init__.py`` does
    (``spec_path(__path__, exclude=("backends", "_C"))``), or by position, and
    ``None`` is no exclusion, as it was there; the names in it, relative to
    the calling package, always load from trunk, with everything below them.
    As in FlagTree, a name that is a namespace package of the trunk (a folder
    with no ``__init__.py``, such as Triton's ``_C``) is not kept on trunk:
    FlagTree's finder serves packages with an ``__init__.py`` only.  Returns the
    mirror folders added (FlagTree's returned ``None``).
    """
    frame = sys._getframe(1)
    if exclude is None:  # FlagTree's own spec_path took "if exclude:"
        exclude = ()
    if isinstance(exclude, str):  # the library's error for a bare string names the fix
        return _path.overlay(path, None, exclude, frame)
    kept = [e for e in exclude if not _namespace_in_trunk(path, e)]
    return _path.overlay(path, None, kept, frame)


def _namespace_in_trunk(path: MutableSequence[str], name: object) -> bool:
    """Whether *name* is a namespace package (a folder without ``__init__.py``) in the
    trunk folders of *path*: FlagTree's spec_path keeps only regular packages on trunk."""
    if not isinstance(name, str) or not path:
        return False
    for folder in path:
        candidate = os.path.join(folder, *name.split("."))
        if os.path.isdir(candidate) and not os.path.isfile(os.path.join(candidate, "__init__.py")):
            return True
    return False


def bind_language_extension_symbols_to_tl(extension: ModuleType) -> BindResult:
    """Bind the names of ``extension.__all__`` that ``triton.language`` lacks to it.

    FlagTree's meaning, through :func:`flagtree_spec.bind_symbols`: names that
    ``triton.language`` already has, and names the extension lists but does
    not define, are left alone; an extension with no or an empty ``__all__``
    binds nothing; ``triton.language.__all__`` is not changed.  Returns what
    was bound and skipped (FlagTree's returned ``None``).
    """
    import importlib

    tl = importlib.import_module("triton.language")
    names = [n for n in getattr(extension, "__all__", None) or () if hasattr(extension, n)]
    return bind_symbols(extension, tl, names, export=False)
