"""Hooks that trunk code fetches by name in a loop, found from syntax.

``for n in LIST: spec_func(n)`` (or ``spec(n)``, ``getattr(hooks, n)``,
``hasattr(hooks, n)``, also with literal strings around the name) calls the
hooks named in ``LIST``: :func:`dynamic_hooks` records such loops, the hook
names of loops over a literal list, and the module's literal lists of names,
which another module's loop may run over.
"""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Mapping
from typing import NamedTuple, Optional

from .calls import call_name
from .facts import statements, string_list

__all__ = ["NO_DYNAMIC", "Dynamic", "dynamic_hooks"]


class Dynamic(NamedTuple):
    """Hooks a module fetches by name in a loop (``for n in LIST: spec_func(n)``, or
    ``getattr(hooks, n)``/``hasattr(hooks, n)``), and its module-level literal lists."""

    lists: Mapping[str, tuple[str, ...]]  # module-level NAME = [literal strings]
    # (list or attribute name, prefix, suffix) of each such loop: the hook fetched
    # is prefix + item + suffix (getattr(spec, "ext_" + n))
    looped: frozenset[tuple[str, str, str]]
    names: frozenset[str]  # hook names such loops run over a literal list of


_FETCH = frozenset({"spec", "spec_call", "spec_func", "getattr", "hasattr"})
# A call that fetches a hook by a name that is no literal: spec(n), getattr(x, n).
_FETCH_BY_NAME = re.compile(r"spec(?:_func)?\(\s*[A-Za-z_(]")


def _dynamic(tree: ast.Module, loops: bool) -> Dynamic:
    lists: dict[str, tuple[str, ...]] = {}
    for top in tree.body:
        if isinstance(top, ast.Assign):
            targets, value = top.targets, top.value
        elif isinstance(top, ast.AnnAssign) and top.value is not None:
            targets, value = [top.target], top.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found = string_list(value)
                if found is not None:
                    lists[target.id] = found
    looped: set[tuple[str, str, str]] = set()
    names: set[str] = set()
    aliases: dict[str, str] = {}  # local = something.NAME (or NAME), anywhere
    for node in statements(tree.body) if loops else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, (ast.Name, ast.Attribute)):
                aliases[target.id] = call_name(value)
        if not isinstance(node, (ast.For, ast.AsyncFor)) or not isinstance(node.target, ast.Name):
            continue
        var = node.target.id
        shapes = {
            shape
            for stmt in node.body
            for inner in ast.walk(stmt)
            if isinstance(inner, ast.Call) and call_name(inner.func) in _FETCH
            for arg in inner.args[:2]
            for shape in [_fetched_name(arg, var)]
            if shape is not None
        }
        literal = string_list(node.iter)
        for prefix, suffix in shapes:
            if literal is not None:
                names.update(prefix + item + suffix for item in literal)
            elif isinstance(node.iter, (ast.Name, ast.Attribute)):
                name = call_name(node.iter)
                looped.add((name, prefix, suffix))
                if name in aliases:
                    looped.add((aliases[name], prefix, suffix))
    if not (lists or looped or names):
        return NO_DYNAMIC
    return Dynamic(lists, frozenset(looped), frozenset(names))


# What most modules have: no literal list, no loop fetching hooks (shared, read only).
NO_DYNAMIC = Dynamic(types.MappingProxyType({}), frozenset(), frozenset())


def _fetched_name(node: ast.expr, var: str) -> Optional[tuple[str, str]]:
    """``(prefix, suffix)`` when *node* is loop variable *var*, maybe with literal
    strings added before or after it (``"ext_" + var``, ``f"ext_{var}"``)."""
    if isinstance(node, ast.Name) and node.id == var:
        return "", ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = node.left, node.right
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            inner = _fetched_name(right, var)
            return None if inner is None else (left.value + inner[0], inner[1])
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            inner = _fetched_name(left, var)
            return None if inner is None else (inner[0], inner[1] + right.value)
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        at = [
            i
            for i, p in enumerate(parts)
            if isinstance(p, ast.FormattedValue) and _fetched_name(p.value, var) == ("", "")
        ]
        others = [p for i, p in enumerate(parts) if i not in at]
        if len(at) == 1 and all(
            isinstance(p, ast.Constant) and isinstance(p.value, str) for p in others
        ):
            text = [p.value if isinstance(p, ast.Constant) else "\0" for p in parts]
            prefix, _, suffix = "".join(str(t) for t in text).partition("\0")
            return prefix, suffix
    return None


def dynamic_hooks(tree: ast.Module, text: str) -> Dynamic:
    """The hooks module *tree* (parsed from *text*) fetches by name in loops, and its
    module-level literal lists of names."""
    loops = "for " in text and (
        "getattr(" in text or "hasattr(" in text or bool(_FETCH_BY_NAME.search(text))
    )
    return _dynamic(tree, loops)
