"""``flagtree-spec check``: the lint of spec trees (codes FTS001-FTS018).

:func:`check` runs every rule of the registry in :mod:`.rules` over a
:class:`~flagtree_spec._static.model.Model`, which reads and parses every file
at most once: first the per-file rules on each file of every mirror tree
(whose syntax tree is dropped once they have seen it), then the rules that
need the whole model.  Findings carry a code, a severity (``error``,
``warning`` or ``info``), an absolute path and a 1-based line and column.  A
``# noqa: FTS00N`` comment on the finding's line suppresses it (a bare
``# noqa`` suppresses every code on that line).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Optional

from ..._discovery import SpecRoot, same_tree
from ..model.finder import COMPILED_SUFFIXES, Entry
from ..model.model import Model, Module
from ..model.source import Source
from .registry import RULES

__all__ = ["CODES", "Finding", "MirrorFile", "check", "excluded_by", "select"]

# code -> (default severity, one-line summary), in code order.
CODES: dict[str, tuple[str, str]] = {
    code: (RULES[code].severity, RULES[code].summary) for code in sorted(RULES)
}


class Finding(NamedTuple):
    """One problem found by ``check``."""

    code: str
    severity: str
    path: str
    line: int
    col: int
    message: str

    def as_dict(self) -> dict[str, object]:
        return dict(self._asdict())


class MirrorFile:
    """One file of a mirror tree, as the rules see it.

    *state* says what the import system does with it: ``compiled`` (a compiled
    file), ``root-init`` (the root package's own ``__init__``, which never
    loads), ``excluded`` (*excluded* names the exclusion), ``shadowed`` (a
    higher backend's file loads instead), ``dead`` (never loads) or ``live``
    (loads).  *source* is the file read and parsed (``None`` for the first
    three states); *lower* is the file a live override shadows, if any.
    """

    __slots__ = (
        "_identical",
        "entry",
        "excluded",
        "lower",
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
        self._identical: Optional[bool] = None

    @property
    def parsed(self) -> Optional[Source]:
        """The source of a file that parses, else ``None``."""
        return self.source if self.source is not None and self.source.tree is not None else None

    def lower_source(self) -> Optional[Source]:
        """The source this live override shadows, when both are source files that parse."""
        if self.parsed is None or self.lower is None or not self.lower.endswith(".py"):
            return None
        other = self.model.source(self.lower)
        return other if other.tree is not None else None

    def identical(self) -> bool:
        """Whether the override is byte- or AST-identical to the source it shadows."""
        if self._identical is None:
            other = self.lower_source()
            mine = self.parsed
            self._identical = (
                other is not None
                and mine is not None
                and (mine.data == other.data or same_tree(mine.tree, other.tree))
            )
        return self._identical


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


def _mirror_file(model: Model, spec_root: SpecRoot, entry: Entry) -> MirrorFile:
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


def _hits(model: Model) -> Iterator[Finding]:
    rules = list(RULES.values())
    for spec_root, entry in model.mirror_files():
        mf = _mirror_file(model, spec_root, entry)
        for rule in rules:
            for hit in rule.file(mf):
                yield Finding(rule.code, hit.severity or rule.severity, *hit[:4])
        if mf.state == "live":
            # Both trees have been seen by every per-file rule: keep only their facts.
            if mf.parsed is not None:
                mf.parsed.release()
            if mf.lower is not None and mf.lower.endswith(".py"):
                model.source(mf.lower).release()
    for rule in rules:
        for hit in rule.model(model):
            yield Finding(rule.code, hit.severity or rule.severity, *hit[:4])


def _suppressed(model: Model, finding: Finding) -> bool:
    if not finding.path.endswith(".py") or not os.path.isfile(finding.path):
        return False
    codes = model.source(finding.path).noqa(finding.line)
    return codes is not None and (not codes or finding.code in codes)


def select(
    findings: Iterable[Finding], chosen: Sequence[str] = (), ignored: Sequence[str] = ()
) -> list[Finding]:
    """Keep findings whose code starts with one of *chosen* (all when empty), none of *ignored*."""
    return [
        f
        for f in findings
        if (not chosen or f.code.startswith(tuple(chosen)))
        and not f.code.startswith(tuple(ignored))
    ]


def check(model: Model) -> list[Finding]:
    """Every finding for *model*, sorted by path, line, column and code, ``# noqa`` applied."""
    unique = sorted(set(_hits(model)), key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    return [f for f in unique if not _suppressed(model, f)]
