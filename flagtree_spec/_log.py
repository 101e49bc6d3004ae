"""Diagnostics: the ``flagtree_spec`` logger and ``FLAGTREE_SPEC_DEBUG``.

Every decision the library takes (backend chosen and why, each directory
added to each package, each hook module loaded, each module loaded from a
mirror) is logged at DEBUG level on the :mod:`logging` logger
``flagtree_spec``.  When ``FLAGTREE_SPEC_DEBUG`` is set to anything but
``""`` or ``"0"``, a stderr handler is attached when the library is first
imported, so running a program once answers "why did my override not load?".

Importing :mod:`logging` costs a few milliseconds, which every process that
imports a trunk package would pay.  So the library imports it only when the
variable is set; otherwise it logs only once the program itself has imported
:mod:`logging` (before that, no handler can exist that would show a DEBUG
line, so nothing is lost).
"""

from __future__ import annotations

import os
import sys

__all__ = ["debug_enabled", "logger"]


def debug_enabled() -> bool:
    """Return whether ``FLAGTREE_SPEC_DEBUG`` asks for decision logging."""
    return os.environ.get("FLAGTREE_SPEC_DEBUG", "").strip() not in ("", "0")


class _Logger:
    """Forwards to ``logging.getLogger("flagtree_spec")`` once :mod:`logging` is loaded."""

    __slots__ = ()

    def debug(self, msg: str, *args: object) -> None:
        logging = sys.modules.get("logging")
        if logging is not None:
            logging.getLogger("flagtree_spec").debug(msg, *args)


logger = _Logger()


def _configure() -> None:
    if not debug_enabled():
        return
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("flagtree_spec: %(message)s"))
    real = logging.getLogger("flagtree_spec")
    real.addHandler(handler)
    real.setLevel(logging.DEBUG)
    # The handler above already prints; do not print twice through the root logger.
    real.propagate = False


_configure()
