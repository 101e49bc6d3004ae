"""What a session asked of the plugin, kept in the config's stash.

Its own module so that the session (which fills it) and the report (which
reads it) both import it, and neither imports the other for its type.
"""

from __future__ import annotations

from typing import Optional

import pytest

__all__ = ["SETTINGS", "Settings"]


class Settings:
    """What the session asked for, kept in the config's stash."""

    __slots__ = ("backend", "checked", "reports", "roots", "saved", "source", "stack")

    def __init__(self) -> None:
        self.stack: Optional[tuple[str, ...]] = None  # None: the plugin selects nothing
        self.backend = ""  # the value as given
        self.source = ""  # where it came from
        self.roots: tuple[str, ...] = ()
        self.reports: list[str] = []
        self.saved: Optional[tuple[bool, str]] = None  # FLAGTREE_BACKEND before the session
        self.checked = False  # whether the stack's backends were found to exist


SETTINGS = pytest.StashKey[Settings]()
