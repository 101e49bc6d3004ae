"""``flagtree-spec check``: the lint of spec trees (DESIGN §8, codes FTS001-FTS014).

Each check works on the :class:`~flagtree_spec._model.Model`, which reads and
parses every file at most once.  Findings carry a code, a severity
(``error``, ``warning`` or ``info``), an absolute path and a 1-based line and
column.  A ``# noqa: FTS00N`` comment on the finding's line suppresses it (a
bare ``# noqa`` suppresses every code on that line).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ._discovery import SpecRoot
from ._model import COMPILED_SUFFIXES, Entry, Model, Module, Source

__all__ = ["CODES", "Finding", "check", "select"]

CODES: dict[str, tuple[str, str]] = {
    "FTS001": ("error", "dead override: its package is never specialised, so it never loads"),
    "FTS002": ("error", "package-init override that hides trunk modules, or that never loads"),
    "FTS003": ("warning", "override identical to the module it shadows"),
    "FTS004": ("error", "a name imported from a module is not defined by the version that loads"),
    "FTS005": ("warning", "public names of the shadowed module missing from the override"),
    "FTS006": ("error", "override of an excluded name"),
    "FTS007": ("warning", "override derives paths from its own __file__"),
    "FTS008": ("info", "module added by the backend"),
    "FTS009": ("warning", "hook called by trunk and defined by no backend (info), or the reverse"),
    "FTS010": ("error", "override that does not parse"),
    "FTS011": ("error", "compiled file in a mirror tree"),
    "FTS013": ("error", "override also imported through the hook package"),
    "FTS014": ("warning", "symlink in a spec root that leaves it"),
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


def _finding(
    code: str, path: str, line: int, col: int, message: str, severity: str = ""
) -> Finding:
    return Finding(code, severity or CODES[code][0], path, line, col, message)


def _rel(model: Model, path: str) -> str:
    """A short name of *path* for messages: relative to its mirror or the trunk."""
    origin = model.origin_of(path)
    top = model.mirror_of(origin) if origin is not None else model.rdir
    if origin is None:
        label = "trunk:"
    elif origin.backend:
        label = f"{origin.backend}:"
    else:  # FLAGTREE_SPEC_PATH or --spec-root: no backend name, so name the folder
        label = f"{os.path.basename(os.path.normpath(origin.path))}:"
    return label + os.path.join(model.root, os.path.relpath(path, top))


def _is_source(path: str) -> bool:
    return path.endswith(".py")


class _Checker:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.findings: list[Finding] = []

    def add(
        self, code: str, path: str, line: int, col: int, message: str, severity: str = ""
    ) -> None:
        self.findings.append(_finding(code, path, line, col, message, severity))

    # -- overrides

    def overrides(self) -> None:
        model = self.model
        for spec_root, entry in model.mirror_files():
            if entry.path.endswith(COMPILED_SUFFIXES):
                self.add(
                    "FTS011",
                    entry.path,
                    1,
                    1,
                    f"compiled file in the mirror tree of {spec_root.backend or spec_root.path}: "
                    "Python loads it like a module, but nobody can review it; keep sources only",
                )
                continue
            self.override(spec_root, entry)

    def override(self, spec_root: SpecRoot, entry: Entry) -> None:
        model = self.model
        name, path = entry.name, entry.path
        module = model.resolve(name)
        if name == model.root and entry.kind == "init":
            self.add(
                "FTS002",
                path,
                1,
                1,
                f"override of the root package's own __init__ ({name}) never loads: the root "
                "package is found on sys.path, never in a mirror; move its code into a module",
            )
            return
        excluded = self.excluded_by(spec_root, name)
        if excluded:
            self.add(
                "FTS006",
                path,
                1,
                1,
                f"overrides {name}, which {excluded} excludes, so it never loads; delete it or "
                "drop the exclusion",
            )
            return
        # Every other file of a mirror tree is compiled (FTS011): this one is source.
        read = model.source(path)
        if read.error is not None:
            self.add("FTS010", path, read.error.line, read.error.col, read.error.message)
        source = read if read.error is None else None
        live = module.file is not None and os.path.normpath(module.file) == os.path.normpath(path)
        if not live:
            if path in module.candidates:
                return  # shadowed by a higher backend of the stack: normal
            code = "FTS002" if entry.kind == "init" else "FTS001"
            self.add(code, path, 1, 1, self.dead_reason(name, path, module))
            return
        if entry.kind == "init" and not module.specialised:
            self.hidden_trunk(module, path)
        lower = model.lower_version(name)
        if lower is None:
            if model.trunk_only(name) is None:
                self.add(
                    "FTS008",
                    path,
                    1,
                    1,
                    f"adds module {name} (no trunk counterpart); it loads from "
                    f"{spec_root.backend or spec_root.path}",
                )
        elif source is not None and source.tree is not None and _is_source(lower):
            self.compare(name, path, source, lower)
        if source is not None and source.tree is not None and "__file__" in source.text:
            for node in ast.walk(source.tree):
                if isinstance(node, ast.Name) and node.id == "__file__":
                    self.add(
                        "FTS007",
                        path,
                        node.lineno,
                        node.col_offset + 1,
                        "derives a path from its own __file__, which is in the mirror tree; use "
                        "flagtree_spec.trunk_path(__package__, ...) to reach trunk files",
                    )
        if source is not None:
            source.release()
        if lower is not None and _is_source(lower):
            model.source(lower).release()

    def excluded_by(self, spec_root: SpecRoot, name: str) -> str:
        model = self.model
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

    def dead_reason(self, name: str, path: str, module: Module) -> str:
        model = self.model
        parent_name = name.rpartition(".")[0]  # never the root itself: its __init__ is FTS002
        parent = model.resolve(parent_name)
        what = f"{_rel(model, path)} never loads"
        if parent.kind == "missing":
            return f"{what}: its package {parent_name} does not import ({parent.reason})"
        if parent.kind == "module":
            return (
                f"{what}: {parent_name} is a module ({parent.file}), and a mirror folder without "
                "__init__.py never shadows a module"
            )
        while parent.kind == "namespace":
            # A namespace package follows its parent's path: the package above decides.
            parent_name = parent_name.rpartition(".")[0]
            parent = model.resolve(parent_name)
        if parent.kind == "package" and not parent.specialised:
            return (
                f"{what}: package {parent_name} never calls spec_path(__path__), so it is never "
                f"specialised; add 'from flagtree_spec import spec_path' and "
                f"'spec_path(__path__)' to {parent.file}, or delete this file"
            )
        loads = module.file or "nothing"
        return f"{what}: {name} loads {loads} instead (a package or another file kind wins)"

    def hidden_trunk(self, module: Module, path: str) -> None:
        model = self.model
        hidden = []
        for trunk in module.trunk:
            for child in sorted(model.folder(trunk).children()):
                if model.resolve(f"{module.name}.{child}").kind == "missing":
                    hidden.append(child)
        if hidden:
            shown = ", ".join(hidden[:8]) + (", ..." if len(hidden) > 8 else "")
            self.add(
                "FTS002",
                path,
                1,
                1,
                f"package-init override of {module.name} does not call spec_path(__path__), so "
                f"its __path__ is the mirror folder only and trunk modules {shown} cannot be "
                "imported; add 'spec_path(__path__)' to it",
            )

    def compare(self, name: str, path: str, source: Source, lower: str) -> None:
        model = self.model
        other = model.source(lower)
        if other.tree is None or source.tree is None:  # a version that does not parse
            return
        if source.data == other.data or _same_tree(source.tree, other.tree):
            self.add(
                "FTS003",
                path,
                1,
                1,
                f"identical to the module it shadows ({lower}); delete the override",
            )
            return
        mine, theirs = source.facts(), other.facts()
        if mine.defines_all:
            return
        missing = [n for n in theirs.public() if n not in mine.defined]
        if missing:
            shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
            self.add(
                "FTS005",
                path,
                1,
                1,
                f"public names of the shadowed {lower} missing here: {shown} (API drift); define "
                "them or call inherit(globals())",
            )

    # -- imports (FTS004)

    def imports(self) -> None:
        model = self.model
        reported: dict[tuple[str, str], list[str]] = {}
        for module in model.modules():
            if module.file is None or not _is_source(module.file):
                continue
            source = model.source(module.file)
            if source.error is not None:
                if module.origin is None:
                    model.problem(source.error)
                continue
            package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
            imports = list(source.imports(package))
            source.hook_calls()
            if module.origin is None:
                # Trunk files are not needed again as trees; keeping thousands of
                # them alive makes the cyclic garbage collector rescan them.
                source.release()
            for imp in imports:
                if imp.guarded or imp.module.partition(".")[0] != model.root:
                    continue
                target = model.resolve(imp.module)
                if target.file is None or not _is_source(target.file):
                    continue
                if module.origin is None and target.origin is None:
                    continue  # trunk importing trunk is not the backend's business
                facts = model.source(target.file).facts()
                if facts.defines_all:
                    continue
                for name in imp.names:
                    if name == "*" or name in facts.defined:
                        continue
                    if model.resolve(f"{imp.module}.{name}").kind != "missing":
                        continue  # a submodule
                    if module.origin is not None:
                        self.add(
                            "FTS004",
                            module.file,
                            imp.line,
                            imp.col,
                            f"imports {name!r} from {imp.module}, which {target.file} does not "
                            "define",
                        )
                    else:
                        where = f"{module.file}:{imp.line}"
                        reported.setdefault((target.file, name), []).append(where)
        for (path, name), sites in sorted(reported.items()):
            more = f" and {len(sites) - 1} more" if len(sites) > 1 else ""
            self.add(
                "FTS004",
                path,
                1,
                1,
                f"does not define {name!r}, which {sites[0]}{more} imports from it; define it "
                "or call inherit(globals())",
            )

    # -- hooks (FTS009, FTS013)

    def hooks(self) -> None:
        model = self.model
        hook_roots = [r for r in model.spec_roots if r.hooks]
        if not model.spec_roots:
            return
        defined: set[str] = set()
        definitions: list[tuple[str, str, int, int]] = []
        for spec_root in hook_roots:
            assert spec_root.hooks is not None
            source = model.source(spec_root.hooks)
            if source.error is not None:
                self.add(
                    "FTS010",
                    spec_root.hooks,
                    source.error.line,
                    source.error.col,
                    f"hook module {source.error.message}",
                )
                continue
            assert source.tree is not None
            facts = source.facts()
            defined.update(facts.defined)
            for node in source.tree.body:
                if isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) and not node.name.startswith("_"):
                    definitions.append(
                        (node.name, spec_root.hooks, node.lineno, node.col_offset + 1)
                    )
        called: set[str] = set()
        calls: list[tuple[str, str, int, int]] = []
        for module in model.modules():
            if module.file is None or not _is_source(module.file):
                continue
            source = model.source(module.file)
            for name, line, col in source.hook_calls():
                called.add(name)
                calls.append((name, module.file, line, col))
        for name, path, line, col in calls:
            if name not in defined:
                self.add(
                    "FTS009",
                    path,
                    line,
                    col,
                    f"hook {name!r} is called here and defined by no backend of the stack "
                    "(fine for an optional hook)",
                    "info",
                )
        for name, path, line, col in definitions:
            if name not in called:
                self.add(
                    "FTS009",
                    path,
                    line,
                    col,
                    f"hook {name!r} is defined here and never called by spec({name!r}) or "
                    f"spec_func({name!r}); a typo?",
                    "warning",
                )
        for spec_root in hook_roots:
            self.hook_imports(spec_root)

    def hook_imports(self, spec_root: SpecRoot) -> None:
        model = self.model
        if not spec_root.hooks_package or spec_root.hooks is None or spec_root.mirror is None:
            return
        folder = os.path.dirname(spec_root.hooks)
        mirror = model.mirror_of(spec_root)
        rel = os.path.relpath(mirror, folder)
        if rel.startswith(os.pardir) or os.path.isabs(rel):
            return
        hook = spec_root.hook_name or "__hooks__"
        prefix = ".".join([hook, *rel.split(os.sep)])
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d.isidentifier() and os.path.join(dirpath, d) != mirror and d != "__pycache__"
            )
            parts = os.path.relpath(dirpath, folder).split(os.sep)
            package = ".".join([hook, *(p for p in parts if p != os.curdir)])
            for filename in sorted(filenames):
                if not filename.endswith(".py"):
                    continue
                path = os.path.join(dirpath, filename)
                source = model.source(path)
                if source.tree is None:
                    continue
                for imp in source.imports(package):
                    for target in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)):
                        if target != prefix and not target.startswith(prefix + "."):
                            continue
                        rest = target[len(prefix) + 1 :].split(".") if target != prefix else []
                        file = os.path.join(mirror, *rest)
                        if rest and (
                            os.path.isfile(file + ".py")
                            or os.path.isfile(os.path.join(file, "__init__.py"))
                        ):
                            name = ".".join([model.root, *rest])
                            self.add(
                                "FTS013",
                                path,
                                imp.line,
                                imp.col,
                                f"imports the override {name} through the hook package as "
                                f"{target}: two module objects of one file, two copies of every "
                                f"class; import {name} instead",
                            )

    # -- symlinks (FTS014)

    def symlinks(self) -> None:
        for spec_root in self.model.spec_roots:
            for dirpath, dirnames, filenames in os.walk(spec_root.path):
                for entry in sorted([*dirnames, *filenames]):
                    path = os.path.join(dirpath, entry)
                    if not os.path.islink(path):
                        continue
                    real = os.path.realpath(path)
                    if real != spec_root.real and not real.startswith(spec_root.real + os.sep):
                        self.add(
                            "FTS014",
                            path,
                            1,
                            1,
                            f"symlink leaves the spec root {spec_root.path}: it points to {real}; "
                            "Python follows it, so copy the file in or remove the link",
                        )


def _same_tree(a: ast.AST, b: ast.AST) -> bool:
    """Whether two syntax trees are equal, ignoring positions (``ast.dump`` equality).

    Walks both trees in step and stops at the first difference, so it costs
    far less than dumping both when the files differ.
    """
    pending: list[tuple[object, object]] = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            pending.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            pending.extend(zip(x, y))  # type: ignore[call-overload]
        elif x != y:
            return False
    return True


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
    checker = _Checker(model)
    checker.overrides()
    checker.imports()
    checker.hooks()
    checker.symlinks()
    unique = sorted(set(checker.findings), key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    return [f for f in unique if not _suppressed(model, f)]
