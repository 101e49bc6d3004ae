"""``bind_symbols``: inject a backend's names into trunk modules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import NamedTuple, Optional, Union, overload

from ._errors import SpecError

__all__ = ["BindResult", "bind_symbols"]


class BindResult(NamedTuple):
    """What :func:`bind_symbols` did to one target module."""

    target: str
    bound: tuple[str, ...]
    skipped: tuple[str, ...]


@overload
def bind_symbols(
    source: object,
    target: ModuleType,
    names: Optional[Iterable[str]] = ...,
    *,
    overwrite: bool = ...,
    export: bool = ...,
) -> BindResult: ...


@overload
def bind_symbols(
    source: object,
    target: Sequence[ModuleType],
    names: Optional[Iterable[str]] = ...,
    *,
    overwrite: bool = ...,
    export: bool = ...,
) -> tuple[BindResult, ...]: ...


def bind_symbols(
    source: object,
    target: Union[ModuleType, Sequence[ModuleType]],
    names: Optional[Iterable[str]] = None,
    *,
    overwrite: bool = False,
    export: bool = True,
) -> Union[BindResult, tuple[BindResult, ...]]:
    """Bind *names* of *source* into the module *target* (or each of several modules).

    ::

        bind_symbols(my_language_ext, triton.language)

    *names* defaults to ``source.__all__``; with neither this is an error, as
    is a listed name that *source* lacks (checked before anything changes).
    A name the target already has is skipped unless *overwrite*.  With
    *export*, bound names are appended to the target's ``__all__`` when it has
    one.  Returns a :class:`BindResult` (a tuple of them for several targets).
    """
    if names is None:
        listed = getattr(source, "__all__", None)
        if listed is None:
            raise SpecError(
                f"bind_symbols(): {_label(source)} has no __all__; pass names=[...] explicitly"
            )
        names = listed
    if isinstance(names, str):
        raise SpecError(f"bind_symbols(names={names!r}): give a list of names, like [{names!r}]")
    wanted = list(dict.fromkeys(names))  # a name listed twice is bound once
    for name in wanted:
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(f"bind_symbols(): {name!r} is not a name")
    missing = [name for name in wanted if not hasattr(source, name)]
    if missing:
        raise SpecError(
            f"bind_symbols(): {_label(source)} has no attribute {missing[0]!r}"
            + (f" (nor {', '.join(map(repr, missing[1:]))})" if missing[1:] else "")
            + "; fix the names or the source's __all__"
        )
    single = isinstance(target, ModuleType)
    try:
        targets: list[object] = [target] if single else list(target)
    except TypeError:
        targets = [target]
    modules: list[ModuleType] = []
    for module in targets:
        if not isinstance(module, ModuleType):
            raise SpecError(f"bind_symbols(): target {module!r} is not a module")
        exported = getattr(module, "__all__", None)
        if export and exported is not None and not isinstance(exported, (list, tuple)):
            raise SpecError(
                f"bind_symbols(): {module.__name__}.__all__ is a {type(exported).__name__}; "
                "it must be a list or a tuple"
            )
        modules.append(module)
    results = [_bind_one(source, m, wanted, overwrite, export) for m in modules]
    return results[0] if single else tuple(results)


def _bind_one(
    source: object, module: ModuleType, names: list[str], overwrite: bool, export: bool
) -> BindResult:
    bound, skipped = [], []
    for name in names:
        if hasattr(module, name) and not overwrite:
            skipped.append(name)
            continue
        setattr(module, name, getattr(source, name))
        bound.append(name)
    exported = getattr(module, "__all__", None)
    if export and exported is not None:
        new = [n for n in bound if n not in exported]
        if isinstance(exported, list):
            exported.extend(new)
        elif new:
            module.__all__ = (*exported, *new)  # type: ignore[attr-defined]
    return BindResult(module.__name__, tuple(bound), tuple(skipped))


def _label(source: object) -> str:
    return getattr(source, "__name__", None) or repr(source)
