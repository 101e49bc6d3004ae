"""The exceptions every part of the library raises."""

from __future__ import annotations

__all__ = ["SpecConfigError", "SpecError", "SpecImportError"]


class SpecError(Exception):
    """Base class of every error raised by :mod:`flagtree_spec`."""


class SpecConfigError(SpecError):
    """The configuration (environment, markers, declarations, entry points) is invalid."""


class SpecImportError(SpecError):
    """A backend's hook module failed to import.

    Deliberately *not* an :class:`ImportError`: trunk code that guards an
    optional import with ``except ImportError`` must not swallow a broken
    backend.  The original exception is chained as ``__cause__``.
    """


for _cls in (SpecError, SpecConfigError, SpecImportError):
    _cls.__module__ = "flagtree_spec"
del _cls
