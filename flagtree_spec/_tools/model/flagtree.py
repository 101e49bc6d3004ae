"""FlagTree's own spec file: which variant a trunk holds, read from its syntax.

FlagTree's trunk imports ``spec_path``, ``spec`` (or ``spec_call``),
``spec_func`` and ``bind_language_extension_symbols_to_tl`` from a file of its
own, ``<R>/flagtree_spec.py`` or (since 2026) ``<R>/_flagtree_spec.py``, whose
layout changed several times.  :func:`spec_file` finds that file and reads,
without running it, what it does: the folder its ``spec_path`` puts in front of
a package's ``__path__``, the module its hooks come from, the names it defines.
``check`` words its advice after it and ``adopt`` reports it; the forwarder
(``from flagtree_spec.flagtree import *``) is recognised as this library's.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from typing import NamedTuple, Optional

from ..._config import FLAGTREE_SPEC_FILES

__all__ = ["FORWARDER", "VARIANTS", "SpecFile", "Variant", "spec_file", "spec_files"]

# The whole body of FlagTree's spec file once it forwards to this library.
FORWARDER = "from flagtree_spec.flagtree import *  # noqa: F403\n"


class Variant(NamedTuple):
    """One layout FlagTree's spec file has had: where it looks, in its own words.

    ``mirror`` lists the folders its ``spec_path`` puts first, highest first, as
    templates over ``{R}`` (the root package's folder), ``{B}`` (the backend),
    ``{repo}`` (the checkout) and ``{rel}`` (the package's folder below ``{R}``);
    ``hooks`` is the module its hooks come from (``driver.active.spec``: the
    ``spec`` attribute of the active driver).  ``seen`` says where it was found.
    """

    key: str
    file: str
    mirror: tuple[str, ...]
    hooks: str
    call: str
    seen: str


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "backends-spec-R",
        "flagtree_spec.py",
        ("{R}/backends/{B}/spec/{R}/{rel}",),
        "{R}.backends.{B}.spec.{R}",
        "spec",
        "FlagTree main, mid 2026 (commit 71461e37)",
    ),
    Variant(
        "backends-spec",
        "flagtree_spec.py",
        ("{R}/backends/{B}/spec/{R}/{rel}",),
        "{R}.backends.{B}.spec",
        "spec",
        "FlagTree triton_v3.6.x",
    ),
    Variant(
        "driver",
        "flagtree_spec.py",
        ("{R}/backends/{B}/spec/{R}/{rel}",),
        "driver.active.spec",
        "spec",
        "FlagTree triton_v3.5.x before the [SPEC] rework, tsingmicro's fork",
    ),
    Variant(
        "driver-overlay",
        "flagtree_spec.py",
        ("{repo}/third_party/{B}/python/{R}/{rel}", "{R}/backends/{B}/spec/{R}/{rel}"),
        "driver.active.spec",
        "spec",
        "tsingmicro's fork (the driver's hooks, the checkout's copy, its own marker reading)",
    ),
    Variant(
        "checkout-overlay",
        "flagtree_spec.py",
        ("{repo}/third_party/{B}/python/{R}/{rel}", "{R}/backends/{B}/spec/{R}/{rel}"),
        "{R}.backends.{B}.spec",
        "spec",
        "FlagTree FEP #98, dynamic backend lookup (spec_path(path, exclude))",
    ),
    Variant(
        "spec-B",
        "flagtree_spec.py",
        ("{R}/spec/{B}/{rel}",),
        "{R}.spec.{B}",
        "spec",
        "FlagTree triton_v3.5.x, PR #709 (ascend)",
    ),
    Variant(
        "spec-B-backends-hooks",
        "flagtree_spec.py",
        ("{R}/spec/{B}/{rel}",),
        "{R}.backends.{B}.spec",
        "spec",
        "flagos-ai FlagTree, early 2026 (commit 43be79a0)",
    ),
    Variant(
        "renamed",
        "_flagtree_spec.py",
        ("{R}/backends/{B}/spec/{R}/{rel}",),
        "{R}.backends.{B}.spec.{R}",
        "spec",
        "flagos-ai FlagTree, when the file was renamed",
    ),
    Variant(
        "spec-call",
        "_flagtree_spec.py",
        ("{R}/spec/{B}/{rel}",),
        "{R}.spec.{B}",
        "spec_call",
        "flagos-ai FlagTree main (spec/B a link to third_party/B/spec/triton)",
    ),
    Variant(
        "spec-call-nested",
        "_flagtree_spec.py",
        ("{R}/spec/{B}/{R}/{rel}",),
        "{R}.spec.{B}.{R}",
        "spec_call",
        "zuoweixia497's fork (spec/B a link to third_party/B/spec)",
    ),
)


class SpecFile(NamedTuple):
    """What a trunk's spec file is, read from its syntax.

    ``kind`` is ``"forwarder"`` (it imports this library's names),
    ``"flagtree"`` (FlagTree's own) or ``"other"`` (defines none of the names).
    ``variant`` is the key of the :data:`VARIANTS` entry it matches, or ``None``.
    ``mirror`` and ``hooks`` are what was read (templates as in :class:`Variant`);
    ``defines`` the public names it binds itself (what a star import of it gets).
    """

    path: str
    kind: str
    variant: Optional[str]
    mirror: tuple[str, ...]
    hooks: Optional[str]
    defines: frozenset[str]

    def describe(self, root: str) -> str:
        """One sentence: which file, and what its ``spec_path`` and hooks do."""
        name = os.path.basename(self.path)
        if self.kind == "forwarder":
            return f"{name} forwards to flagtree_spec"
        if self.kind == "other":
            return f"{name} defines none of FlagTree's names"
        known = next((v for v in VARIANTS if v.key == self.variant), None)
        which = f"variant {known.key}, as in {known.seen}" if known else "a variant not seen before"
        where = " then ".join(_shown(m, root) for m in self.mirror) or "no folder"
        hooks = self.hooks.replace("{R}", root).replace("{B}", "B") if self.hooks else "nowhere"
        return (
            f"{name} is FlagTree's own ({which}): its spec_path puts {where} in front of a "
            f"package's __path__ (found by searching __path__[0] for '/{root}'), and its hooks "
            f"come from {hooks}"
        )


def _shown(template: str, root: str) -> str:
    return "<" + template.replace("{R}", root).replace("{", "").replace("}", "") + ">"


def spec_file(rdir: str, root: str) -> Optional[SpecFile]:
    """The FlagTree spec file of the trunk folder *rdir* (root package *root*), if any.

    The newer name wins when both exist.  ``None`` when neither exists or the
    file does not parse.
    """
    for name in FLAGTREE_SPEC_FILES:
        path = os.path.join(rdir, name)
        if os.path.isfile(path):
            found = spec_files(rdir, root)
            return found[0] if found else None
    return None


def spec_files(rdir: str, root: str) -> list[SpecFile]:
    """Every FlagTree spec file of *rdir* that parses, newest name first (both names may
    exist while a trunk moves from one to the other)."""
    found: list[SpecFile] = []
    for name in FLAGTREE_SPEC_FILES:
        path = os.path.join(rdir, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=path)
        except (OSError, SyntaxError, ValueError):
            if not found:
                return []
            continue
        found.append(read(path, tree, root))
    return found


def read(path: str, tree: ast.Module, root: str) -> SpecFile:
    """Read the spec file *path* (parsed as *tree*) of root package *root*.

    It is the forwarder when it binds none of FlagTree's names itself and imports
    from ``flagtree_spec`` (the one-line forwarder, or 0.1's few lines that defined
    only the binding helper); FlagTree's own when it defines one of them.
    """
    wanted = {"spec", "spec_call", "spec_func", "spec_path"}
    own: set[str] = set()
    imported: set[str] = set()
    forwards = False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").partition(".")[0] == "flagtree_spec" and not node.level:
                forwards = True
            imported.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            own.update(t.id for t in node.targets if isinstance(t, ast.Name))
    defines = frozenset(n for n in own if not n.startswith("_"))
    if forwards and not wanted & own:
        return SpecFile(path, "forwarder", None, (), None, defines)
    if not wanted & (own | imported):
        return SpecFile(path, "other", None, (), None, defines)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    mirror = _mirror_templates(functions.get("spec_path"), root)
    hooks = _hook_source(tree, root)
    call = "spec_call" if "spec_call" in own else "spec"
    base = os.path.basename(path)
    variant = next(
        (
            v.key
            for v in VARIANTS
            if v.file == base and v.mirror == mirror and v.hooks == hooks and v.call == call
        ),
        None,
    )
    return SpecFile(path, "flagtree", variant, mirror, hooks, defines)


def _hook_source(tree: ast.Module, root: str) -> Optional[str]:
    """The module the file's hooks come from: an ``import_module(f"...")`` target, or
    ``driver.active.spec``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "import_module" and node.args:
            template = _template(node.args[0], root)
            if template is not None:
                return template
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "active"
            and isinstance(node.value, ast.Name)
            and node.value.id == "driver"
        ):
            return "driver.active.spec"
    return None


def _called(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _template(node: ast.expr, root: str) -> Optional[str]:
    """A string or f-string as a template: every replacement field becomes ``{B}``, and
    each part of the dotted name that is *root* ``{R}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                parts.append("{B}")
        text = "".join(parts)
    else:
        return None
    return ".".join("{R}" if part == root else part for part in text.split("."))


def _mirror_templates(func: Optional[ast.FunctionDef], root: str) -> tuple[str, ...]:
    """The folders ``spec_path`` builds with ``os.path.join(...)``, in the order it puts
    them first on the path (each insert at 0 goes in front of the ones before)."""
    if func is None:
        return ()
    found: list[str] = []
    for call in _joins(func):
        parts = [_part(a, root, i == 0) for i, a in enumerate(call.args)]
        if None in parts or len(parts) < 2 or parts[-1] != "{rel}":
            continue
        found.append("/".join(p for p in parts if p))
    return tuple(reversed(found))


def _joins(func: ast.FunctionDef) -> Iterator[ast.Call]:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and _called(node) == "join":
            yield node


def _part(node: ast.expr, root: str, first: bool) -> Optional[str]:
    """One argument of ``os.path.join`` in a template: the first is the root package's
    folder (``{R}``) or the checkout's (``{repo}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "{R}" if node.value == root else node.value
    if isinstance(node, ast.Name):
        name = node.id.lower()
        if first:
            return "{repo}" if "project" in name or "repo" in name else "{R}"
        if "backend" in name:
            return "{B}"
        if "rel" in name:
            return "{rel}"
    return None
