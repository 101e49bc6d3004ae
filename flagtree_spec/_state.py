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
from types import FrameType
from typing import Optional

from . import _calls, _entrypoints
from ._calls import Hook, HookTable
from ._config import (
    FLAGTREE_SPEC_FILES,
    MAX_NAMES,
    Marker,
    check_backend_name,
    computes_marker,
    env_flag,
    parse_module_names,
    parse_stack,
    read_marker,
)
from ._discovery import Discovery, SpecRoot, discover, explicit_roots
from ._errors import SpecConfigError, SpecError
from ._log import logger

__all__ = [
    "RootState",
    "lock",
    "refresh_dispatch",
    "root_dir",
    "state_in",
    "state_of",
    "switch",
    "sync_marker_module",
]

# Guards the bookkeeping of the state and nothing else: it is held only for a few
# dictionary and list operations (and stat calls), never while a module is imported, a
# warning issued or the import system called, and auto mode's meta path finder never
# waits on it (it runs while the import system holds its own lock).  Resolving a state,
# which may import (json for a declaration) and warn, runs with no lock held and is
# published afterwards; see state_of().
lock = threading.RLock()
# Serialises activate() and the restores of its context managers, which compute new
# states (and may import) while holding it; nothing on an import path ever takes it.
switch = threading.RLock()


def _before_fork() -> None:
    # As logging does: the child gets the records whole, never in mid-change, and no
    # activate() is under way (it calls importlib.invalidate_caches(), which takes the
    # import system's module locks: one held at the fork would hang the child too).
    # In activate()'s order, so the two cannot deadlock with it.
    switch.acquire()
    lock.acquire()


def _after_fork_in_parent() -> None:
    lock.release()
    switch.release()


def _after_fork_in_child() -> None:
    # Fresh locks: one held by a thread that the child lacks would never be released.
    global lock, switch
    lock = threading.RLock()
    switch = threading.RLock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )

# Bumped whenever the overrides change; a state resolved for an older generation is
# computed again before it is relied on.
_generation = 0


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

    __slots__ = (
        "disabled",
        "dropped",
        "generation",
        "marker_done",
        "marker_own",
        "marker_value",
        "rdir",
        "root",
        "source",
        "spec_roots",
        "stack",
        "table",
    )

    def __init__(
        self,
        root: str,
        rdir: str,
        stack: tuple[str, ...],
        source: str,
        found: Discovery,
        disabled: tuple[str, ...] = (),
        generation: int = 0,
        marker_own: Optional[str] = "",
    ) -> None:
        self.generation = generation
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
        # FlagTree's marker module R._flagtree_backend, which FlagTree's trunk reads itself:
        # the FLAGTREE_BACKEND it computes from the build's marker (marker_own), and the
        # one this state makes it hold (see sync_marker_module).
        self.marker_own = marker_own
        # FlagTree's trunk knows one backend: the highest of the stack.
        self.marker_value = stack[0] if stack else ""
        self.marker_done = False  # synced for the spec_path calls (see sync_marker_module)

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
        # From the namespace: an attribute of a lazy module (LazyLoader) would run it.
        try:
            namespace = object.__getattribute__(module, "__dict__")
        except AttributeError:
            namespace = {}
        origin: Optional[str] = namespace.get("__file__")
        is_package = namespace.get("__path__") is not None
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


def _compute(root: str, generation: int = -1, rdir: Optional[str] = None) -> RootState:
    """Resolve the state of *root* for the overrides of *generation* (the current one by default).

    *rdir* is the folder of the root package's ``__init__``, when the caller
    knows which package is imported.  Called with no lock held: it may import
    (``json`` for a declaration), read files and warn.
    """
    if generation < 0:
        generation = _generation
    if rdir is None:
        rdir = root_dir(root)
    override = _override_root.get(root, _override_all)
    disabled = parse_module_names(
        os.environ.get("FLAGTREE_SPEC_DISABLE", ""), "FLAGTREE_SPEC_DISABLE", MAX_NAMES
    )
    stack: tuple[str, ...]
    if override is None:
        stack, source, marker = _from_environment(rdir)
    else:
        stack, source = override.stack, "activate()"
        try:
            marker = _marker(rdir, True)
        except SpecConfigError:  # FLAGTREE_SPEC_STRICT=1: activate() decides, not the marker
            marker = None
    # What FlagTree's module computes: the marker's backend, "" with none, unknown (None)
    # when the marker could not be read.
    own = (
        (marker.stack[0] if marker.stack else "")
        if marker is not None
        else (None if rdir in _unreadable else "")
    )
    if override is not None and override.spec_roots is not None:
        found = Discovery((), explicit_roots(root, rdir, override.spec_roots))
        state = RootState(
            root, rdir, (), "activate(spec_roots=...)", found, disabled, generation, own
        )
    else:
        found = discover(
            root,
            rdir,
            stack,
            entry_points,
            strict=env_flag("FLAGTREE_SPEC_STRICT"),
            named_by=_NAMED_BY.get(source),
        )
        state = RootState(root, rdir, stack, source, found, disabled, generation, own)
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


def _from_environment(rdir: str) -> tuple[tuple[str, ...], str, Optional[Marker]]:
    value = os.environ.get("FLAGTREE_BACKEND", "")
    marker = _marker(rdir, bool(value.strip()))
    if value.strip():
        stack = parse_stack(value, "FLAGTREE_BACKEND")
        if value.strip() == "none":
            return (), "FLAGTREE_BACKEND=none", marker
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
        return stack, "FLAGTREE_BACKEND", marker
    if marker is not None:
        return marker.stack, f"marker {marker.path}", marker
    return (), "no backend set", None


# Unreadable markers already reported on stderr, by folder: once per process.
_reported: set[str] = set()
# Folders whose marker could not be read (the sync of FlagTree's module then sets it).
_unreadable: set[str] = set()


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
        found = read_marker(rdir)
    except SpecConfigError as exc:
        _unreadable.add(rdir)
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
    _unreadable.discard(rdir)
    return found


def state_of(root: str) -> RootState:
    """The state of *root*, resolved on first use."""
    state = _roots.get(root)
    if state is None:
        state = _resolve(root)
    return state


def state_in(root: str, rdir: str) -> RootState:
    """The state of *root* whose package is the one in folder *rdir*.

    A state resolved earlier for a package of that name in another folder (a
    source checkout in the working folder, first on ``sys.path`` then; or
    ``sys.path`` changed since) describes another package: it is resolved
    again for this one, with no lock held, and replaces it.  Called when the
    root package itself is imported, once.
    """
    state = state_of(root)
    if state.rdir == rdir:
        return state
    logger.debug(
        "root package %s is imported from %s, not %s: state resolved again", root, rdir, state.rdir
    )
    fresh = _compute(root, -1, rdir)
    with lock:
        _roots[root] = fresh
    refresh_dispatch()
    return fresh


def _resolve(root: str) -> RootState:
    """Resolve *root*'s state with no lock held, then publish it.

    Two threads may compute it at once: the first to publish wins and both use
    its result.  A state computed while ``activate()`` changed the overrides (the
    generation moved on) is computed again, so it is never left in place stale.
    No lock is taken here at all: auto mode's finder calls this while the import
    system holds its lock, and ``dict.setdefault`` is atomic.
    """
    while True:
        generation = _generation
        current = _roots.get(root)
        if current is not None and current.generation >= generation:
            return current
        fresh = _compute(root, generation)
        current = _roots.get(root)
        if current is None:
            if _roots.setdefault(root, fresh) is fresh:
                refresh_dispatch()
        elif current.generation < fresh.generation:
            _roots[root] = fresh
            refresh_dispatch()


def sync_marker_module(state: RootState, *, again: bool = False) -> None:
    """Make FlagTree's marker module ``R._flagtree_backend`` name *state*'s backend.

    FlagTree's trunk reads ``R._flagtree_backend.FLAGTREE_BACKEND`` itself (to
    pick code paths per backend), a value its module computes from the build's
    marker file; the library's backend can also come from ``FLAGTREE_BACKEND``
    in the environment (``none`` included) or ``activate()``.  So that the two
    never disagree in one process, the module's ``FLAGTREE_BACKEND`` is set to
    the library's (the highest backend of its stack, ``""`` for none) where
    they differ.  A module the trunk imported already is set as it is; one not
    yet imported is imported for that only when its value must change, the root
    package is being imported, the trunk holds a FlagTree spec file and the
    module is FlagTree's, which *computes* the value (a marker module holding a
    literal is read, never executed).  Called with no lock held: from every
    ``spec_path`` call, where it does the work once per state, and with *again*
    from ``activate()`` and the restore of its context, which may have left
    another value in the module.
    """
    if state.marker_done and not again:
        return
    name = state.root + "._flagtree_backend"
    module = sys.modules.get(name)
    if module is None:
        if state.marker_value == state.marker_own:
            state.marker_done = True  # imported later, it computes the same value
            return
        if state.root not in sys.modules:
            return  # the root package's own spec_path call comes later
        state.marker_done = True
        if not _flagtree_trunk(state.rdir) or not computes_marker(state.rdir):
            return
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # the trunk's own import of it will report it
            logger.debug("cannot import %s to set its FLAGTREE_BACKEND: %r", name, exc)
            return
    if getattr(module, "FLAGTREE_BACKEND", None) != state.marker_value:
        logger.debug("%s.FLAGTREE_BACKEND set to %r (%s)", name, state.marker_value, state.source)
        setattr(module, "FLAGTREE_BACKEND", state.marker_value)  # noqa: B010
    state.marker_done = True


def _flagtree_trunk(rdir: str) -> bool:
    """Whether the trunk folder *rdir* holds FlagTree's spec file, under either name."""
    return any(os.path.isfile(os.path.join(rdir, n)) for n in FLAGTREE_SPEC_FILES)


# --------------------------------------------------------------------------- dispatch


_NULL = HookTable("no specialised root package", ())


# Roots specialised in this process: a package of theirs is managed (spec_path, auto
# mode), auto mode is installed for them, or their code called spec().  A state only
# read (active(), fingerprint(), trunk_path()) does not make its root one of them.
_used: set[str] = set()


def use(root: str) -> None:
    """Count *root* as specialised in this process (see ``_used``)."""
    if root not in _used:
        _used.add(root)
        refresh_dispatch()


def unuse(root: str) -> None:
    if root in _used:
        _used.discard(root)
        refresh_dispatch()


# Code objects of the functions that call a hook for a root named by their ``self``
# (``for_root("R").spec``); set by _activate.
bound_calls: set[object] = set()


def _module_of(globals_: dict[str, object]) -> str:
    """The module name of the code whose globals are *globals_*: a main module by its spec."""
    name = str(globals_.get("__name__") or "?")
    if name in ("__main__", "__mp_main__"):
        # "python -m R.cli": the module is R.cli, as its spec says.
        spec_name = getattr(globals_.get("__spec__"), "name", None)
        if isinstance(spec_name, str):
            return spec_name
    return name


def _caller_root(depth: int) -> str:
    return _module_of(sys._getframe(depth + 1).f_globals).partition(".")[0]


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
    if state.specialised:
        use(root)
        return state.table[hook]
    return _NULL[hook]


def _by_caller(hook: str) -> Optional[Hook]:
    """Several roots are specialised: the caller's root package decides.

    A hook module outside every root (``FLAGTREE_SPEC_PATH`` serves every root)
    whose hook calls a bare ``spec()`` answers for the root whose code called the
    hook: the nearest frame above it that belongs to a root package.
    """
    root = _caller_root(2)
    state = _roots.get(root)
    if state is None:
        state = _root_above_hook(sys._getframe(2))
    if state is None:
        known = ", ".join(sorted(r for r, s in list(_roots.items()) if s.specialised))
        raise SpecError(
            f"spec({hook!r}) was called from outside every root package ({root!r}) while "
            f"several are specialised ({known}); use for_root('pkg').spec"
        )
    return state.table[hook] if state.specialised else _NULL[hook]


def _root_above_hook(frame: Optional[FrameType]) -> Optional[RootState]:
    """The state of the root whose code called the hook running in *frame*, if it is one."""
    if frame is None:
        return None
    name = str(frame.f_globals.get("__name__") or "")
    hooks = {r.hook_name for s in list(_roots.values()) for r in s.spec_roots if r.hook_name}
    if not any(name == h or name.startswith(h + ".") for h in hooks):
        return None
    frame = frame.f_back
    while frame is not None:
        if frame.f_code in bound_calls:
            # Called through for_root("R").spec: the hook answers for R.
            return _roots.get(getattr(frame.f_locals.get("self"), "name", ""))
        state = _roots.get(_module_of(frame.f_globals).partition(".")[0])
        if state is not None:
            return state
        frame = frame.f_back
    return None


def refresh_dispatch() -> None:
    """Derive what ``spec()`` consults from the known root states.

    Lock-free: each thread that changes ``_roots`` calls this afterwards, and a
    call that derived the dispatch from a snapshot that changed meanwhile derives
    it again, so the last one to finish leaves the dispatch of the latest states.
    """
    while True:
        states = list(_roots.values())
        used = set(_used)
        specialised = [s for s in states if s.specialised]
        # The roots specialised in this process decide; a root whose state was only
        # read counts while no root is (as before it was read).
        specialised = [s for s in specialised if s.root in used] or specialised
        if not states:
            _calls.set_dispatch({}, _first_call)
        elif not specialised:
            _calls.set_dispatch(_NULL.hooks, _NULL.resolve)
        elif len(specialised) == 1:
            table = specialised[0].table
            _calls.set_dispatch(table.hooks, table.resolve)
        else:
            _calls.set_dispatch({}, _by_caller)
        if list(_roots.values()) == states and _used == used:
            return


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
