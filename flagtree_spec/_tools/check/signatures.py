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

import ast
from collections.abc import Sequence
from typing import Optional, Union

from ..model.calls import Signature, signature_of

__all__ = ["bind_error", "call_shape", "callable_signature"]


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


def callable_signature(
    node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef],
) -> Optional[Signature]:
    """What a call of the ``def`` or ``class`` *node* binds to, or ``None`` when unknown.

    A class is called through its ``__init__`` (its first parameter, ``self``,
    filled by the call); a class without one in its body, or one with
    decorators (a dataclass writes its own), is unknown.
    """
    if not isinstance(node, ast.ClassDef):
        return signature_of(node)
    if node.decorator_list:
        return None
    init = next(
        (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None or init.decorator_list:
        return None
    sig = signature_of(init)
    if sig.positional_only:
        return sig._replace(positional_only=sig.positional_only[1:], required=sig.required - 1)
    if sig.positional:
        return sig._replace(positional=sig.positional[1:], required=max(sig.required - 1, 0))
    return None  # def __init__(*args): the instance is somewhere in args


def call_shape(call: ast.Call) -> Optional[tuple[int, tuple[str, ...]]]:
    """The number of positional arguments and the keyword names of *call*.

    ``None`` when it unpacks (``*a``, ``**k``): what it passes is unknown.
    """
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    return len(call.args), tuple(k.arg for k in call.keywords if k.arg is not None)
