"""Entry points of group ``flagtree_spec.backends``, found without ``importlib.metadata``.

Importing :mod:`importlib.metadata` costs tens of milliseconds, which every
process that activates a backend would pay at start-up.  This module reads
the ``entry_points.txt`` files of the installed distributions directly, the
way ``importlib.metadata`` finds them: every ``*.dist-info`` and
``*.egg-info`` folder in each directory of ``sys.path``, the first
distribution of a (normalised) name winning.  The test suite checks it
against :mod:`importlib.metadata` on every supported Python version.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import NamedTuple

from ._config import open_regular
from ._log import logger

__all__ = ["GROUP", "EntryPoint", "scan"]

GROUP = "flagtree_spec.backends"


class EntryPoint(NamedTuple):
    """One entry point: its name, its value and the distribution folder that declares it."""

    name: str
    value: str
    dist: str


def _normalise(dist_folder: str) -> str:
    name = dist_folder.rpartition(".")[0].partition("-")[0]
    # PEP 503: runs of "-", "_" and "." are one "-".
    return "-".join(
        part for part in name.replace("_", "-").replace(".", "-").split("-") if part
    ).lower()


def _parse(text: str, group: str) -> list[tuple[str, str]]:
    """Parse the *group* section of an ``entry_points.txt`` (an INI file)."""
    found = []
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            found.append((name.strip(), value.strip()))
    return found


def scan(paths: Iterable[str] | None = None, group: str = GROUP) -> list[EntryPoint]:
    """Return the entry points of *group* declared by distributions on *paths*."""
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in sys.path if paths is None else paths:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # not a directory (a zip file), or gone
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            key = _normalise(name)
            if key in seen:
                continue
            meta = os.path.join(folder, name)
            try:
                # Never a plain open(): a FIFO there would block discovery for ever.
                fd = open_regular(os.path.join(meta, "entry_points.txt"))
                if fd is None:
                    logger.debug(
                        "%s/entry_points.txt is not a regular file (a FIFO or a device?); "
                        "its distribution declares no backend",
                        meta,
                    )
                    seen.add(key)
                    continue
                with open(fd, encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                if os.path.isdir(meta):
                    seen.add(key)
                continue
            seen.add(key)
            found.extend(EntryPoint(n, v, meta) for n, v in _parse(text, group))
    return found
