"""The registry of ``flagtree-spec check``'s rules: one small class per code.

A rule is declared with its code, default severity and one-line summary::

    @rule("FTS008", "info", "module added by the backend")
    class AddedModule(Rule):
        def file(self, mf: MirrorFile) -> Iterator[Hit]: ...

and explained by its docstring, in the four sections of ruff's rules, each
headed by a Markdown heading: ``## What it does``, ``## Why is this bad?``,
``## Example`` and ``## Use instead`` (a code block each, whose first line
names the file it belongs to when that matters).
The explanation (:attr:`Rule.explanation`) is what ``flagtree-spec rule CODE``
prints, what ``docs/rules.md`` shows, and the SARIF ``help`` of the rule; its
page's anchor is :attr:`Rule.url`, the ``url`` of each finding in JSON and
the ``helpUri`` in SARIF.

and looks at one file of a mirror tree at a time (:meth:`Rule.file`, given
the :class:`~flagtree_spec._tools.model.overrides.MirrorFile` that says what
the import system does with it), at the whole model once (:meth:`Rule.model`),
or both.  It yields :class:`Hit` objects; the check turns them into findings
carrying its code and severity.  The rules live in one module per family
(:mod:`.overrides`, :mod:`.imports`, :mod:`.hooks`, :mod:`.inherit`,
:mod:`.layout`, :mod:`.upgrade`); adding a code is adding one class to the
module of its concern, its row in ``docs/check.md``, and ``docs/rules.md``
written again (``python scripts/rules-doc``).  This module holds
only the registry and the helpers the families share.
"""

from __future__ import annotations

import inspect
import os
import re
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Callable, ClassVar, NamedTuple, Optional

from ..model.calls import HookCall
from ..model.inherited import Lower
from ..model.model import Model, Module
from ..model.source import Source

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__ = ["DOCS", "RULES", "SECTIONS", "Explanation", "Hit", "Rule", "rule"]

# The documentation site; a rule's page is the anchor of its code on rules/.
DOCS = "https://flagos-ai.github.io/flagtree_spec/"
# The sections of a rule's docstring, in order.
SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")


class Explanation(NamedTuple):
    """A rule's docstring, by section (Markdown; empty where the docstring lacks one)."""

    what: str
    why: str
    example: str
    instead: str

    @classmethod
    def parse(cls, doc: str) -> Explanation:
        parts: dict[str, list[str]] = {}
        current: list[str] = []
        for line in inspect.cleandoc(doc).splitlines():
            heading = re.fullmatch(r"## (.+)", line.strip())
            if heading is not None and heading[1] in SECTIONS:
                current = parts.setdefault(heading[1], [])
            else:
                current.append(line)
        return cls(*("\n".join(parts.get(s, [])).strip() for s in SECTIONS))

    def markdown(self, level: int = 2) -> str:
        """The four sections as Markdown, headed at *level*."""
        marks = "#" * level
        return "\n\n".join(
            f"{marks} {title}\n\n{body}" for title, body in zip(SECTIONS, self) if body
        )

    def text(self) -> str:
        """The four sections as plain text: titles alone on a line, code indented."""
        blocks = []
        for title, body in zip(SECTIONS, self):
            if not body:
                continue
            lines, code = [], False
            for line in body.splitlines():
                if line.startswith("```"):
                    code = not code
                    continue
                lines.append(f"    {line}" if code and line else line)
            blocks.append(f"{title}\n" + "\n".join(lines))
        return "\n\n".join(blocks)


class Hit(NamedTuple):
    """What a rule found: where, and what to do about it."""

    path: str
    line: int
    col: int
    message: str
    severity: str = ""  # empty: the rule's default severity


class Rule:
    """One check code.  MirrorFile :meth:`file`, :meth:`model` or both."""

    code: ClassVar[str]
    severity: ClassVar[str]  # "error", "warning" or "info"
    summary: ClassVar[str]

    @property
    def explanation(self) -> Explanation:
        """What the rule checks, why, an example and the fix: its docstring."""
        return Explanation.parse(type(self).__doc__ or "")

    @property
    def url(self) -> str:
        """The rule's documentation: its anchor on the rules page."""
        return f"{DOCS}rules/#{self.code.lower()}"

    def file(self, mf: MirrorFile) -> Iterable[Hit]:
        """Findings for one file of a mirror tree (every file, every state)."""
        return ()

    def model(self, model: Model) -> Iterable[Hit]:
        """Findings that need the whole model (after every file was seen)."""
        return ()


RULES: dict[str, Rule] = {}


def rule(code: str, severity: str, summary: str) -> Callable[[type[Rule]], type[Rule]]:
    """Declare a rule class with its code, default severity and one-line summary."""
    assert severity in ("error", "warning", "info") and code not in RULES, (code, severity)

    def register(cls: type[Rule]) -> type[Rule]:
        cls.code, cls.severity, cls.summary = code, severity, summary
        RULES[code] = cls()
        # In code order, whichever family module declares the rule.
        ordered = sorted(RULES.items())
        RULES.clear()
        RULES.update(ordered)
        return cls

    return register


# --------------------------------------------------------------------------- helpers


def _rel(model: Model, path: str) -> str:
    """A short name of the mirror file *path* for messages: relative to its mirror."""
    origin = model.origin_of(path)
    assert origin is not None
    if origin.backend:
        label = f"{origin.backend}:"
    else:  # FLAGTREE_SPEC_PATH or --spec-root: no backend name, so name the folder
        label = f"{os.path.basename(os.path.normpath(origin.path))}:"
    return label + os.path.join(model.root, os.path.relpath(path, model.mirror_of(origin)))


def _shown(names: list[str]) -> str:
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _sources(model: Model) -> Iterator[tuple[Module, Source]]:
    """Every module that loads from a source file, with that source."""
    return model.sources()


# Per model: what _running() yields, found once (every rule about hook calls asks).
_RUNNING: weakref.WeakKeyDictionary[Model, list[tuple[Module, Source, Optional[Lower]]]] = (
    weakref.WeakKeyDictionary()
)


def _running(model: Model) -> list[tuple[Module, Source, Optional[Lower]]]:
    """Every source file whose code runs: each module's file that loads (as
    :func:`_sources`), and after it the lower versions its ``inherit(globals())``
    runs in its namespace (with the :class:`~flagtree_spec._tools.model.inherited.Lower`
    that says which of their lines can run)."""
    found = _RUNNING.get(model)
    if found is not None:
        return found
    found = []
    for module, source in model.sources():
        found.append((module, source, None))
        if source.error is None and source.facts().inherits:
            found.extend((module, lower.source, lower) for lower in model.inherited(module))
    _RUNNING[model] = found
    return found


def _hook_calls(model: Model) -> Iterator[tuple[Module, Source, HookCall, str]]:
    """Every hook call that can run, with the module whose code it is, the file it
    is written in, and a note for one in a lower version (run by ``inherit()``)."""
    for module, source, lower in _running(model):
        calls = source.hook_calls()
        if not calls:
            continue
        if lower is None:
            for call in calls:
                yield module, source, call, ""
            continue
        note = f" (it runs in {lower.override} through inherit())"
        for call in calls:
            if lower.runs(call.line):
                yield module, source, call, note


def _trunk_names(model: Model) -> list[str]:
    """The modules and packages the trunk has (what an override can inherit from)."""
    return [e.name for e in model.tree(model.rdir) if e.kind in ("file", "init")]
