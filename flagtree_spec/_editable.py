"""Editable installs whose import hook ignores ``__path__``: found and reported once per root.

meson-python and scikit-build-core install a package in editable mode with a
meta path finder of their own (``MesonpyMetaFinder``,
``ScikitBuildRedirectingFinder``) that answers the imports of the package's
modules from its own table of files, before the path finder looks at
``__path__``.  A mirror directory put first on ``__path__`` is then never
consulted: overrides are silently skipped, while hooks and modules that only
a mirror has still work (a mixed tree).  :func:`report` warns once per root
package, naming the tool and what to do, the first time the package is
specialised.  setuptools' and hatchling's editable modes import through
``__path__`` and need nothing here.
"""

from __future__ import annotations

import sys
from typing import Optional

from ._errors import SpecWarning

__all__ = ["editable_loader", "report"]

# Class name of the finder -> the tool that installs it.
_FINDERS = {
    "MesonpyMetaFinder": "meson-python",
    "ScikitBuildRedirectingFinder": "scikit-build-core",
}

# Roots already looked at (setdefault claims one atomically).
_reported: dict[str, object] = {}


def editable_loader(root: str) -> Optional[tuple[str, str]]:
    """``(tool, finder)`` of an editable-install finder that answers *root*'s imports, if any."""
    for finder in list(sys.meta_path):
        kind = finder if isinstance(finder, type) else type(finder)
        tool = _FINDERS.get(kind.__name__)
        if tool is not None and _serves(finder, root):
            return tool, f"{kind.__module__}.{kind.__qualname__}"
    return None


def _serves(finder: object, root: str) -> bool:
    tops = getattr(finder, "_top_level_modules", None)  # meson-python
    if isinstance(tops, (set, frozenset, list, tuple, dict)) and root in tops:
        return True
    for attribute in ("known_source_files", "known_wheel_files"):  # scikit-build-core
        known = getattr(finder, attribute, None)
        if isinstance(known, dict) and any(
            isinstance(k, str) and (k == root or k.startswith(root + ".")) for k in known
        ):
            return True
    return False


def report(root: str) -> None:
    """Warn, once per process, when *root* is served by such an editable-install finder.

    Called when a package of *root* is first specialised, with no lock held
    (issuing a warning may import).
    """
    if root in _reported:
        return
    claim = object()
    if _reported.setdefault(root, claim) is not claim:
        return
    found = editable_loader(root)
    if found is None:
        return
    tool, finder = found
    import warnings

    warnings.warn(
        f"package {root!r} is an editable install made by {tool}, whose import hook "
        f"({finder} on sys.meta_path) loads the package's modules from its own list of files "
        f"and ignores __path__: the backend's overrides of {root} modules never load (its "
        f"hooks and the modules only a mirror has do). Install {root} without -e, or use "
        "the editable mode of setuptools or hatchling, which import through __path__",
        SpecWarning,
        stacklevel=3,
    )
