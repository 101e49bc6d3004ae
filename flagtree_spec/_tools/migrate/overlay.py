"""The trees ``--verify`` imports, built in a scratch folder.

:func:`copy_overlay` builds the copy as the backend ran it: trunk's files
with the copy's laid over them, before anything changes.  :func:`merged_overlay`
builds, with a base, the copy as it would be had its maintainer taken trunk's
changes since the base into the modules the backend left alone.
:func:`trunk_copy` copies a trunk's Python files and links its other files
(compiled parts), so a scratch trunk can be changed (``--add-spec-path``)
while it still imports the real compiled parts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

from .steps import Plan

__all__ = ["copy_overlay", "merged_overlay", "trunk_copy"]


def copy_overlay(plan: Plan, where: str) -> str:
    """Build the copy as the backend ran it under *where*; return the folder holding it.

    Trunk's Python files are copied and its other files (compiled parts)
    linked, then the copy's files are copied over them, so the overlay
    survives ``--apply`` moving the copy and editing trunk's ``__init__`` files.
    """
    root = os.path.basename(plan.trunk)
    top = os.path.join(where, "copy")
    package = os.path.join(top, root)
    trunk_copy(plan.trunk, package)
    for folder, dirs, files in os.walk(plan.fork):
        # A linked folder of the copy points into trunk, which is there already.
        dirs[:] = [
            d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(folder, d))
        ]
        rel = os.path.relpath(folder, plan.fork)
        here = os.path.join(package, rel)
        if os.path.islink(here):
            # Trunk's linked folder (_C -> build/_C) where the copy has a real one (its
            # .pyi stubs): trunk's files, then the copy's over them, as for any folder.
            linked = os.path.realpath(here)
            os.unlink(here)
            trunk_copy(linked, here)
        os.makedirs(os.path.join(package, rel), exist_ok=True)
        for name in files:
            source, target = os.path.join(folder, name), os.path.join(package, rel, name)
            if os.path.islink(source):
                continue  # a link of the copy points into trunk, which is there already
            if os.path.lexists(target):
                os.unlink(target)
            shutil.copy2(source, target)
    return top


def merged_overlay(plan: Plan, copy_folder: str, alone: Iterable[str], top: str) -> bool:
    """Build under *top* the copy with trunk's version of each module in *alone*.

    *alone* holds the paths (relative to the package) of the copy's modules
    that the backend left alone (their syntax tree is the base's) and that trunk
    has, so trunk's changes since the base are what a migration with that base
    must bring there.  Trunk's version is its file
    as the "trunk alone" interpreter imports it (with the ``spec_path`` calls
    ``--add-spec-path`` inserted), so the two agree.  Returns whether anything
    differs from the copy; when nothing does, *top* is not made.
    """
    root = os.path.basename(plan.trunk)
    changes: dict[str, str] = {}  # path -> trunk's file
    for rel in alone:
        mine = os.path.join(copy_folder, root, *rel.split("/"))
        theirs = os.path.join(plan.trunk, *rel.split("/"))
        if os.path.isfile(theirs) and not _same_bytes(mine, theirs):
            changes[rel] = theirs
    if not changes:
        return False
    shutil.copytree(copy_folder, top, symlinks=True)
    for rel, theirs in changes.items():
        target = os.path.join(top, root, *rel.split("/"))
        if os.path.lexists(target):
            os.unlink(target)
        shutil.copy2(theirs, target)
    return True


def _same_bytes(a: str, b: str) -> bool:
    try:
        with open(a, "rb") as f, open(b, "rb") as g:
            return f.read() == g.read()
    except OSError:
        return False


def trunk_copy(trunk: str, package: str) -> None:
    """Trunk's Python files copied to *package*, its other files (compiled parts) linked."""
    for folder, dirs, files in os.walk(trunk):
        rel = os.path.relpath(folder, trunk)
        os.makedirs(os.path.join(package, rel), exist_ok=True)
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        for name in links:
            os.symlink(os.path.join(folder, name), os.path.join(package, rel, name))
        dirs[:] = [d for d in dirs if d != "__pycache__" and d not in links]
        for name in files:
            source, target = os.path.join(folder, name), os.path.join(package, rel, name)
            if name.endswith(".py"):
                shutil.copy2(source, target)
            else:
                os.symlink(source, target)
