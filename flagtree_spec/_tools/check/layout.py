"""The check rules about the files of a spec root outside what loads: FTS014 (a
symlink that leaves the spec root) and FTS018 (a ``.py`` file in no mirror tree
and not part of the hook package).  They register in :mod:`.registry`.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from ..._config import read_declaration
from ..._discovery import SpecRoot
from ..._missing import close_matches
from ..model.model import Model
from .registry import Hit, Rule, _trunk_names, rule

__all__: list[str] = []


@rule("FTS014", "warning", "symlink in a spec root that leaves it")
class SymlinkLeavesSpecRoot(Rule):
    """## What it does
    Finds a symlink in a spec root that points outside it.

    ## Why is this bad?
    Python follows it, so the file it points to loads as part of the backend,
    while reviews, `git diff` of the spec tree and the tools see only a link.

    ## Example
    ```text
    third_party/B/backend/spec/R/shared.py -> ../../../../../outside/shared.py
    ```

    ## Use instead
    ```text
    Copy the file into the spec root, or remove the link.
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        for spec_root in model.spec_roots:
            for path in _links(model, spec_root.path):
                real = os.path.realpath(path)
                if real != spec_root.real and not real.startswith(spec_root.real + os.sep):
                    yield Hit(
                        path,
                        1,
                        1,
                        f"symlink leaves the spec root {spec_root.path}: it points to {real}; "
                        "Python follows it, so copy the file in or remove the link",
                    )


def _links(model: Model, top: str) -> Iterator[str]:
    """Every symlink below folder *top*, symlinked folders not followed (as
    ``os.walk`` lists them), asked of the model's listings: no ``lstat`` each."""
    pending = [top]
    while pending:
        folder = pending.pop()
        listing = model.folder(folder)
        for entry in sorted(listing.names):
            if listing.is_link(entry):
                yield os.path.join(folder, entry)
            elif listing.is_dir(entry):
                pending.append(os.path.join(folder, entry))


@rule(
    "FTS018",
    "warning",
    "a .py file in a spec root that belongs to no mirror tree and is not part of the hook package",
)
class StrayFile(Rule):
    """## What it does
    Finds a `.py` file in a spec root that is neither in its mirror tree nor
    imported by the hook package, and names the mirror path it was probably
    meant for.

    ## Why is this bad?
    Python never loads it: a mirror that lacks the root package's level
    (`spec/runtime/jit.py` for `spec/R/runtime/jit.py`) overrides nothing.

    ## Example
    ```text
    third_party/B/backend/spec/runtime/jit.py
    ```

    ## Use instead
    ```text
    third_party/B/backend/spec/R/runtime/jit.py
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        trunk = set(_trunk_names(model))
        for spec_root in model.spec_roots:
            if spec_root.kind == "legacy":
                continue  # a whole-tree copy: its other files are the old layout's
            mirror = model.mirror_of(spec_root) if spec_root.mirror else None
            if mirror is not None and mirror == os.path.normpath(os.path.abspath(spec_root.path)):
                continue  # a flat mirror tree: every file of the spec root is in it
            used = _hook_package_files(model, spec_root)
            for path in _python_files(spec_root.path, mirror):
                if path in used:
                    continue
                message = _stray_message(model, spec_root, path, trunk)
                # Where it names the mirror path meant, the file was meant as an override
                # that never loads: an error; another file (a script) stays a warning.
                meant = message.endswith("?")
                yield Hit(path, 1, 1, message, "error" if meant else "")


def _python_files(top: str, mirror: str | None) -> Iterator[str]:
    """The ``.py`` files below *top*, outside the mirror tree *mirror*."""
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != "__pycache__"
            and os.path.normpath(os.path.abspath(os.path.join(dirpath, d))) != mirror
        )
        for filename in sorted(filenames):
            if filename.endswith(".py"):
                yield os.path.normpath(os.path.join(dirpath, filename))


def _hook_package_files(model: Model, spec_root: SpecRoot) -> set[str]:
    """The hook module and every file of its package that it imports, directly or not."""
    if not spec_root.hooks:
        return set()
    hooks = os.path.normpath(spec_root.hooks)
    used = {hooks}
    if not spec_root.hooks_package or spec_root.hook_name is None:
        return used
    package, folder = spec_root.hook_name, os.path.dirname(hooks)
    pending = [(hooks, package)]
    while pending:
        path, inside = pending.pop()
        source = model.source(path)
        if source.tree is None:
            continue
        targets = [
            t
            for imp in source.imports(inside)
            for t in (imp.module, *(f"{imp.module}.{n}" for n in imp.names))
        ]
        targets += [
            alias.name
            for node in ast.walk(source.tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
        for target in targets:
            if not target.startswith(package + "."):
                continue
            rest = target[len(package) + 1 :].split(".")
            for candidate, sub in (
                (os.path.join(folder, *rest) + ".py", ".".join(rest[:-1])),
                (os.path.join(folder, *rest, "__init__.py"), ".".join(rest)),
            ):
                candidate = os.path.normpath(candidate)
                if candidate not in used and os.path.isfile(candidate):
                    used.add(candidate)
                    pending.append((candidate, ".".join(filter(None, [package, sub]))))
    return used


def _stray_message(model: Model, spec_root: SpecRoot, path: str, trunk: set[str]) -> str:
    """Why *path* never loads, and the mirror path it probably meant."""
    rel = os.path.relpath(path, spec_root.path)
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    where = spec_root.backend or spec_root.path
    text = (
        f"belongs to no mirror tree of {where} and the hook module never imports it, so Python "
        "never loads it"
    )
    declared = read_declaration(spec_root.path) if spec_root.declaration else None
    if declared is not None and "mirror" in declared.given and declared.mirror is None:
        return f"{text} ({declared.path} declares no mirror tree)"
    mirror = os.path.join(spec_root.path, model.root)
    if spec_root.mirror is not None:
        mirror = model.mirror_of(spec_root)
    if parts and ".".join([model.root, *parts]) in trunk:
        # The root package's level left out: spec/sub/calc.py for spec/R/sub/calc.py.
        return f"{text}; did you mean {os.path.join(mirror, rel)}?"
    if len(parts) > 1 and close_matches(parts[0], [model.root]):
        # The root package's name misspelled.
        return f"{text}; did you mean {os.path.join(mirror, *rel.split(os.sep)[1:])}?"
    return f"{text}; an override goes into the mirror tree {mirror}, laid out like the trunk"
