"""``activate()``, ``active()`` and ``for_root()``: the state, set and read in code."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from types import TracebackType
from typing import Any, NamedTuple, Optional, Union

from . import _calls, _path, _state
from ._calls import Hook
from ._config import is_module_name
from ._discovery import SpecRoot
from ._errors import SpecConfigError, SpecError

__all__ = ["Activation", "ActiveState", "Root", "activate", "active", "for_root"]

PathLike = Union[str, "os.PathLike[str]"]


# The activate() contexts entered and not yet exited, innermost last (guarded by the lock).
_entered: list[Activation] = []


class Activation:
    """The result of :func:`activate`; as a context manager it restores the state before.

    The contexts restore as a stack: each one exits after every context entered
    after it.  One exited out of order (before a context entered later, in this
    thread or another, or a second time) raises :class:`SpecError` and leaves
    the state as it is: restoring it would bring back a state that a context
    still open relies on.  It no longer counts as open, so the context entered
    before it restores its own state when it exits, and no earlier one.
    """

    __slots__ = ("_saved",)

    def __init__(self, saved: tuple[Any, ...]) -> None:
        self._saved = saved

    def __enter__(self) -> Activation:
        with _state.lock:
            _entered.append(self)
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        with _state.lock:
            if _entered and _entered[-1] is self:
                _entered.pop()
                problem = ""
            elif self in _entered:
                later = len(_entered) - _entered.index(self) - 1
                _entered.remove(self)
                problem = f"{later} activate() context(s) entered after it are still open"
            else:
                problem = "it was exited already, or never entered"
        if problem:
            raise SpecError(
                f"an activate() context was exited out of order: {problem}. The contexts "
                "restore as a stack (the innermost exits first); the state is left as it "
                "is. activate() is process-wide: threads that need different backends "
                "must not each hold a context; call activate() to set the state you want"
            )
        _restore(self._saved, keep_imported=True)


def _snapshot() -> tuple[Any, ...]:
    return (
        _state._override_all,
        dict(_state._override_root),
        dict(_state._roots),
        _state._entry_point_cache,
        dict(_calls._failures),
        dict(_calls._failure_causes),
        _path.snapshot(),
        _path.ExcludeFinder._installed,
        dict(sys.path_importer_cache),
        set(_state._used),
    )


def _restore(saved: tuple[Any, ...], *, keep_imported: bool = False) -> None:
    """Put back the state *saved* by :func:`_snapshot`.

    With *keep_imported*, packages first imported since the snapshot stay
    managed, and get the ``__path__`` of the restored state.
    """
    with _state.switch:
        with _state.lock:
            changed = set(_state._roots) | set(saved[2])
            _state._override_all = saved[0]
            _state._override_root.clear()
            _state._override_root.update(saved[1])
            _state._generation += 1
            for state in saved[2].values():
                state.generation = _state._generation  # current again
            _state._roots.clear()
            _state._roots.update(saved[2])
            _state._entry_point_cache = saved[3]
            _calls._failures.clear()
            _calls._failures.update(saved[4])
            _calls._failure_causes.clear()
            _calls._failure_causes.update(saved[5])
            if keep_imported:
                packages, excludes = _path.snapshot()
                _path.restore(({**saved[6][0], **packages}, excludes))
                changed.update(p.root for p in packages.values())
            else:
                _path.restore(saved[6])
            managed = {p.root for p in list(_path._packages.values())}
            _state._used.clear()
            _state._used.update(saved[9] | (managed if keep_imported else set()))
        # Roots whose packages were first imported in the body are resolved again for
        # the restored state, with no lock held (resolving may import).
        if keep_imported:
            for name in sorted(changed & managed):
                _state.state_of(name)
        with _state.lock:
            _path.reapply(r for r in changed if r in _state._roots)
            if not saved[7] and not (
                any(s.excludes for s in list(_state._roots.values()))
                or any(_path._user_exclude.values())
                or _path._debug
            ):
                _path.ExcludeFinder.disable()
        _state.refresh_dispatch()
        for name in sorted(changed):
            restored = _state.known_root(name)
            if restored is not None:
                _state.sync_marker_module(restored, again=True)
        # The path finder's negative entries too: the cache is as it was before,
        # and each finder in it forgets what it listed while the body ran.
        importlib.invalidate_caches()
        sys.path_importer_cache.clear()
        sys.path_importer_cache.update(saved[8])
        for finder in saved[8].values():
            if finder is not None and hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()


def activate(
    backend: Union[str, Iterable[str], None] = None,
    *,
    root: Optional[str] = None,
    spec_roots: Optional[Iterable[PathLike]] = None,
) -> Activation:
    """Set the active backend stack in code, process-wide.

    ``activate("mthreads")`` or ``activate("a,b")`` selects a backend stack
    (highest priority first), overriding ``FLAGTREE_BACKEND`` and markers;
    ``activate()`` or ``activate(None)`` selects no backend (spec roots from
    ``FLAGTREE_SPEC_PATH`` still apply); ``activate(spec_roots=[...])`` replaces
    discovery with explicit spec roots, and ``spec_roots=[]`` turns everything
    off.  *root* limits the change to one root package; ``None`` means every
    root (and drops earlier per-root settings).

    Packages already imported get their ``__path__`` rewritten and hooks switch
    at once; modules already loaded stay as they are.  The import caches are
    invalidated.  The result is a context manager that restores the previous
    state exactly (the backend state, every ``__path__`` it rewrote, the
    library's finder on ``sys.meta_path`` and ``sys.path_importer_cache``), also
    when the body raises; modules imported in the body stay in ``sys.modules``,
    and packages among them get the ``__path__`` of the restored state::

        with activate("mthreads"):
            ...

    One exception: the first hook module imported under a private name
    (``flagtree_spec._hooks.<backend>_<digest>``, every hook module outside
    its root package) appends ``flagtree_spec._hooks.HookFinder`` to
    ``sys.meta_path``, where it stays for the rest of the process, also after
    the ``with`` block ends.  It answers only the private names of the hook
    modules of the current state and returns ``None`` for every other name; an
    import of another private name (an object of a hook module unpickled where
    the state lacks its backend) fails with a ``ModuleNotFoundError`` saying why.
    """
    stack = _state.parse_backend(backend)
    if root is not None and (not isinstance(root, str) or "." in root or not is_module_name(root)):
        raise SpecError(f"activate(root={root!r}): give a top-level package name like 'triton'")
    roots: Optional[tuple[str, ...]] = None
    if spec_roots is not None:
        if stack:
            raise SpecError("activate(): give a backend or spec_roots, not both")
        if isinstance(spec_roots, (str, bytes)):
            raise SpecError(f"activate(spec_roots={spec_roots!r}): give a list of directories")
        roots = tuple(os.path.abspath(os.fspath(p)) for p in spec_roots)
        for path in roots:
            # Checked now, not when a root package is first resolved (maybe at its import).
            if not os.path.isdir(path):
                raise SpecConfigError(f"spec root {path!r} is not a directory")
    override = _state.Override(stack, roots)
    # The new states are computed with no lock held (it may import and warn), and
    # published at once; activate() calls run one at a time.
    with _state.switch:
        with _state.lock:
            saved = _snapshot()
            if root is None:
                _state._override_all = override
                _state._override_root.clear()
            else:
                _state._override_root[root] = override
            _state._generation += 1
            generation = _state._generation
            _state._entry_point_cache = None
            affected = [r for r in list(_state._roots) if root is None or r == root]
        try:
            # Every new state is resolved before any is published.
            new = {r: _state._compute(r, generation) for r in affected}
        except BaseException:
            with _state.lock:
                _state._override_all, _state._entry_point_cache = saved[0], saved[3]
                _state._override_root.clear()
                _state._override_root.update(saved[1])
                _state._generation += 1
                # Roots first resolved meanwhile, for the refused state, are resolved again.
                for name, state in list(_state._roots.items()):
                    if state.generation == generation:
                        del _state._roots[name]
            _state.refresh_dispatch()
            raise
        with _state.lock:
            _state._roots.update(new)
            _calls.clear_failures()
            _path.reapply(affected)
            if any(s.excludes for s in new.values()):
                _path.ExcludeFinder.enable()
        _state.refresh_dispatch()
        importlib.invalidate_caches()
        for state in new.values():
            _state.sync_marker_module(state, again=True)
    return Activation(saved)


class ActiveState(NamedTuple):
    """What :func:`active` reports for one root package."""

    root: str
    backends: tuple[str, ...]
    source: str
    spec_roots: tuple[SpecRoot, ...]
    hook_modules: tuple[str, ...]
    hooks_loaded: bool
    packages: tuple[str, ...]
    loaded_from_mirrors: tuple[tuple[str, str], ...]


def active(root: str) -> ActiveState:
    """Describe the state of root package *root* (resolving it if needed).

    The backend stack and where it came from, the spec roots, the hook
    modules (and whether they are loaded yet), the packages specialised so
    far, and the modules loaded from mirror trees so far as ``(name, file)``.
    A module counts as loaded from a mirror by the file it was loaded from,
    ``__spec__.origin``: an override that calls :func:`inherit` counts, although
    its ``__file__`` is then the lower version's.
    """
    state = _state.state_of(_check_root(root, "active"))
    mirrors = tuple(r.mirror + os.sep for r in state.mirrors() if r.mirror)
    loaded = []
    for name, module in list(sys.modules.items()):
        if name == root or name.startswith(root + "."):
            # From the namespace: an attribute of a lazy module (LazyLoader) would run it.
            namespace = _path.namespace_of(module) or {}
            where = getattr(namespace.get("__spec__"), "origin", None)
            if isinstance(where, str) and where.startswith(mirrors):
                loaded.append((name, where))
    return ActiveState(
        root=root,
        backends=state.stack,
        source=state.source,
        spec_roots=state.spec_roots,
        hook_modules=tuple(r.hook_name for r in state.table.spec_roots if r.hook_name),
        hooks_loaded=state.table.loaded(),
        packages=tuple(
            sorted(p.name for p in _path.packages().values() if p.root == root and p.mirrors)
        ),
        loaded_from_mirrors=tuple(sorted(loaded)),
    )


def _check_root(root: object, what: str) -> str:
    if not isinstance(root, str) or "." in root or not is_module_name(root):
        raise SpecError(f"{what}({root!r}): give a top-level package name like 'triton'")
    return root


class Root:
    """``spec``, ``spec_func`` and ``active`` bound to one root package; see :func:`for_root`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"for_root({self.name!r})"

    def _table(self) -> Optional[_calls.HookTable]:
        state = _state.known_root(self.name) or _state.state_of(self.name)
        return state.table if state.specialised else None

    def spec(self, hook: str, /, *args: Any, **kwargs: Any) -> Any:
        """Like :func:`flagtree_spec.spec`, for this root package."""
        table = self._table()
        func = None if table is None else table[hook]
        if func is None:
            return None
        return func(*args, **kwargs)

    def spec_func(self, hook: str, /) -> Optional[Hook]:
        """Like :func:`flagtree_spec.spec_func`, for this root package."""
        table = self._table()
        return None if table is None else table[hook]

    def active(self) -> ActiveState:
        """Like :func:`flagtree_spec.active`, for this root package."""
        return active(self.name)


_state.bound_calls.add(Root.spec.__code__)


def for_root(root: str) -> Root:
    """``spec``/``spec_func``/``active`` bound to root package *root*.

    Use it where the bare functions cannot tell the root: several root
    packages are specialised and the call comes from outside them::

        triton_spec = for_root("triton").spec
    """
    return Root(_check_root(root, "for_root"))
