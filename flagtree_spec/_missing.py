"""What is said of a backend that has no spec root: one that exists nowhere (a
typo, with the close matches among the backends that do exist), or one whose
spec root lies in a wrong place (``third_party/B/spec``).

These paths run only for a backend without spec roots, so start-up with a
backend that exists never reads a folder listing or imports ``difflib`` or
``warnings`` for them.  Each warning is issued once per name and process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Optional, Protocol

from . import _entrypoints
from ._config import is_backend_name
from ._errors import SpecWarning

__all__ = [
    "Place",
    "backend_exists",
    "backend_traces",
    "close_matches",
    "existing_backends",
    "hush",
    "looked_in",
    "misplaced_note",
    "misplaced_roots",
    "nowhere_message",
    "unsay",
    "warn_nowhere",
]


class Place(Protocol):
    """What these diagnostics read of discovery for one root package (its finder)."""

    @property
    def root(self) -> str: ...

    @property
    def rdir(self) -> str: ...

    @property
    def repo(self) -> Optional[str]: ...

    def entry_points(self) -> Sequence[_entrypoints.EntryPoint]: ...

    def backend_folders(self, backend: str) -> list[tuple[str, str]]: ...


def misplaced_roots(finder: Place, backend: str) -> list[tuple[str, str]]:
    """Folders of *backend* that look like a spec root, or a mirror tree, in a wrong
    place (``third_party/B/spec``: the ``backend/`` level forgotten), each with the
    place it belongs; a few ``stat`` calls, made only for a backend without spec root."""
    places = []
    repo = finder.repo
    if repo is not None:
        third = os.path.join(repo, "third_party", backend)
        spec = os.path.join(third, "backend", "spec")
        places += [
            (os.path.join(third, "spec"), spec),  # the backend/ level forgotten
            (os.path.join(third, "backend", "specs"), spec),
            # A mirror tree with no spec root around it.
            (os.path.join(third, finder.root), os.path.join(spec, finder.root)),
            (os.path.join(third, "backend", finder.root), os.path.join(spec, finder.root)),
        ]
    installed = os.path.join(finder.rdir, "backends", backend)
    places.append(
        (os.path.join(installed, finder.root), os.path.join(installed, "spec", finder.root))
    )
    return [(found, target) for found, target in places if os.path.isdir(found)]


def misplaced_note(finder: Place, backend: str, *, warn: bool) -> str:
    """``"; F looks like a spec root in the wrong place: move it to T"`` for each
    misplaced folder of *backend* (empty when there is none); with *warn*, one
    :class:`SpecWarning` per folder and process says the same: the program runs on
    the trunk, which is almost never what was meant."""
    found = misplaced_roots(finder, backend)
    what = "".join(
        f"; {folder} looks like a "
        f"{'spec root' if os.path.basename(folder) in ('spec', 'specs') else 'mirror tree'} "
        f"in the wrong place: move it to {target}"
        for folder, target in found
    )
    claim = object()
    keys = [f"misplaced:{folder}" for folder, _ in found]
    if warn and found and all(_warned.setdefault(k, claim) is claim for k in keys):
        import warnings

        text = (
            f"backend {backend!r} has no spec root for package {finder.root!r}{what}; the "
            "program runs on the trunk without it"
        )
        try:
            warnings.warn(text, SpecWarning, stacklevel=_outside_frames())
        except SpecWarning as exc:
            exc._backends = tuple(keys)  # type: ignore[attr-defined]  # see unsay()
            raise
    return what


# Backend names already warned about: one SpecWarning per name and process.  A dict,
# whose setdefault() claims a name atomically when two threads resolve at once.
_warned: dict[str, object] = {}


def backend_traces(finder: Place, backend: str) -> list[str]:
    """Folders that show *backend* exists although it has no spec root here.

    ``<Rdir>/backends/B`` and ``<repo>/third_party/B``: a backend may change
    only C++ code and have no Python spec tree at all.
    """
    places = [os.path.join(finder.rdir, "backends", backend)]
    repo = finder.repo
    if repo is not None:
        places.append(os.path.join(repo, "third_party", backend))
    return [p for p in places if os.path.isdir(p)]


def existing_backends(finder: Place) -> list[str]:
    """Every backend name that exists for this root package, sorted.

    The folders of ``<Rdir>/backends``, ``<Rdir>/spec`` and
    ``<repo>/third_party`` and the names of the backend entry points.
    """
    names = {ep.name for ep in finder.entry_points()}
    folders = [os.path.join(finder.rdir, "backends"), os.path.join(finder.rdir, "spec")]
    repo = finder.repo
    if repo is not None:
        folders.append(os.path.join(repo, "third_party"))
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        names.update(
            e for e in entries if is_backend_name(e) and os.path.isdir(os.path.join(folder, e))
        )
    return sorted(names)


def close_matches(name: str, names: Sequence[str]) -> list[str]:
    """The names in *names* that look like a misspelling of *name*, best first."""
    import difflib  # only on this path: start-up with a backend that exists never needs it

    by_lower: dict[str, str] = {}
    for candidate in names:
        by_lower.setdefault(candidate.lower(), candidate)
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    return [by_lower[f] for f in found]


def looked_in(finder: Place, backend: str) -> list[str]:
    """Where the spec roots of *backend* are looked for, highest priority first."""
    places = [
        os.path.join(finder.rdir, "backends", backend, "spec"),
        os.path.join(finder.rdir, "spec", backend),
    ]
    repo = finder.repo
    if repo is not None:
        third = os.path.join(repo, "third_party", backend)
        places += [os.path.join(third, "backend", "spec"), os.path.join(third, "python")]
    places.append(f"entry point {backend!r} in group {_entrypoints.GROUP}")
    return places


def warn_nowhere(finder: Place, backends: Sequence[str], named_by: str) -> None:
    """Warn that *backends*, named by *named_by*, exist nowhere: one warning for them all.

    Once per name and process; nothing is said for a backend that exists without
    a Python spec tree.  Close matches are looked for among the first few names only.
    """
    claim = object()
    names = [
        b
        for b in backends
        if not backend_traces(finder, b) and _warned.setdefault(b, claim) is claim
    ]
    if not names:
        return
    import warnings

    if len(names) == 1:
        message = nowhere_message(finder, names[0], named_by) + " The program runs on without it."
    else:
        found = existing_backends(finder)
        shown = ", ".join(repr(n) for n in names[:_SHOWN])
        more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
        hints = []
        for backend in names[:_SHOWN]:
            matches = close_matches(backend, found)
            if matches:
                hints.append(f"{backend!r}: did you mean {' or '.join(repr(m) for m in matches)}?")
        if hints:
            hint = " ".join(hints)
        elif found:
            hint = "the backends that exist are " + ", ".join(found) + "."
        else:
            hint = "no backend exists for this package."
        message = (
            f"{named_by} names {len(names)} backends that exist nowhere for package "
            f"{finder.root!r}: {shown}{more} (looked in <Rdir>/backends/B/spec, "
            f"<Rdir>/spec/B, <repo>/third_party/B and the entry points of group "
            f"{_entrypoints.GROUP}); {hint} The program runs on without them."
        )
    try:
        warnings.warn(message, SpecWarning, stacklevel=_outside_frames())
    except SpecWarning as exc:
        # Raised as an error (-W error): which names it was about, for a caller that
        # defers it to a later resolution (unsay).
        exc._backends = tuple(names)  # type: ignore[attr-defined]
        raise


def unsay(error: BaseException) -> None:
    """Forget that the warning *error* (raised by warn_nowhere under ``-W error`` and
    caught) was issued, so the next resolution issues it again."""
    for name in getattr(error, "_backends", ()):
        _warned.pop(name, None)


def hush(backends: Sequence[str]) -> None:
    """Never warn about *backends* in this process: a caller that reports them itself
    (the pytest plugin's usage error) says it once, not twice."""
    claim = object()
    for backend in backends:
        _warned.setdefault(backend, claim)


def backend_exists(finder: Place, backend: str) -> bool:
    """Whether *backend* has a spec root, or a folder, for this root package."""
    return bool(finder.backend_folders(backend) or backend_traces(finder, backend))


def nowhere_message(finder: Place, backend: str, named_by: str) -> str:
    """Where *backend* (named by *named_by*) was looked for, and the close matches."""
    found = existing_backends(finder)
    matches = close_matches(backend, found)
    if matches:
        hint = "did you mean " + " or ".join(repr(m) for m in matches) + "?"
    elif found:
        hint = "the backends that exist are " + ", ".join(found) + "."
    else:
        hint = "no backend exists for this package."
    return (
        f"{named_by} names backend {backend!r}, which exists nowhere for package "
        f"{finder.root!r} (looked in {', '.join(looked_in(finder, backend))}); {hint}"
    )


# Missing backends named one by one in a warning about several; the rest are counted.
_SHOWN = 5


def _outside_frames() -> int:
    """The ``stacklevel`` of the first caller outside this library and the import system."""
    frame: Optional[FrameType] = sys._getframe(1)
    level = 1
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if not (
            module.partition(".")[0] in ("flagtree_spec", "importlib")
            or frame.f_code.co_filename.startswith("<frozen importlib")
        ):
            return level
        frame = frame.f_back
        level += 1
    return 1
