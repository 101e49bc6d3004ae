"""Backends named on the command line that have no spec root: a typo, or no Python changes.

A backend named with ``--backend`` or ``FLAGTREE_BACKEND`` that the model
found no spec root for is one of three things:

* it exists nowhere (no ``<Rdir>/backends/B``, no ``third_party/B``, no entry
  point ``B``): almost always a typo.  The static commands stop (exit 2) and
  name the folders looked in and the close matches among the backends found;
* it exists, but a folder that looks like its spec root sits in the wrong
  place (``third_party/B/spec`` instead of ``third_party/B/backend/spec``):
  also exit 2, naming that folder and where it belongs;
* it exists and has no Python spec tree at all (a backend may change only C++
  code): a notice, and the command goes on (scripts loop over
  ``third_party/*``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

from ... import _entrypoints
from ..._discovery import _Finder
from ..._missing import (
    backend_traces,
    close_matches,
    existing_backends,
    looked_in,
    misplaced_roots,
)

__all__ = ["Absent", "absent_backends"]


class Absent(NamedTuple):
    """A named backend without a spec root, and what was found instead."""

    backend: str
    named_by: str
    traces: tuple[str, ...]  # what shows that it exists
    misplaced: tuple[tuple[str, str], ...]  # (folder in a wrong place, where it belongs)
    looked_in: tuple[str, ...]
    found: tuple[str, ...]  # the backends that exist
    matches: tuple[str, ...]  # close matches among them

    @property
    def fatal(self) -> bool:
        """Whether a command that needs the backend's files must stop (exit 2)."""
        return not self.traces or bool(self.misplaced)

    def message(self, root: str) -> str:
        """What is wrong, where it was looked for, and what to do."""
        places = "".join(f"\n  {p}" for p in self.looked_in)
        head = f"backend {self.backend!r} ({self.named_by}) has no spec root for {root}"
        if self.misplaced:
            moves = "; ".join(
                f"{found} looks like {_looks_like(found)} in the wrong place: move it to {target}"
                for found, target in self.misplaced
            )
            return f"{head}: {moves}"
        if self.traces:
            return (
                f"{head}: it exists ({', '.join(self.traces)}) but has no Python spec tree, "
                f"so there is nothing of it to read (a backend may change only C++ code); "
                f"a spec root would be one of:{places}"
            )
        if self.matches:
            hint = "did you mean " + " or ".join(repr(m) for m in self.matches) + "?"
        elif self.found:
            hint = "no backend of a close name exists."
        else:
            hint = "no backend exists here at all."
        known = f" The backends found: {', '.join(self.found)}." if self.found else ""
        return f"backend {self.backend!r} ({self.named_by}) exists nowhere: {hint}{known}" + (
            f" Looked in:{places}"
        )

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = dict(self._asdict())
        data["exists"] = bool(self.traces)
        return data


def absent_backends(
    root: str,
    rdir: str,
    stack: Sequence[str],
    named_by: str,
    has_root: Sequence[str],
) -> list[Absent]:
    """The backends of *stack* (named by *named_by*) absent from *has_root*."""
    missing = [b for b in stack if b not in has_root]
    if not missing:
        return []
    points = _entrypoints.scan()
    finder = _Finder(root, rdir, lambda: points)
    found = existing_backends(finder)
    out = []
    for backend in missing:
        traces = backend_traces(finder, backend)
        traces += [f"entry point of {ep.dist}" for ep in points if ep.name == backend]
        out.append(
            Absent(
                backend=backend,
                named_by=named_by,
                traces=tuple(traces),
                misplaced=tuple(misplaced_roots(finder, backend)),
                looked_in=tuple(looked_in(finder, backend)),
                found=tuple(found),
                matches=tuple(close_matches(backend, found) if not traces else ()),
            )
        )
    return out


def _looks_like(folder: str) -> str:
    return "a spec root" if os.path.basename(folder) in ("spec", "specs") else "a mirror tree"
