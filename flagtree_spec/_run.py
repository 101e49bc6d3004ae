"""Placeholder for the ``run`` and ``autostart`` commands."""

from __future__ import annotations

from typing import Any


def add_commands(commands: Any) -> None:
    """Register ``run`` and ``autostart`` with the ``flagtree-spec`` parser."""
