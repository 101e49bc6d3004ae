"""The check rules about what an override takes from the trunk by name: FTS023, a name
it reads while it is imported that nothing binds, and FTS024, a call whose arguments
the definition that runs cannot take.

An override is written against one trunk; after an upgrade, a name it reads
may be gone (``NameError`` at import) and a function or class it calls may take
other parameters (``TypeError`` when the call runs).  Both are judged where
syntax decides: the names the override, its lower versions (through
``inherit``), the builtins and the star imports that can be followed bind;
the calls of names it imports from the root package, or inherits from its
lower version, that resolve to an undecorated ``def`` or a plain ``class``.
They register in :mod:`.registry`.
"""

from __future__ import annotations

import ast
import builtins
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Optional

from ..model.calls import Signature
from ..model.definitions import Definition, calls_of, definition_of, parameters
from ..model.model import Model
from ..model.modules import Module
from ..model.names import import_time_reads
from ..model.source import Source, resolve_relative
from ..model.startup import import_fails
from .registry import Hit, Rule, rule
from .signatures import bind_error

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__: list[str] = []

_BUILTINS = frozenset(dir(builtins))
# Names every module's namespace holds before its first statement runs (and after
# inherit(), the one it adds).
_MODULE_NAMES = frozenset(
    {
        "__name__",
        "__doc__",
        "__file__",
        "__spec__",
        "__loader__",
        "__package__",
        "__builtins__",
        "__cached__",
        "__annotations__",
        "__dict__",
        "__inherits__",
    }
)
_DEPTH = 6  # how far star imports and re-exports are followed


def _package(module: Module) -> str:
    return module.name if module.kind == "package" else module.name.rpartition(".")[0]


def _bound(model: Model, module: Module, source: Source, depth: int = _DEPTH) -> Optional[set[str]]:
    """Every name the module's namespace may hold once it ran: what its own statements
    bind, what its star imports bring and, for an override that inherits, what its
    lower versions bind; ``None`` when that cannot be told (a star import from outside
    the root package, ``bind_symbols``, a lower version that does not parse)."""
    facts = source.facts()
    if facts.unseen or depth == 0:
        return None
    found = set(facts.defined)
    if module.kind == "package":
        found.add("__path__")
    for level, written, names, _, _, _ in facts.imports:
        if "*" not in names:
            continue
        target = resolve_relative(level, written, _package(module))
        exported = _exported(model, target, depth - 1) if target else None
        if exported is None:
            return None
        found |= exported
    if facts.inherits:
        lowers = model.inherited(module)
        if not lowers:
            return None  # no lower version: FTS017
        for lower in lowers:
            below = _bound(model, module, lower.source, depth - 1)
            if below is None:
                return None
            found |= below
    return found


def _exported(model: Model, name: str, depth: int) -> Optional[set[str]]:
    """What ``from name import *`` binds; ``None`` when it cannot be told."""
    if name.partition(".")[0] != model.root:
        return None
    module = model.resolve(name)
    if module.file is None or not module.file.endswith(".py"):
        return None
    source = model.source(module.file)
    if source.error is not None:
        return None
    facts = source.facts()
    if facts.all_names is not None:
        return set(facts.all_names)
    names = _bound(model, module, source, depth)
    return None if names is None else {n for n in names if not n.startswith("_")}


@rule("FTS023", "error", "a name read while the module is imported is bound nowhere")
class UnboundName(Rule):
    """A module-level read (a decorator, a default value, an annotation evaluated
    at definition, a class body, any top-level statement) of a name that neither
    the file, its lower versions (``inherit``), its star imports nor the builtins
    bind raises ``NameError`` on import: typically a trunk name the new trunk
    dropped, which an inheriting override still reads."""

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        source = mf.parsed
        if mf.state != "live" or source is None or source.tree is None:
            return
        reads = import_time_reads(source.tree)
        if reads.unknown or not reads.reads:
            return
        candidates = {
            name: at
            for name, at in reads.reads.items()
            if name not in _BUILTINS
            and name not in _MODULE_NAMES
            and name not in reads.bound
            and name not in source.facts().defined
        }
        if not candidates:
            return
        model, module = mf.model, mf.module
        bound = _bound(model, module, source)
        if bound is None:
            return
        lowers = [lower.path for lower in model.inherited(module)] if mf.inherits else []
        below = f", nor its lower version {', '.join(lowers)} that inherit() runs" if lowers else ""
        fails = ""
        for name, (line, col) in sorted(candidates.items(), key=lambda item: item[1]):
            if name in bound:
                continue
            fails = fails or import_fails(model, mf.entry.path)
            yield Hit(
                mf.entry.path,
                line,
                col,
                f"reads {name!r} while it is imported, and nothing binds that name: not this "
                f"file{below}, nor a star import, nor the builtins; importing {module.name} "
                f"raises NameError{fails}; bind {name!r} here (the trunk may have dropped "
                "it) or stop reading it",
            )


# Per model: what each (file, name) asked about is bound to, with the parameters
# of a definition.
_DEFINITIONS: weakref.WeakKeyDictionary[
    Model, dict[tuple[str, str], Optional[tuple[Definition, Optional[Signature]]]]
] = weakref.WeakKeyDictionary()


def _definition(
    model: Model, module: Module, path: str, name: str
) -> Optional[tuple[Definition, Optional[Signature]]]:
    cache = _DEFINITIONS.setdefault(model, {})
    key = (path, name)
    if key in cache:
        return cache[key]
    tree = model.tree_of(path)
    found = definition_of(tree, name, _package(module)) if tree is not None else None
    result = None if found is None else (found, parameters(found))
    cache[key] = result
    return result


def _runs(
    model: Model, module: Module, name: str, depth: int = _DEPTH
) -> Optional[tuple[Definition, Signature, str]]:
    """The ``def`` or ``class`` that name *name* of *module* is bound to when its file
    has run, with its parameters and its file: followed through ``from ... import``
    and through the lower versions that ``inherit()`` runs; ``None`` when that cannot
    be told."""
    if depth == 0 or module.file is None or not module.file.endswith(".py"):
        return None
    files = [module.file, *(lower.path for lower in model.inherited(module))]
    for path in files:
        found = _definition(model, module, path, name)
        if found is None:
            facts = model.source(path).facts()
            if facts.defines_all and not facts.inherits:
                return None  # a star import or bind_symbols may bind it
            continue
        definition, signature = found
        if definition.kind in ("function", "class"):
            return None if signature is None else (definition, signature, path)
        if definition.kind == "import" and definition.module.partition(".")[0] == model.root:
            return _runs(model, model.resolve(definition.module), definition.name, depth - 1)
        return None
    return None


def _from_root(model: Model, package: str, source: Source) -> list[str]:
    """The names that *source*'s module-level ``from ... import`` statements of modules
    of the root package bind (aliases included)."""
    found: list[str] = []
    for level, written, names, line, _, _ in source.facts().imports:
        target = resolve_relative(level, written, package)
        if target is None or target.partition(".")[0] != model.root or "*" in names:
            continue
        if " as " in source.text:  # maybe bound under another name: read the statement
            tree = source.tree
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.ImportFrom) and node.lineno == line:
                    found.extend(a.asname or a.name for a in node.names)
        else:
            found.extend(names)
    return sorted(set(found) & source.facts().imported)


@rule("FTS024", "error", "a call whose arguments the definition that runs cannot take")
class CallArguments(Rule):
    """A call in an override of a function or class it takes from the root package
    (imported from a module of it, or left to its lower version by ``inherit``)
    whose arguments the ``def`` that runs (a class's ``__init__``) cannot bind
    raises ``TypeError`` when it runs: typically a trunk definition whose parameters
    changed since the override was written.  Judged only where syntax decides: an
    undecorated ``def``, a class without decorator or metaclass whose ``__init__``
    (or, without bases, whose lack of one) is plain, calls without ``*``/``**``
    unpacking, names no local variable shadows."""

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        source = mf.parsed
        if mf.state != "live" or source is None or source.tree is None:
            return
        model, module = mf.model, mf.module
        facts = source.facts()
        names = _from_root(model, _package(module), source)
        if mf.inherits:
            for lower in model.inherited(module):
                names += [
                    name
                    for name in lower.source.facts().defined
                    if name not in facts.defined and name not in names
                ]
        if not names:
            return
        errors: dict[tuple[str, int, tuple[str, ...]], Optional[str]] = {}
        # A call written as the version it shadows writes it is the trunk's own call.
        shadowed = mf.lower_source
        known = (
            frozenset(s.strip() for s in shadowed.text.splitlines()) if shadowed else frozenset()
        )
        for call in calls_of(source.tree, source.text, names, known):
            if call.unpacked:
                continue
            found = _runs(model, module, call.name)
            if found is None:
                continue
            definition, signature, path = found
            shape = (call.name, call.positional, call.keywords)
            if shape not in errors:
                errors[shape] = bind_error(signature, call.positional, call.keywords)
            error = errors[shape]
            if error is None:
                continue
            what = "class" if definition.kind == "class" else "function"
            yield Hit(
                mf.entry.path,
                call.line,
                call.col,
                f"{call.name}(...): the {what} {call.name}{signature.describe()} "
                f"that runs, at {path}:{definition.line}, {error}; it takes other arguments "
                "than this call passes (the trunk may have changed it): change the call",
            )
