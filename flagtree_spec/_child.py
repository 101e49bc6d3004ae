"""Run a function or code in a fresh interpreter, and see which modules loaded from where.

The pytest plugin's ``flagtree_run`` fixture starts ``python -c BOOTSTRAP IN OUT``:
the bootstrap reads the caller's ``sys.path`` from the first pickle in file
*IN*, puts it in place, and only then imports this module, so the child
imports everything (the library included) from where the caller did.
:func:`main` then reads the job (a ``"module:function"`` name, a callable
pickled by reference, or source code), runs it, and writes its outcome to
*OUT*: the result, or the exception's type, text and formatted traceback.
Nothing is written to the child's stdout or stderr, which stay the program's.

:func:`loaded_files` is also what the plugin uses in the pytest process: the
origin (``__spec__.origin``, never ``__file__``, which ``inherit`` may point
at a lower file) and the ``__inherits__`` file of every loaded module of the
given root packages.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from collections.abc import Iterable
from typing import IO, Any, Optional

__all__ = ["BOOTSTRAP", "loaded_files", "main", "resolve"]

BOOTSTRAP = (
    "import sys, pickle\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    sys.path[:] = pickle.load(f)\n"
    "    from flagtree_spec._child import main\n"
    "    main(f, sys.argv[2])\n"
)


def loaded_files(
    roots: Iterable[str], only: Optional[Iterable[str]] = None
) -> tuple[set[str], set[str]]:
    """The real paths of the modules of *roots* loaded now, and of the files they inherit.

    A module counts by its ``__spec__.origin``; a module that ran a lower
    version through ``inherit(globals())`` also names that file in
    ``__inherits__``.  With *only*, just the modules of those names are looked
    at (the ones imported since the last look), not all of ``sys.modules``.
    """
    prefixes = tuple(f"{root}." for root in roots)
    names = set(roots)
    origins: set[str] = set()
    inherited: set[str] = set()
    items: list[tuple[str, Any]]
    if only is None:
        items = list(sys.modules.items())
    else:
        items = [(n, sys.modules.get(n)) for n in set(only)]
    for name, module in items:
        if module is None or (name not in names and not name.startswith(prefixes)):
            continue
        try:
            # Not getattr(): an attribute of a lazy module (LazyLoader) would execute it.
            namespace = object.__getattribute__(module, "__dict__")
        except (AttributeError, TypeError):
            continue
        if not isinstance(namespace, dict):
            continue
        origin = getattr(namespace.get("__spec__"), "origin", None)
        if isinstance(origin, str) and os.path.isabs(origin):
            origins.add(os.path.realpath(origin))
        lower = namespace.get("__inherits__")
        if isinstance(lower, str):
            inherited.add(os.path.realpath(lower))
    return origins, inherited


def resolve(target: str) -> Any:
    """The object named by ``"package.module:function"`` (a dotted attribute path after ``:``)."""
    import importlib

    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(
            f"{target!r} is not 'module:function'; name the function like 'pkg.ops:compute'"
        )
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _run_code(source: str) -> Any:
    """Execute *source* as a script; the value of its last line when that is an expression."""
    import ast

    tree = ast.parse(source, "<flagtree_run code>")
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body[-1].value)
        del tree.body[-1]
    exec(compile(tree, "<flagtree_run code>", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(last, "<flagtree_run code>", "eval"), namespace)


def _roots_seen() -> list[str]:
    state = sys.modules.get("flagtree_spec._state")
    auto = sys.modules.get("flagtree_spec._auto")
    roots = set(getattr(state, "_roots", {}))
    roots.update(getattr(auto, "_roots", ()))
    return sorted(roots)


def main(job: IO[bytes], out_path: str) -> None:
    """Run the job pickled in *job* (after the ``sys.path`` pickle) and write the outcome."""
    report = False
    outcome: tuple[Any, ...]
    try:
        kind, target, args, kwargs, report = pickle.load(job)
        if kind == "code":
            value = _run_code(target)
        else:
            func = resolve(target) if kind == "name" else target
            value = func(*args, **kwargs)
    except BaseException as exc:  # the parent reports every failure, SystemExit included
        outcome = ("error", type(exc).__qualname__, str(exc), traceback.format_exc())
    else:
        try:
            outcome = ("ok", pickle.dumps(value))
        except Exception as exc:
            message = f"the result {value!r:.200} cannot be pickled: {exc}"
            outcome = ("error", type(exc).__qualname__, message, traceback.format_exc())
    seen: tuple[list[str], list[str], list[str]] = ([], [], [])
    if report:
        roots = _roots_seen()
        origins, inherited = loaded_files(roots)
        seen = (roots, sorted(origins), sorted(inherited))
    with open(out_path, "wb") as out:
        pickle.dump((*outcome, seen), out)
