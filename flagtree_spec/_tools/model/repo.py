"""The root package of a FlagTree-style repository checkout.

A checkout keeps the trunk at ``<repo>/python/R`` and the backends under
``<repo>/third_party/B/``.  Its ``python/`` folder may hold several packages
(FlagTree's holds ``triton`` and ``setup_tools``): the root package is then
the one that some backend's spec root mirrors.
"""

from __future__ import annotations

import os
from typing import Optional

from ..._config import read_declaration
from ..._errors import SpecError

__all__ = ["RepoError", "detect_repo", "mirrored", "missing"]


class RepoError(Exception):
    """The checkout does not name one root package."""


def _packages(python: str) -> list[str]:
    return sorted(
        entry
        for entry in os.listdir(python)
        if entry.isidentifier() and os.path.isfile(os.path.join(python, entry, "__init__.py"))
    )


def mirrored(repo: str, candidates: list[str]) -> list[str]:
    """The *candidates* that a spec root under ``<repo>/third_party`` mirrors.

    A backend ``B`` mirrors ``R`` with a folder ``third_party/B/backend/spec/R``
    or ``third_party/B/python/R`` (a whole-tree copy), or with a declaration
    ``third_party/B/backend/spec/flagtree_spec.json`` whose ``mirror`` is ``R``.
    A declaration that cannot be read is skipped here (the model reports it).
    """
    third_party = os.path.join(repo, "third_party")
    found: set[str] = set()
    for backend in sorted(os.listdir(third_party)):
        spec = os.path.join(third_party, backend, "backend", "spec")
        for root in candidates:
            if os.path.isdir(os.path.join(spec, root)) or os.path.isdir(
                os.path.join(third_party, backend, "python", root)
            ):
                found.add(root)
        if os.path.isdir(spec):
            try:
                declaration = read_declaration(spec)
            except SpecError:
                continue
            if declaration is not None and declaration.mirror in candidates:
                found.add(declaration.mirror)
    return sorted(found)


def detect_repo(repo: str) -> Optional[str]:
    """The root package folder ``<repo>/python/R`` of a FlagTree-style repository.

    ``None`` when *repo* has no ``python/`` and ``third_party/`` folders or no
    package in ``python/``.  With several packages there, the one that a spec
    root mirrors; :class:`RepoError` when that leaves several or none.
    """
    python = os.path.join(repo, "python")
    if not os.path.isdir(python) or not os.path.isdir(os.path.join(repo, "third_party")):
        return None
    found = _packages(python)
    if len(found) <= 1:
        return os.path.join(python, found[0]) if found else None
    chosen = mirrored(repo, found)
    if len(chosen) == 1:
        return os.path.join(python, chosen[0])
    if chosen:
        why = f"spec roots under {os.path.join(repo, 'third_party')} mirror {', '.join(chosen)}"
    else:
        why = f"no spec root under {os.path.join(repo, 'third_party')} mirrors one of them"
    pick = (chosen or found)[0]
    raise RepoError(
        f"{python} holds several packages ({', '.join(found)}) and {why}; choose one with "
        f"--root {pick} (short for --trunk {os.path.join(python, pick)})"
    )


def missing(repo: str) -> str:
    """What *repo* lacks to be a FlagTree-style repository: ``"no third_party/ folder
    (...)"``, for messages."""
    python = os.path.join(repo, "python")
    lacks = []
    if not os.path.isdir(python):
        lacks.append("no python/ folder (the root package is python/R/__init__.py)")
    elif not _packages(python):
        lacks.append("no package in python/ (python/R/__init__.py)")
    if not os.path.isdir(os.path.join(repo, "third_party")):
        lacks.append("no third_party/ folder (the backends' folders)")
    return " and ".join(lacks) if lacks else "nothing missing"
