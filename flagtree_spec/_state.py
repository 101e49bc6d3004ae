"""Which backend is active for each root package, and what that means.

A root package's state (backend stack, where it came from, spec roots, hook
table) is resolved once, when the library first needs it, and replaced only
by :func:`activate`.  The module global ``_roots`` maps root package names to
their :class:`RootState`; the dispatch object used by ``spec()`` is derived
from it by :func:`refresh_dispatch` whenever it changes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from typing import Optional

from . import _calls, _entrypoints
from ._calls import Hook, HookTable
from ._config import (
    Marker,
    check_backend_name,
    env_flag,
    parse_module_names,
    parse_stack,
    read_marker,
)
from ._discovery import Discovery, SpecRoot, discover, explicit_roots
from ._errors import SpecConfigError, SpecError
from ._log import logger

__all__ = ["RootState", "lock", "refresh_dispatch", "root_dir", "state_of"]

# Held while the state changes; never while user code (a hook module) runs.
lock = threading.RLock()


class Override:
    """What ``activate()`` asked for: a backend stack, or explicit spec roots."""

    __slots__ = ("spec_roots", "stack")

    def __init__(self, stack: tuple[str, ...], spec_roots: Optional[tuple[str, ...]]) -> None:
        self.stack = stack
        self.spec_roots = spec_roots


_override_all: Optional[Override] = None
_override_root: dict[str, Override] = {}


class RootState:
    """The resolved state of one root package."""

    __slots__ = ("disabled", "dropped", "rdir", "root", "source", "spec_roots", "stack", "table")

    def __init__(
        self,
        root: str,
        rdir: str,
        stack: tuple[str, ...],
        source: str,
        found: Discovery,
        disabled: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.rdir = rdir
        self.stack = found.stack if stack else ()
        self.source = source
        self.spec_roots = found.spec_roots
        self.table = HookTable(f"root package {root!r}", found.spec_roots)
        # Mirror folders that declarations exclude, by excluded module name.
        self.dropped: dict[str, tuple[str, ...]] = {}
        for spec_root in self.spec_roots:
            if spec_root.mirror is None:
                continue
            for name in spec_root.exclude:
                self.dropped[name] = (*self.dropped.get(name, ()), spec_root.mirror)
        # Modules of this root named by FLAGTREE_SPEC_DISABLE, read with the rest of the state.
        self.disabled = tuple(n for n in disabled if n.partition(".")[0] == root)

    @property
    def specialised(self) -> bool:
        return bool(self.spec_roots)

    @property
    def excludes(self) -> bool:
        """Whether a declaration or ``FLAGTREE_SPEC_DISABLE`` keeps some module on trunk."""
        return bool(self.dropped or self.disabled)

    def mirrors(self) -> list[SpecRoot]:
        return [r for r in self.spec_roots if r.mirror is not None]


_roots: dict[str, RootState] = {}
_entry_point_cache: Optional[list[_entrypoints.EntryPoint]] = None


def entry_points() -> list[_entrypoints.EntryPoint]:
    """The backend entry points, scanned once (again after ``activate()``)."""
    global _entry_point_cache
    if _entry_point_cache is None:
        _entry_point_cache = _entrypoints.scan()
    return _entry_point_cache


def root_dir(root: str) -> str:
    """The folder of root package *root*'s ``__init__`` (symlinks unresolved)."""
    module = sys.modules.get(root)
    if module is not None:
        origin: Optional[str] = getattr(module, "__file__", None)
        is_package = getattr(module, "__path__", None) is not None
    else:
        try:
            spec = importlib.util.find_spec(root)
        except (ImportError, ValueError) as exc:
            raise SpecError(f"cannot find root package {root!r}: {exc}") from exc
        if spec is None:
            raise SpecError(f"root package {root!r} is not importable; check its name and sys.path")
        origin = spec.origin if spec.has_location else None
        is_package = spec.submodule_search_locations is not None
    if not is_package:
        raise SpecError(f"{root!r} is a module, not a package; a root package has an __init__.py")
    if origin is None:
        raise SpecError(
            f"root package {root!r} is a namespace package (no __init__.py); top-level namespace "
            "packages are not supported: add an __init__.py to it"
        )
    return os.path.dirname(os.path.abspath(origin))


def _compute(root: str) -> RootState:
    rdir = root_dir(root)
    override = _override_root.get(root, _override_all)
    disabled = parse_module_names(
        os.environ.get("FLAGTREE_SPEC_DISABLE", ""), "FLAGTREE_SPEC_DISABLE"
    )
    stack: tuple[str, ...]
    if override is not None and override.spec_roots is not None:
        found = Discovery((), explicit_roots(root, rdir, override.spec_roots))
        state = RootState(root, rdir, (), "activate(spec_roots=...)", found, disabled)
    else:
        if override is not None:
            stack, source = override.stack, "activate()"
        else:
            stack, source = _from_environment(rdir)
        found = discover(
            root,
            rdir,
            stack,
            entry_points,
            strict=env_flag("FLAGTREE_SPEC_STRICT"),
            named_by=_NAMED_BY.get(source),
        )
        state = RootState(root, rdir, stack, source, found, disabled)
    logger.debug(
        "root package %s: backend stack %s (%s); spec roots: %s",
        root,
        ",".join(state.stack) or "none",
        state.source,
        ", ".join(f"{r.path} [{r.backend or r.kind}]" for r in state.spec_roots) or "none",
    )
    return state


# Stacks typed by a person, whose backends are checked for typos; never a marker's.
_NAMED_BY = {"activate()": "activate()", "FLAGTREE_BACKEND": "FLAGTREE_BACKEND"}


def _from_environment(rdir: str) -> tuple[tuple[str, ...], str]:
    value = os.environ.get("FLAGTREE_BACKEND", "")
    marker = _marker(rdir, bool(value.strip()))
    if value.strip():
        stack = parse_stack(value, "FLAGTREE_BACKEND")
        if value.strip() == "none":
            return (), "FLAGTREE_BACKEND=none"
        if (
            marker is not None
            and marker.stack != stack
            and not env_flag("FLAGTREE_SPEC_ALLOW_MISMATCH")
        ):
            raise SpecConfigError(
                f"FLAGTREE_BACKEND={value.strip()!r} contradicts the build-time marker "
                f"{marker.path}, which names {','.join(marker.stack) or 'no backend'!r}: this "
                "package was built for that backend. Unset FLAGTREE_BACKEND, or set "
                "FLAGTREE_SPEC_ALLOW_MISMATCH=1 if you really mean it"
            )
        return stack, "FLAGTREE_BACKEND"
    if marker is not None:
        return marker.stack, f"marker {marker.path}"
    return (), "no backend set"


# Unreadable markers already reported on stderr, by folder: once per process.
_reported: set[str] = set()


def _marker(rdir: str, environment_decides: bool) -> Optional[Marker]:
    """The build-time marker of *rdir*; one that cannot be read counts as none.

    Under ``FLAGTREE_SPEC_STRICT=1`` an unreadable marker is the
    :class:`SpecConfigError` it raised.  Otherwise it never makes an import
    fail: when ``FLAGTREE_BACKEND`` is set, that decides and a debug line
    notes the marker; when not, one line on stderr per folder and process
    says the package runs with no backend (not a warning, which a
    ``-W error`` run would turn into a failed import).
    """
    try:
        return read_marker(rdir)
    except SpecConfigError as exc:
        if env_flag("FLAGTREE_SPEC_STRICT"):
            raise SpecConfigError(f"{exc} [FLAGTREE_SPEC_STRICT=1]") from None
        if environment_decides:
            logger.debug("build-time marker ignored, FLAGTREE_BACKEND decides: %s", exc)
        elif rdir not in _reported:
            _reported.add(rdir)
            logger.debug("build-time marker ignored: %s", exc)
            if sys.stderr is not None:  # None under pythonw
                sys.stderr.write(
                    f"flagtree_spec: build-time backend marker ignored, so no backend is "
                    f"active: {exc}. Set FLAGTREE_BACKEND to choose one, or "
                    "FLAGTREE_SPEC_STRICT=1 to make this an error\n"
                )
        return None


def state_of(root: str) -> RootState:
    """The state of *root*, resolved on first use."""
    state = _roots.get(root)
    if state is None:
        with lock:
            state = _roots.get(root)
            if state is None:
                state = _compute(root)
                _roots[root] = state
                refresh_dispatch()
    return state


# --------------------------------------------------------------------------- dispatch


_NULL = HookTable("no specialised root package", ())


def _caller_root(depth: int) -> str:
    name = sys._getframe(depth + 1).f_globals.get("__name__") or "?"
    return str(name).partition(".")[0]


def _first_call(hook: str) -> Optional[Hook]:
    """No root package known yet: resolve the caller's root (the dispatch then changes)."""
    root = _caller_root(2)
    try:
        state = state_of(root)
    except SpecError as exc:
        raise SpecError(
            f"spec({hook!r}) was called from {root!r}, which is not inside a root package, "
            "and no root package has called spec_path() yet; use for_root('pkg').spec"
        ) from exc
    return state.table[hook] if state.specialised else _NULL[hook]


def _by_caller(hook: str) -> Optional[Hook]:
    """Several roots are specialised: the caller's root package decides."""
    root = _caller_root(2)
    state = _roots.get(root)
    if state is None:
        known = ", ".join(sorted(r for r, s in _roots.items() if s.specialised))
        raise SpecError(
            f"spec({hook!r}) was called from outside every root package ({root!r}) while "
            f"several are specialised ({known}); use for_root('pkg').spec"
        )
    return state.table[hook] if state.specialised else _NULL[hook]


def refresh_dispatch() -> None:
    """Derive what ``spec()`` consults from the known root states."""
    specialised = [s for s in _roots.values() if s.specialised]
    if not _roots:
        _calls.set_dispatch({}, _first_call)
    elif not specialised:
        _calls.set_dispatch(_NULL.hooks, _NULL.resolve)
    elif len(specialised) == 1:
        table = specialised[0].table
        _calls.set_dispatch(table.hooks, table.resolve)
    else:
        _calls.set_dispatch({}, _by_caller)


refresh_dispatch()


def known_roots() -> dict[str, RootState]:
    """A snapshot of the resolved root states."""
    return dict(_roots)


def private_hook_root(name: str) -> Optional[SpecRoot]:
    """The spec root whose hook module has the private name *name*, if any is known."""
    for state in list(_roots.values()):
        for spec_root in state.spec_roots:
            if spec_root.hook_name == name:
                return spec_root
    return None


def parse_backend(backend: object) -> tuple[str, ...]:
    """Validate ``activate()``'s *backend* argument."""
    if backend is None:
        return ()
    if isinstance(backend, str):
        return parse_stack(backend, "activate(backend=...)")
    if isinstance(backend, Sequence) and all(isinstance(b, str) for b in backend):
        for name in backend:
            check_backend_name(name.strip(), "activate(backend=[...])")
        return parse_stack(",".join(backend), "activate(backend=[...])") if backend else ()
    raise SpecError(
        f"activate(backend={backend!r}): give a backend name, a stack like 'a,b' or a list of names"
    )


def known_root(root: str) -> Optional[RootState]:
    """The state of *root* if it has been resolved, else ``None`` (never resolves)."""
    return _roots.get(root)
