"""What ``import R`` imports: the modules the root package's ``__init__`` loads at start-up.

Importing the root package runs its ``__init__``; each import statement that
runs at module level (not in a function, not under ``try``/``except
ImportError``, ``if TYPE_CHECKING:`` or ``if __name__ == "__main__":``)
imports a module of the root package, its parent packages first, and runs
its module-level imports in turn, and so on; an override that calls
``inherit(globals())`` runs those of its lower versions too.  An import that
fails in any of those files makes ``import R`` fail.  :func:`startup_chain`
says through which chain of imports a file is reached from the root package,
found once per model, when first asked.
"""

from __future__ import annotations

import os
import weakref
from typing import NamedTuple, Optional

from .model import Model
from .source import Statement, resolve_relative

__all__ = ["Step", "describe", "import_fails", "startup_chain"]


class Step(NamedTuple):
    """One import on the way from the root package's ``__init__`` to a module."""

    file: str  # the file whose import statement runs
    line: int
    module: str  # the module it imports


class _Startup(NamedTuple):
    # module name -> the import that first reaches it (None: the root package)
    reached: dict[str, Optional[Step]]
    # file -> the modules it runs as (a lower version runs as the override's module)
    runs_as: dict[str, str]


_FOUND: weakref.WeakKeyDictionary[Model, _Startup] = weakref.WeakKeyDictionary()


def _targets(statement: Statement, package: str, root: str) -> list[str]:
    """The modules of the root package an import statement imports, parents first."""
    if statement.names:
        base = resolve_relative(statement.level, statement.module, package)
        if base is None:
            return []
        named = [base, *(f"{base}.{n}" for n in statement.names if n != "*")]
    else:
        named = [statement.module or ""]
    found: list[str] = []
    for name in named:
        parts = name.split(".")
        if parts[0] != root:
            continue
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix not in found:
                found.append(prefix)
    return found


def _walk(model: Model) -> _Startup:
    found = _FOUND.get(model)
    if found is not None:
        return found
    reached: dict[str, Optional[Step]] = {model.root: None}
    runs_as: dict[str, str] = {}
    pending = [model.root]
    while pending:
        name = pending.pop(0)
        module = model.resolve(name)
        if module.file is None or not module.file.endswith(".py"):
            continue
        package = name if module.kind == "package" else name.rpartition(".")[0]
        files = [module.file, *(lower.path for lower in model.inherited(module))]
        for path in files:
            runs_as.setdefault(os.path.normpath(path), name)
            source = model.source(path)
            if source.error is not None:
                continue
            for statement in source.facts().order:
                if statement.guarded:
                    continue
                for target in _targets(statement, package, model.root):
                    if target in reached:
                        continue
                    if model.resolve(target).kind == "missing":
                        continue  # a name of the package, or the import that fails
                    reached[target] = Step(path, statement.line, target)
                    pending.append(target)
    found = _FOUND[model] = _Startup(reached, runs_as)
    return found


def startup_chain(model: Model, path: str) -> Optional[list[Step]]:
    """The imports that lead from the root package's ``__init__`` to file *path* when
    ``import R`` runs, outermost first (empty for the root ``__init__`` itself); ``None``
    when importing the root package never runs *path*."""
    startup = _walk(model)
    name = startup.runs_as.get(os.path.normpath(path))
    if name is None:
        return None
    chain: list[Step] = []
    step = startup.reached.get(name)
    while step is not None:
        chain.append(step)
        step = startup.reached.get(_module_of(startup, step.file))
    return chain[::-1]


def _module_of(startup: _Startup, path: str) -> str:
    return startup.runs_as[os.path.normpath(path)]


def _run_by(model: Model, path: str) -> str:
    """`` (run by inherit() in F)`` for a lower version that override F runs."""
    loads = model.resolve(_module_of(_walk(model), path)).file
    if loads is None or os.path.normpath(loads) == os.path.normpath(path):
        return ""
    return f" (run by inherit() in {loads})"


def describe(model: Model, path: str, line: int) -> str:
    """``, so 'import R' fails (...)`` when the module-level import at *line* of *path*
    runs while the root package is imported; empty otherwise."""
    source = model.source(path)
    if source.error is not None or not any(
        s.line == line and not s.guarded for s in source.facts().order
    ):
        return ""
    return import_fails(model, path)


def import_fails(model: Model, path: str) -> str:
    """``, so 'import R' fails (...)`` when importing the root package runs file *path*
    (so that a failure at its module level stops it); empty otherwise."""
    chain = startup_chain(model, path)
    if chain is None:
        return ""
    steps = "; ".join(
        f"{s.file}:{s.line}{_run_by(model, s.file)} imports {s.module}" for s in chain
    )
    how = f": {steps}" if steps else ""
    return f", so 'import {model.root}' fails{how}"
