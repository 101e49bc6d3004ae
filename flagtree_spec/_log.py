"""Diagnostics: the ``flagtree_spec`` logger and ``FLAGTREE_SPEC_DEBUG``.

Every decision the library takes (backend chosen and why, each directory
added to each package, each hook module loaded, each module loaded from a
mirror) is logged at DEBUG level on the logger ``flagtree_spec``.  When
``FLAGTREE_SPEC_DEBUG`` is set to anything but ``""`` or ``"0"``, a stderr
handler is attached when the library is first imported, so running a program
once answers "why did my override not load?".
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["debug_enabled", "logger"]

logger = logging.getLogger("flagtree_spec")


def debug_enabled() -> bool:
    """Return whether ``FLAGTREE_SPEC_DEBUG`` asks for decision logging."""
    return os.environ.get("FLAGTREE_SPEC_DEBUG", "").strip() not in ("", "0")


def _configure() -> None:
    if not debug_enabled():
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("flagtree_spec: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    # The handler above already prints; do not print twice through the root logger.
    logger.propagate = False


_configure()
