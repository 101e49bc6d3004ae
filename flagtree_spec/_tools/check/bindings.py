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
from ..model.definitions import (
    Definition,
    calls_of,
    definition_of,
    parameters,
    plain_builtin_base,
    plain_class,
)
from ..model.facts import MODULE_NAMES
from ..model.inherited import Lower, bound_names, replaced_names
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
_DEPTH = 6  # how far star imports and re-exports are followed


def _package(module: Module) -> str:
    return module.name if module.kind == "package" else module.name.rpartition(".")[0]


def _deleted(model: Model, path: str) -> set[str]:
    """The names a module's top-level ``del`` statements leave unbound (deleted after
    their last binding): gone from the namespace an override inherits."""
    tree = model.tree_of(path)
    last: dict[str, bool] = {}  # name -> whether its last top-level event is a del
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Delete):
            last.update((t.id, True) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            last.update(((a.asname or a.name).partition(".")[0], False) for a in node.names)
        else:
            last.update((name, False) for name in bound_names(node))
    return {name for name, gone in last.items() if gone}


def _bound(
    model: Model, module: Module, source: Source, depth: int = _DEPTH, lower: bool = False
) -> Optional[set[str]]:
    """Every name the module's namespace may hold once it ran: what its own statements
    bind, what its star imports bring and, for an override that inherits, what its
    lower versions bind (less what they delete); ``None`` when that cannot be told (a
    star import from outside the root package, ``bind_symbols``, a lower version that
    does not parse).  *lower*: *source* is one of the lower versions (whose own
    ``inherit()`` the caller follows already)."""
    facts = source.facts()
    if facts.unseen or depth == 0:
        return None
    found = set(facts.defined)
    if lower:
        found -= _deleted(model, source.path)
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
    if facts.inherits and not lower:
        lowers = model.inherited(module)
        if not lowers:
            return None  # no lower version: FTS017
        for version in lowers:
            below = _bound(model, module, version.source, depth - 1, lower=True)
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
    """## What it does
    Finds the global names a mirror file reads while it is imported (its
    module-level statements, the decorators, default values and evaluated
    annotations of its `def`s, its class bodies) that nothing binds: not the
    file, not the lower versions its `inherit(globals())` runs (less what they
    `del`), not its star imports, not the builtins.

    ## Why is this bad?
    Importing the module raises `NameError`. It happens after a trunk upgrade:
    an override that inherits still reads a name the new trunk dropped.

    ## Example
    ```python
    # third_party/B/backend/spec/R/language/extra/libdevice.py
    from flagtree_spec import inherit

    inherit(globals())  # the new trunk's libdevice.py no longer defines T


    def dispatch(fn: T) -> T:
        return fn
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/language/extra/libdevice.py
    from typing import TypeVar

    from flagtree_spec import inherit

    inherit(globals())
    T = TypeVar("T")


    def dispatch(fn: T) -> T:
        return fn
    ```
    """

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
            and name not in MODULE_NAMES
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


# Per model: what each (file, name) asked about is bound to, with the file and module
# it is found in, and the parameters of each definition judged.
_FOUND: weakref.WeakKeyDictionary[
    Model, dict[tuple[str, str], Optional[tuple[Definition, str, Module]]]
] = weakref.WeakKeyDictionary()
_PARAMETERS: weakref.WeakKeyDictionary[Model, dict[tuple[str, int], Optional[Signature]]] = (
    weakref.WeakKeyDictionary()
)


def _find(
    model: Model, module: Module, name: str, depth: int = _DEPTH
) -> Optional[tuple[Definition, str, Module]]:
    """The ``def`` or ``class`` that name *name* of *module* is bound to when its file
    has run, with its file and module: followed through ``from ... import`` and
    through the lower versions that ``inherit()`` runs; ``None`` when that cannot be
    told."""
    cache = _FOUND.setdefault(model, {})
    key = (module.name, name)
    if key in cache:
        return cache[key]
    cache[key] = None  # an import cycle ends here
    found = _find_now(model, module, name, depth)
    cache[key] = found
    return found


def _find_now(
    model: Model, module: Module, name: str, depth: int
) -> Optional[tuple[Definition, str, Module]]:
    if depth == 0 or module.file is None or not module.file.endswith(".py"):
        return None
    files = [module.file, *(lower.path for lower in model.inherited(module))]
    for path in files:
        tree = model.tree_of(path)
        found = definition_of(tree, name, _package(module)) if tree is not None else None
        if found is None:
            facts = model.source(path).facts()
            if facts.defines_all and not facts.inherits:
                return None  # a star import or bind_symbols may bind it
            continue
        if found.kind in ("function", "class"):
            return found, path, module
        if found.kind == "import" and found.module.partition(".")[0] == model.root:
            return _find(model, model.resolve(found.module), found.name, depth - 1)
        return None
    return None


def _parameters(
    model: Model, definition: Definition, path: str, module: Module, depth: int = _DEPTH
) -> Optional[Signature]:
    """What a call of *definition* (in *path*, of *module*) binds to; a class's bases
    must be classes of the tree (or ``object``, built-in exceptions, ``Generic``,
    ``ABC``) that bring no metaclass and no ``__new__``."""
    cache = _PARAMETERS.setdefault(model, {})
    key = (path, definition.line)
    if key not in cache:
        cache[key] = None  # a class that is its own base ends here
        cache[key] = parameters(
            definition, lambda base: _plain_base(model, module, base, depth - 1)
        )
    return cache[key]


def _plain_base(model: Model, module: Module, base: ast.expr, depth: int) -> bool:
    if plain_builtin_base(base):
        return True
    if isinstance(base, ast.Subscript):  # KernelInterface[T]
        base = base.value
    if depth == 0 or not isinstance(base, ast.Name):
        return False
    found = _find(model, module, base.id)
    if found is None or found[0].kind != "class":
        return False
    node = found[0].node
    assert isinstance(node, ast.ClassDef)
    return plain_class(node) and all(_plain_base(model, found[2], b, depth - 1) for b in node.bases)


def _runs(model: Model, module: Module, name: str) -> Optional[tuple[Definition, Signature, str]]:
    """The definition a call of *name* in *module* runs, its parameters and its file."""
    found = _find(model, module, name)
    if found is None:
        return None
    definition, path, where = found
    signature = _parameters(model, definition, path, where)
    return None if signature is None else (definition, signature, path)


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
    """## What it does
    Binds, as Python would, the arguments of a call in a mirror file of a
    function or class it takes from the root package (imported, or left to its
    lower version by `inherit(globals())`) against the definition that runs
    (a class's `__init__`); and the trunk's calls of a function or class the
    override defines with other parameters than the trunk's. Judged where
    syntax decides: an undecorated `def`, a class without decorator, metaclass
    or `__new__` whose bases are classes of the tree (or `object`, `Generic`,
    `ABC`, built-in exceptions); no `*`/`**` unpacking; no local name of the
    callee's name. A call written on a line that reads as a line of the
    version the override shadows is the trunk's own and is not judged.

    ## Why is this bad?
    The call raises `TypeError` when it runs, at import when a decorator or a
    module-level statement makes it. It happens after a trunk upgrade: the
    override was written against the old parameters.

    ## Example
    ```python
    # third_party/B/backend/spec/R/runtime/jit.py
    from flagtree_spec import inherit

    inherit(globals())  # the trunk's KernelParam(num, param, do_not_specialize)


    class JITFunction:
        def __init__(self, fn):
            self.params = [KernelParam(i, p, False, False) for i, p in enumerate(fn)]
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/runtime/jit.py
    from flagtree_spec import inherit

    inherit(globals())


    class JITFunction:
        def __init__(self, fn):
            self.params = [KernelParam(i, p, False) for i, p in enumerate(fn)]
    ```
    """

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
        yield from self.lower_calls(mf)
        if not names:
            return
        errors: dict[tuple[str, int, tuple[str, ...]], Optional[str]] = {}
        # A call written as the version it shadows writes it is the trunk's own call.
        shadowed = mf.lower_source
        for call in calls_of(source.tree, source.text, names, shadowed.text if shadowed else ""):
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

    def lower_calls(self, mf: MirrorFile) -> Iterator[Hit]:
        """The calls the trunk makes of a function or class this override defines with
        other parameters than the version it shadows: in the lower versions
        ``inherit()`` runs in its namespace (outside the definitions it replaces), and in
        the modules that import the name from it.  The trunk's code passes what the new
        trunk's definition takes."""
        model, module, parsed, other = mf.model, mf.module, mf.parsed, mf.lower_source
        tree = parsed.tree if parsed is not None else None
        if parsed is None or tree is None or other is None:
            return
        theirs = model.tree_of(other.path)
        if theirs is None:
            return
        package = _package(module)
        changed: dict[str, tuple[Definition, Signature, Signature]] = {}
        own = replaced_names(tree) if mf.inherits else None
        mine_lines, their_lines = parsed.text.split("\n"), other.text.split("\n")
        defined = _definitions_by_name(theirs)
        for name, node in _definitions_by_name(tree).items():
            lower_node = defined.get(name)
            if lower_node is None or (own is not None and name not in own):
                continue
            if _header(mine_lines, node) == _header(their_lines, lower_node):
                continue  # written alike: the same parameters
            mine = definition_of(tree, name, package)
            below = definition_of(theirs, name, package)
            if mine is None or below is None or mine.kind not in ("function", "class"):
                continue
            ours = _parameters(model, mine, mf.entry.path, module)
            trunks = _parameters(model, below, other.path, module)
            if ours is not None and trunks is not None and ours != trunks:
                changed[name] = (mine, ours, trunks)
        if not changed:
            return
        # The override itself, the lower versions inherit() runs, the modules importing it.
        callers: list[tuple[str, Source, Optional[Lower]]] = [(mf.entry.path, parsed, None)]
        if mf.inherits:
            callers += [(v.path, v.source, v) for v in model.inherited(module)]
        for path in _importers(model, module.name, frozenset(changed)):
            callers.append((path, model.source(path), None))
        for path, source, version in callers:
            caller_tree = model.tree_of(path)
            if caller_tree is None:
                continue
            for call in calls_of(caller_tree, source.text, sorted(changed)):
                if call.unpacked or (version is not None and not version.runs(call.line)):
                    continue
                definition, signature, trunks = changed[call.name]
                error = bind_error(signature, call.positional, call.keywords)
                if error is None:
                    continue
                what = "class" if definition.kind == "class" else "function"
                if path == mf.entry.path:
                    who = "this call, written for the trunk's parameters, calls the override's"
                    where = f"at line {definition.line}"
                else:
                    how = "runs in it through inherit()" if version is not None else "imports it"
                    who = "this trunk code calls the override's"
                    where = f"at {mf.entry.path}:{definition.line} (it {how})"
                yield Hit(
                    path,
                    call.line,
                    call.col,
                    f"{call.name}(...): {who} {what} {call.name}{signature.describe()} {where}, "
                    f"which replaces the trunk's {call.name}{trunks.describe()}: it {error}; "
                    f"give the override's {call.name} the trunk's parameters, or change the call",
                )


def _definitions_by_name(tree: ast.Module) -> dict[str, ast.stmt]:
    """The top-level ``def`` and ``class`` statements of *tree*, by name (the last)."""
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _header(lines: list[str], node: ast.stmt) -> list[str]:
    """The lines that decide what a call of ``def`` or ``class`` *node* binds to: its
    decorators and its header down to its body, and for a class those of its
    ``__init__`` and ``__new__`` too (an empty body or a one-line definition: all)."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    body = getattr(node, "body", ())
    if not body or body[0].lineno <= node.lineno:
        return lines[first - 1 : node.end_lineno or node.lineno]
    found = lines[first - 1 : body[0].lineno - 1]
    if isinstance(node, ast.ClassDef):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name in ("__init__", "__new__"):
                    found.append(stmt.name)
                    found.extend(_header(lines, stmt))
            elif not isinstance(stmt, ast.Expr):
                return lines[first - 1 : node.end_lineno or node.lineno]
    return found


# Per model: which files import a name from each module (module -> name -> files).
_IMPORTERS: weakref.WeakKeyDictionary[Model, dict[str, dict[str, list[str]]]] = (
    weakref.WeakKeyDictionary()
)


def _importers(model: Model, name: str, wanted: frozenset[str]) -> list[str]:
    """The files that load and import one of *wanted* from module *name* (``from name
    import x``), found from their facts, once per model."""
    index = _IMPORTERS.get(model)
    if index is None:
        index = _IMPORTERS[model] = {}
        for module, source in model.sources():
            assert module.file is not None
            if source.error is not None:
                continue
            for imp in source.imports(_package(module)):
                names = index.setdefault(imp.module, {})
                for imported in imp.names:
                    names.setdefault(imported, []).append(module.file)
    found = index.get(name, {})
    return sorted({path for n in wanted for path in found.get(n, ())})
