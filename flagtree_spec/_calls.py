"""Hook calls: ``spec()`` and ``spec_func()`` and the tables they read.

The work is done once: when the state changes, a plain ``dict`` from hook
name to hook callable (or ``None``) and a function for misses are installed
in the module globals ``_table`` and ``_miss``; a call is then one dictionary
subscription and one call.  A miss is resolved by :meth:`HookTable.resolve`,
which loads the root's hook modules the first time it runs and stores the
answer.  With several specialised roots the table stays empty and the miss
function looks at the caller's module instead (see :mod:`flagtree_spec._state`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Optional

from ._errors import SpecError, SpecImportError
from ._log import logger

if TYPE_CHECKING:
    from types import ModuleType

    from ._discovery import SpecRoot

__all__ = ["HookTable", "clear_failures", "dispatch", "set_dispatch", "spec", "spec_func"]

Hook = Callable[..., Any]


# Hook modules that failed to import, by module name, until activate() clears them.
_failures: dict[str, SpecImportError] = {}
_failure_causes: dict[str, BaseException] = {}


def clear_failures() -> None:
    """Forget cached hook-module failures (the state changed)."""
    _failures.clear()
    _failure_causes.clear()


def import_hook_module(root: SpecRoot) -> ModuleType:
    """Import the hook module of spec root *root* through the import system."""
    assert root.hook_name is not None and root.hooks is not None
    name = root.hook_name
    if name in _failures:
        raise _new_failure(name)
    who = f"backend {root.backend!r}" if root.backend else f"spec root {root.path}"
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        _start_at_user_code(exc)
        error = SpecImportError(
            f"the hook module of {who} ({root.hooks}) failed to import: "
            f"{type(exc).__name__}: {exc}",
            name=name,
            path=root.hooks,
        )
        _failures[name] = error
        _failure_causes[name] = exc
        raise error from exc
    # The file it was loaded from (__file__ names the lower version after inherit()).
    where = getattr(getattr(module, "__spec__", None), "origin", None)
    if not isinstance(where, str) or os.path.realpath(where) != os.path.realpath(root.hooks):
        error = SpecImportError(
            f"the hook module of {who} is {root.hooks}, but importing it as "
            f"{name!r} loaded {where!r}; a mirror tree or another package shadows that name",
            name=name,
            path=root.hooks,
        )
        _failures[name] = error
        raise error
    logger.debug("hook module %s loaded from %s", name, root.hooks)
    return module


def _start_at_user_code(exc: BaseException) -> None:
    """Drop the leading frames of this library and the import system from *exc*'s traceback.

    What is left starts at the hook module's own code (for a syntax error,
    nothing is left: the error names its file and line itself), as Python
    shows the error of a failed ``import`` statement.
    """
    tb = exc.__traceback__
    while tb is not None and _internal(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    exc.__traceback__ = tb


def _internal(filename: str) -> bool:
    return filename.startswith("<frozen importlib") or os.path.dirname(filename) in _INTERNAL


_INTERNAL = frozenset(
    os.path.dirname(os.path.abspath(f)) for f in (__file__, importlib.__file__ or "")
)


def _new_failure(name: str) -> SpecImportError:
    first = _failures[name]
    error = SpecImportError(*first.args, name=first.name, path=first.path)
    error.__cause__ = _failure_causes.get(name)
    return error


class HookTable:
    """Hook name -> the first hook callable in priority order, or ``None``.

    ``hooks`` is a plain ``dict`` filled on demand: :meth:`resolve` loads the
    hook modules (once) and looks the name up, and the result is stored so the
    next lookup is a plain dictionary hit.
    """

    __slots__ = ("_modules", "hooks", "label", "spec_roots")

    def __init__(self, label: str, spec_roots: Sequence[SpecRoot]) -> None:
        self.hooks: dict[str, Optional[Hook]] = {}
        self.label = label
        self.spec_roots = tuple(r for r in spec_roots if r.hook_name is not None)
        self._modules: Optional[list[tuple[SpecRoot, ModuleType]]] = None

    def modules(self) -> list[tuple[SpecRoot, ModuleType]]:
        """The hook modules, highest priority first, loading them on first use.

        While a hook module is still being imported (it calls ``spec()`` at
        import time), the list is returned but not kept, so nothing is decided
        on a half-initialised module.
        """
        modules = self._modules
        if modules is None:
            modules = [(root, import_hook_module(root)) for root in self.spec_roots]
            if not any(_initialising(module) for _, module in modules):
                self._modules = modules
        return modules

    def loaded(self) -> bool:
        return self._modules is not None

    def __getitem__(self, hook: str) -> Optional[Hook]:
        try:
            return self.hooks[hook]
        except (KeyError, TypeError):
            pass
        return self.resolve(hook)

    def resolve(self, hook: str) -> Optional[Hook]:
        """Find *hook* in the hook modules and remember the answer."""
        if not isinstance(hook, str):
            raise SpecError(f"a hook name must be a str, not {type(hook).__name__} {hook!r}")
        modules = self.modules()
        final = self._modules is not None or not modules
        for root, module in modules:
            func = getattr(module, hook, None)
            if callable(func):
                if final:
                    logger.debug(
                        "hook %s for %s: %s from %s", hook, self.label, _name(func), root.hooks
                    )
                    self.hooks[hook] = func
                return func  # type: ignore[no-any-return]
        if final:
            if self.spec_roots:
                logger.debug("hook %s for %s: defined by no backend", hook, self.label)
            self.hooks[hook] = None
        return None


def _initialising(module: ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _name(func: object) -> str:
    return getattr(func, "__qualname__", None) or repr(func)


def _unset(hook: str) -> Optional[Hook]:
    raise AssertionError("spec() used before the state was set")


# What spec() consults: a plain dict (a hit is one subscription) and the
# function that handles a miss.  Both are replaced together by set_dispatch().
_table: dict[str, Optional[Hook]] = {}
_miss: Callable[[str], Optional[Hook]] = _unset


def set_dispatch(table: dict[str, Optional[Hook]], miss: Callable[[str], Optional[Hook]]) -> None:
    """Install what ``spec()`` and ``spec_func()`` consult."""
    global _table, _miss
    _miss = miss  # first: a call that still sees the old table resolves in the new state
    _table = table


def dispatch() -> tuple[dict[str, Optional[Hook]], Callable[[str], Optional[Hook]]]:
    """The current dispatch pair (for saving and restoring the state)."""
    return _table, _miss


def spec(hook: str, /, *args: Any, **kwargs: Any) -> Any:
    """Call the first backend in the stack that defines *hook* and return its result.

    ``spec("init_language")`` calls the active backend's ``init_language()``
    and returns what it returns, or ``None`` when no backend in the stack
    defines the hook.  Exceptions raised by the hook propagate.  Because a
    hook may legitimately return a falsy value (``0``, an empty array), do not
    write ``spec("h", x) or default``; use ``spec_func("h") or default``.
    """
    try:
        func = _table[hook]
    except (KeyError, TypeError):
        pass  # resolved below, outside the handler: a failure there must not chain a KeyError
    else:
        if func is None:
            return None
        if kwargs:
            return func(*args, **kwargs)
        return func(*args)
    func = _miss(hook)
    if func is None:
        return None
    return func(*args, **kwargs)


def spec_func(hook: str, /) -> Optional[Hook]:
    """Return the callable that ``spec(hook, ...)`` would call, or ``None``.

    Keep the result in hot loops: calling it directly costs nothing extra::

        add = spec_func("atomic_add_int64") or default_atomic_add
    """
    try:
        return _table[hook]
    except (KeyError, TypeError):
        pass
    return _miss(hook)
