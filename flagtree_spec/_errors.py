"""The exceptions every part of the library raises."""

from __future__ import annotations

__all__ = ["SpecConfigError", "SpecError", "SpecImportError", "SpecWarning"]


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


class SpecWarning(UserWarning):
    """A backend named by ``FLAGTREE_BACKEND`` or :func:`activate` exists nowhere.

    Almost always a typo: the program runs on as if the backend had no spec
    root, and the warning names the close matches among the backends that do
    exist.  Issued once per backend name and process.  Under a warnings filter
    that turns warnings into errors (``python -W error``, pytest's
    ``filterwarnings = error``) it is raised like an error, as that filter asks.
    """


for _cls in (SpecError, SpecConfigError, SpecImportError, SpecWarning):
    _cls.__module__ = "flagtree_spec"
del _cls
