"""The exceptions every part of the library raises."""

from __future__ import annotations

__all__ = ["SpecConfigError", "SpecError", "SpecImportError", "SpecWarning"]


class SpecError(Exception):
    """Base class of every error raised by :mod:`flagtree_spec`."""


class SpecConfigError(SpecError):
    """The configuration (environment, markers, declarations, entry points) is invalid."""


class SpecImportError(SpecError, ImportError):
    """A backend's hook module failed to import.

    Both a :class:`SpecError` and an :class:`ImportError`: FlagTree's own
    spec file treated a hook module that fails to import as "no hook", and trunk
    code that guards an optional backend with ``except ImportError`` must keep
    working.  Catch :class:`SpecImportError` (or :class:`SpecError`)
    to tell a broken backend from a missing optional module.  The original
    exception is chained as ``__cause__``; ``name`` is the hook module's name.
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
