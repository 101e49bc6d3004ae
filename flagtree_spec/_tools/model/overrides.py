"""What the import system does with each file of a mirror tree: the facts the rules read.

:func:`mirror_file` decides, for one file of a mirror tree, its *state*
(``compiled``, ``root-init``, ``excluded``, ``shadowed``, ``dead`` or
``live``) and, for a live override, the version it shadows, whether the two
are identical and the files ``inherit()`` runs below it.  The model computes
these once per file (:func:`mirror_facts`); the check's rules and the ``list``
command only read them.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from typing import Any, Optional

from ..._discovery import SpecRoot
from .finder import COMPILED_SUFFIXES, Entry
from .model import Model
from .modules import Module
from .source import Source, same_code

__all__ = [
    "MirrorFile",
    "excluded_by",
    "inits_needing_spec_path",
    "list_rows",
    "mirror_facts",
    "mirror_file",
]


class MirrorFile:
    """One file of a mirror tree, as the rules see it.

    *state* says what the import system does with it: ``compiled`` (a compiled
    file), ``root-init`` (the root package's own ``__init__``, which never
    loads), ``excluded`` (*excluded* names the exclusion), ``shadowed`` (a
    higher backend's file loads instead), ``dead`` (never loads) or ``live``
    (loads).  *source* is the file read and parsed (``None`` for the first
    three states).  For a live file, *lower* is the file it shadows, if any;
    *counterpart* the file it is compared with (*lower*, else the trunk's file
    of its name when a package-init override keeps trunk off the path);
    *lower_source* that file's source when both parse; *identical* whether the
    two are byte- or AST-identical; *inherits* whether the file calls
    ``inherit(globals())``, and then *lowest* the file its ``__file__`` names
    after the call (the end of the chain that runs), or ``None`` when there is
    no lower version.
    """

    __slots__ = (
        "counterpart",
        "entry",
        "excluded",
        "identical",
        "inherits",
        "lower",
        "lower_source",
        "lowest",
        "model",
        "module",
        "source",
        "spec_root",
        "state",
    )

    def __init__(
        self,
        model: Model,
        spec_root: SpecRoot,
        entry: Entry,
        state: str,
        module: Module,
        excluded: str = "",
        source: Optional[Source] = None,
        lower: Optional[str] = None,
    ) -> None:
        self.model = model
        self.spec_root = spec_root
        self.entry = entry
        self.state = state
        self.module = module
        self.excluded = excluded
        self.source = source
        self.lower = lower
        # What it is compared with: the version it shadows, else (inside a
        # package-init override without spec_path) the trunk's file of its name.
        self.counterpart = model.counterpart(entry.name) if state == "live" else None
        parsed = self.parsed
        self.lower_source: Optional[Source] = None
        counterpart = self.counterpart
        if parsed is not None and counterpart is not None and counterpart.endswith(".py"):
            shadowed = model.source(counterpart)
            self.lower_source = shadowed if shadowed.tree is not None else None
        other = self.lower_source
        self.identical = (
            other is not None
            and parsed is not None
            and (parsed.data == other.data or same_code(parsed, other))
        )
        self.inherits = parsed is not None and parsed.facts().inherits
        self.lowest = _lowest_that_runs(model, module) if self.inherits else None
        if parsed is not None:
            _unusable_trunk(model, counterpart, module.candidates if self.inherits else ())

    @property
    def parsed(self) -> Optional[Source]:
        """The source of a file that parses, else ``None``."""
        return self.source if self.source is not None and self.source.tree is not None else None


def _unusable_trunk(model: Model, counterpart: Optional[str], chain: tuple[str, ...]) -> None:
    """Record as an input error a trunk file the override is compared with, or that its
    ``inherit()`` runs, which cannot be read, decoded or parsed: nothing can be said of
    the override then (and the import fails where ``inherit()`` runs it)."""
    for path in dict.fromkeys([*([counterpart] if counterpart else []), *chain]):
        if not path.endswith(".py"):
            break
        source = model.source(path)
        if source.error is not None and model.origin_of(path) is None:
            model.problem(source.error)
        if source.error is not None or (path in chain and not source.facts().inherits):
            break


def _lowest_that_runs(model: Model, module: Module) -> Optional[str]:
    """The file ``__file__`` names after an override's ``inherit()``: the end of the chain."""
    chain = module.candidates
    if not chain:
        return None
    index = 0
    while index + 1 < len(chain) and chain[index].endswith(".py"):
        lower = model.source(chain[index])
        if lower.tree is None or not lower.facts().inherits:
            break
        index += 1
    return chain[index]


def excluded_by(model: Model, spec_root: SpecRoot, name: str) -> str:
    """What excludes module *name* from *spec_root* (a declaration or a ``spec_path``
    call), in words; empty when nothing does."""
    for e in sorted(spec_root.exclude):
        if name == e or name.startswith(e + "."):
            short = e[len(model.root) + 1 :]
            return f"the declaration {spec_root.declaration} (exclude {short!r})"
    parent = name.rpartition(".")[0]
    while parent:
        module = model.resolve(parent)
        for e in module.exclude:
            if name == e or name.startswith(e + "."):
                short = e[len(parent) + 1 :]
                return f"package {parent} (spec_path exclude {short!r} in {module.file})"
        parent = parent.rpartition(".")[0]
    return ""


def mirror_file(model: Model, spec_root: SpecRoot, entry: Entry) -> MirrorFile:
    """What the import system does with one file of a mirror tree."""
    name, path = entry.name, entry.path
    module = model.resolve(name)
    if path.endswith(COMPILED_SUFFIXES):
        return MirrorFile(model, spec_root, entry, "compiled", module)
    if name == model.root and entry.kind == "init":
        return MirrorFile(model, spec_root, entry, "root-init", module)
    excluded = excluded_by(model, spec_root, name)
    if excluded:
        return MirrorFile(model, spec_root, entry, "excluded", module, excluded)
    # Every other file of a mirror tree is source: read it, even if it never loads.
    source = model.source(path)
    if module.file is None or os.path.normpath(module.file) != os.path.normpath(path):
        state = "shadowed" if path in module.candidates else "dead"
        return MirrorFile(model, spec_root, entry, state, module, source=source)
    lower = model.lower_version(name)
    return MirrorFile(model, spec_root, entry, "live", module, source=source, lower=lower)


# Per model: the facts of every file of its mirror trees, once all were computed.
_FACTS: weakref.WeakKeyDictionary[Model, list[MirrorFile]] = weakref.WeakKeyDictionary()


def mirror_facts(model: Model) -> Iterator[MirrorFile]:
    """The facts of every file of every mirror tree of *model*, in the order of
    :meth:`~.files.Files.mirror_files`, each computed once (lazily, the first time)."""
    found = _FACTS.get(model)
    if found is not None:
        yield from found
        return
    done = []
    for spec_root, entry in model.mirror_files():
        facts = mirror_file(model, spec_root, entry)
        done.append(facts)
        yield facts
    _FACTS[model] = done


def list_rows(model: Model) -> list[dict[str, Any]]:
    """One row per file of every mirror tree, as ``flagtree-spec list`` shows it:
    module, file, backend, state (override, added, shadowed, excluded, hook, hook
    fragment, dead) and the file it shadows."""
    rows = []
    hook_files = {os.path.normpath(r.hooks) for r in model.spec_roots if r.hooks}
    fragments = model.hook_fragments()
    for spec_root, entry in model.mirror_files():
        module = model.resolve(entry.name)
        live = module.file is not None and os.path.normpath(module.file) == os.path.normpath(
            entry.path
        )
        lower = model.lower_version(entry.name) if live else None
        if excluded_by(model, spec_root, entry.name):
            state = "excluded"
        elif live:
            state = "override" if lower is not None or model.trunk_only(entry.name) else "added"
        elif os.path.normpath(entry.path) in hook_files:
            state = "hook"  # the hook package FlagTree keeps at <spec root>/R/__init__.py
        elif os.path.normpath(entry.path) in fragments:
            state = "hook fragment"  # loads as a module of the hook package
        elif entry.path in module.candidates:
            state = "shadowed"
        else:
            state = "dead"
        rows.append(
            {
                "module": entry.name,
                "file": entry.path,
                "backend": spec_root.backend,
                "state": state,
                "shadows": lower,
            }
        )
    return rows


def inits_needing_spec_path(model: Model, spec_root: Optional[SpecRoot] = None) -> list[str]:
    """The trunk package ``__init__.py`` files that must call ``spec_path(__path__)``
    for the files of the mirror trees (of *spec_root* only, when given) to load, and
    do not: for a module, its package's (a namespace portion or a package the backend
    adds: the nearest trunk package above); for a package-init override, its parent
    package's, and the trunk's own ``__init__`` of the package when the override runs
    it with ``inherit(globals())``.  Sorted; hook fragments and compiled files aside.
    """
    fragments = model.hook_fragments()
    wanted: set[str] = set()
    for root, entry in model.mirror_files():
        if (spec_root is not None and root is not spec_root) or entry.kind == "compiled":
            continue
        if entry.name == model.root or os.path.normpath(entry.path) in fragments:
            continue
        parts = entry.name.split(".")[1:]
        if entry.kind == "init":
            source = model.source(entry.path)
            if source.error is None and source.facts().inherits:
                wanted.add(os.path.join(model.rdir, *parts, "__init__.py"))
            parts = parts[:-1]
        else:
            parts = parts[:-1]
        while parts and not os.path.isfile(os.path.join(model.rdir, *parts, "__init__.py")):
            parts = parts[:-1]  # an added package, or a namespace portion: its parent finds it
        wanted.add(os.path.join(model.rdir, *parts, "__init__.py"))
    needed = []
    for init in sorted(wanted):
        if not os.path.isfile(init):
            continue
        source = model.source(init)
        if source.error is None and source.facts().spec_path is None:
            needed.append(init)
    return needed
