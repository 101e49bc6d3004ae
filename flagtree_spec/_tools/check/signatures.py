"""Whether a function's parameters accept a call's arguments, decided from syntax.

``check`` judges a trunk hook call ``spec("h", a, b, k=v)`` against the
``def`` of the hook that would run (FTS012), and an override's call of a
trunk function or class against the definition that runs (FTS024).  The model reads the parameters
(:func:`~flagtree_spec._tools.model.calls.signature_of`);
:func:`bind_error` applies Python's rules for binding a call with *n*
positional arguments and the given keyword names to them, and says why it
would raise ``TypeError``, or returns ``None`` when the call binds.  The rules
are those of ``inspect.Signature.bind`` (a test compares the two on generated
signatures and calls): positional arguments fill positional-only, then
positional-or-keyword parameters, the rest go to ``*args`` or are too many; a
keyword names a positional-or-keyword or keyword-only parameter not already
filled, or goes to ``**kwargs``, which also takes keywords named like a
positional-only parameter; every parameter without a default must be filled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..model.calls import Signature

__all__ = ["bind_error"]


def _names(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def bind_error(sig: Signature, positional: int, keywords: Sequence[str]) -> Optional[str]:
    """Why a call with *positional* arguments and *keywords* cannot bind to *sig*.

    ``None`` when it binds.  *keywords* are distinct names (a call that
    repeats one does not compile).
    """
    slots = (*sig.positional_only, *sig.positional)
    if positional > len(slots) and not sig.var_positional:
        most = len(slots)
        least = sig.required
        takes = f"{most}" if least == most else f"from {least} to {most}"
        plural = "s" if most != 1 else ""
        return f"takes {takes} positional argument{plural} but {positional} were given"
    filled = set(slots[:positional])
    unexpected: list[str] = []
    for name in keywords:
        if name in sig.positional_only:
            if not sig.var_keyword:
                return f"positional-only parameter {name!r} passed as a keyword"
        elif name in filled:
            return f"got multiple values for parameter {name!r}"
        elif name in sig.positional or name in sig.keyword_only:
            filled.add(name)
        elif not sig.var_keyword:
            unexpected.append(name)
    if unexpected:
        return f"got an unexpected keyword argument {_names(unexpected)}"
    missing = [n for n in slots[: sig.required] if n not in filled]
    if missing:
        return f"missing required positional argument {_names(missing)}"
    missing = [n for n in sig.keyword_only if n in sig.keyword_required and n not in filled]
    if missing:
        return f"missing required keyword-only argument {_names(missing)}"
    return None
