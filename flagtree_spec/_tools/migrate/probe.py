"""Run in a fresh interpreter by ``migrate --verify``: import modules, describe them.

``python migrate_probe.py CONFIG`` reads the JSON object CONFIG
(``folder``, ``modules``, ``strip``, ``report``), puts the folder first on
``sys.path``, imports every module in order and writes to the file
``report`` a JSON object: per module, whether it imported (or the exception's type and
message) and, for the names its namespace ends with, a *digest* of each
value that is equal in two processes exactly when the value is "the same
code": a function by its code object (bytecode, constants, names; not its
file or line numbers), a class by its bases and members, a module by its
name, plain data by its ``repr`` when that holds no address (with the
folders named in ``strip`` written as ``<root>``, so a path computed from
``__file__`` compares equal across two trees).  The digests
are taken after every module was imported, so attributes set on a module
or a class by a later import count.

Beside the digests, each module's entry holds ``origins`` (for a function
or class: the module and qualified name that defined it, so a value reached
through an import is compared with its own module's counterpart),
``member_origins`` (the same for the functions of each class),
``references`` and ``member_references`` (for a list, tuple or dict that
holds functions or classes, which ones, so each is judged in its own
module) and
``unbound`` (the global names its functions read that neither the module
nor the builtins bind: a name the new tree lost that code still uses).

This file imports only the standard library and never ``flagtree_spec``:
it describes whatever the import system finds.
"""

from __future__ import annotations

import builtins
import dis
import hashlib
import importlib
import json
import sys
import types
from typing import Any, Optional

_SKIP = frozenset(
    (
        "__builtins__",
        "__cached__",
        "__doc__",
        "__file__",
        "__inherits__",
        "__loader__",
        "__name__",
        "__package__",
        "__path__",
        "__spec__",
    )
)
# __firstlineno__ (3.13) is where the class starts: layout, not code.  torch numbers
# each autograd Function's backward class in the order the classes are created
# (_autograd_function_id): a count of the process, not code.
_CLASS_SKIP = frozenset(
    (
        "__dict__",
        "__doc__",
        "__firstlineno__",
        "__module__",
        "__qualname__",
        "__weakref__",
        "_autograd_function_id",
    )
)


def _constant(c: object) -> str:
    if isinstance(c, types.CodeType):
        return _code(c)
    if isinstance(c, frozenset):  # ``x in {"a", "b"}``: its order follows string hashes
        return "frozenset(" + repr(sorted(map(_constant, c))) + ")"
    if isinstance(c, tuple):
        return "(" + ", ".join(map(_constant, c)) + ")"
    return repr(c)


def _code(co: types.CodeType) -> str:
    consts = [_constant(c) for c in co.co_consts]
    key = repr((co.co_name, co.co_code, consts, co.co_names, co.co_varnames, co.co_freevars))
    return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


_STRIP: list[str] = []


def digest(value: Any, depth: int = 0) -> str:
    """A description of *value* that two processes agree on when it is the same code."""
    if isinstance(value, types.FunctionType):
        # A decorated definition (functools.wraps): the code the module defined is
        # the wrapped function's; the wrapper belongs to the decorator.
        inner = value
        for _ in range(8):
            wrapped = getattr(inner, "__wrapped__", None)
            if not isinstance(wrapped, types.FunctionType):
                break
            inner = wrapped
        return f"def {inner.__qualname__} {_code(inner.__code__)}"
    if isinstance(value, (classmethod, staticmethod)):
        return f"{type(value).__name__} {digest(value.__func__, depth)}"
    if isinstance(value, property):
        parts = (value.fget, value.fset, value.fdel)
        return "property " + " ".join(digest(p, depth) for p in parts)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, type):
        if depth > 1:
            return f"class {value.__module__}.{value.__qualname__}"
        members = sorted(
            (k, digest(v, depth + 1)) for k, v in vars(value).items() if k not in _CLASS_SKIP
        )
        bases = [f"{b.__module__}.{b.__qualname__}" for b in value.__bases__]
        key = repr((bases, members))
        return f"class {value.__qualname__} {hashlib.sha1(key.encode()).hexdigest()[:16]}"
    if isinstance(value, (list, tuple, set, frozenset)) and depth < 2:
        items = [digest(v, depth + 1) for v in value]
        if isinstance(value, (set, frozenset)):
            items.sort()
        return f"{type(value).__name__}[{', '.join(items)}]"
    if isinstance(value, dict) and len(value) > 200:  # sys.modules, and the like
        return f"dict of {type(next(iter(value.values()))).__name__} values"
    if isinstance(value, dict) and depth < 2:
        pairs = sorted(f"{digest(k, depth + 1)}: {digest(v, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{type(value).__name__} {getattr(value, '__module__', '?')}.{value.__qualname__}"
    try:
        text = repr(value)
    except Exception:
        text = "?"
    if " at 0x" in text or len(text) > 300:
        return f"object of {type(value).__module__}.{type(value).__qualname__}"
    return _stripped(text)


def _stripped(text: str) -> str:
    for folder in _STRIP:
        text = text.replace(folder, "<root>")
    return text


def origin(value: Any) -> Optional[str]:
    """``module:qualname`` of the function or class *value* (a wrapped function's own)."""
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        for _ in range(8):
            wrapped = getattr(value, "__wrapped__", None)
            if not isinstance(wrapped, types.FunctionType):
                break
            value = wrapped
    elif not isinstance(value, type):
        return None
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    return f"{module}:{qualname}"


def _elements(value: Any) -> Optional[list[Any]]:
    """The items of an ordered container, keys and values of a dict in turn; else ``None``."""
    if isinstance(value, dict) and len(value) <= 200:
        return [x for pair in value.items() for x in pair]
    if isinstance(value, (list, tuple)):
        return list(value)
    return None


def references(value: Any) -> Optional[dict[str, Any]]:
    """How a container refers to functions and classes, so each can be judged at home.

    ``masked``: the container's digest with each function or class item
    written as its origin; ``items``: per item with an origin, its position,
    origin and digest.  ``None`` for a value that is no such container.
    """
    elements = _elements(value)
    if elements is None:
        return None
    found = [[i, o, digest(x, 1)] for i, x in enumerate(elements) if (o := origin(x)) is not None]
    if not found:
        return None
    shown = [f"ref {origin(x)}" if origin(x) is not None else digest(x, 1) for x in elements]
    return {"masked": f"{type(value).__name__}[{', '.join(shown)}]", "items": found}


_GLOBAL_READS = frozenset(("LOAD_GLOBAL", "LOAD_NAME"))


def _codes(value: Any) -> list[types.CodeType]:
    """The code objects of a function, its wrapped functions and its nested functions."""
    found: list[types.CodeType] = []
    pending: list[Any] = [value]
    while pending:
        v = pending.pop()
        if isinstance(v, (classmethod, staticmethod)):
            v = v.__func__
        if isinstance(v, property):
            pending.extend(f for f in (v.fget, v.fset, v.fdel) if f is not None)
            continue
        if isinstance(v, types.FunctionType):
            wrapped = getattr(v, "__wrapped__", None)
            if isinstance(wrapped, types.FunctionType):
                pending.append(wrapped)
            v = v.__code__
        if isinstance(v, types.CodeType):
            found.append(v)
            pending.extend(c for c in v.co_consts if isinstance(c, types.CodeType))
    return found


def unbound(module: types.ModuleType) -> list[str]:
    """Global names the module's own functions read that nothing binds."""
    namespace = vars(module)
    values: list[Any] = []
    for value in namespace.values():
        if isinstance(value, type) and value.__module__ == module.__name__:
            values.extend(vars(value).values())
        else:
            values.append(value)
    missing: set[str] = set()
    for value in values:
        func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        if isinstance(func, types.FunctionType) and func.__globals__ is not namespace:
            continue
        for code in _codes(value):
            wanted = [n for n in code.co_names if n not in namespace and not hasattr(builtins, n)]
            if not wanted:
                continue
            for ins in dis.get_instructions(code):
                if ins.opname in _GLOBAL_READS and ins.argval in wanted:
                    missing.add(str(ins.argval))
    return sorted(missing)


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        config = json.load(f)
    modules: list[str] = config["modules"]
    _STRIP.extend(sorted(config["strip"], key=len, reverse=True))
    sys.path.insert(0, config["folder"])
    results: dict[str, dict[str, Any]] = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # a failing module is a result, whatever it raises
            results[name] = {"error": _stripped(f"{type(exc).__name__}: {exc}")[:300]}
        else:
            results[name] = {}
    for name, result in results.items():
        module = sys.modules.get(name)
        if "error" in result or module is None:
            continue
        result["file"] = getattr(getattr(module, "__spec__", None), "origin", None)
        names = {k: v for k, v in sorted(vars(module).items()) if k not in _SKIP}
        result["names"] = {k: digest(v) for k, v in names.items()}
        # The members of each class, so that a difference can name the member.
        result["members"] = {
            k: {m: digest(x, 1) for m, x in vars(v).items() if m not in _CLASS_SKIP}
            for k, v in names.items()
            if isinstance(v, type)
        }
        result["origins"] = {k: o for k, v in names.items() if (o := origin(v)) is not None}
        result["member_origins"] = {
            k: {m: o for m, x in vars(v).items() if (o := origin(x)) is not None}
            for k, v in names.items()
            if isinstance(v, type)
        }
        result["bases"] = {
            k: [f"{b.__module__}.{b.__qualname__}" for b in v.__bases__]
            for k, v in names.items()
            if isinstance(v, type)
        }
        result["references"] = {k: r for k, v in names.items() if (r := references(v)) is not None}
        result["member_references"] = {
            k: {m: r for m, x in vars(v).items() if (r := references(x)) is not None}
            for k, v in names.items()
            if isinstance(v, type)
        }
        result["unbound"] = unbound(module)
    with open(config["report"], "w", encoding="utf-8") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
