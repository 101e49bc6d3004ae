"""Modules kept whole because of what other modules of the plan do.

A minimized or dropped module runs trunk's version (through ``inherit`` or
as it is).  Where that version would fail or behave unlike the copy because
of another module the plan keeps as the copy's, the copy's version is kept
whole instead:

* trunk's version imports, at module level, a module of the package that
  exists nowhere (:func:`whole_for_missing_modules`);
* trunk's version writes, through another module's decorator, to a
  definition the plan keeps as the copy's (:func:`whole_for_foreign_writes`);
* trunk's version imports names that a whole-kept copy lacks
  (:func:`whole_for_lost_names`).

:func:`imported_names` gives, per module, what the kept code imports from it
(trunk's deletion of such a name does not win).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Iterator, Sequence

from .files import decode, parse, read, walk
from .statements import lost_names, module_names, writers
from .steps import Given, Step

__all__ = [
    "imported_names",
    "imports_of",
    "keep_broken_copies",
    "trunk_imports",
    "whole_for_foreign_writes",
    "whole_for_lost_names",
    "whole_for_missing_modules",
]


def imported_names(
    fork: str, steps: Sequence[Step], skip: Collection[str] = ()
) -> dict[str, set[str]]:
    """Per module of the copy (a relative path): the names the kept code imports from it.

    The kept code: files the plan moves, adds or keeps whole, and the
    minimized overrides, less the paths in *skip* (code equal to the base's).
    ``from .core import add`` in ``language/math.py`` and ``from
    R.language.core import add`` anywhere both count for ``language/core.py``.
    """
    root = os.path.basename(fork)
    found: dict[str, set[str]] = {}
    for step in steps:
        rel = step.path
        if not rel.endswith(".py") or step.action in ("drop", "link") or rel in skip:
            continue
        if step.text is not None:
            source = step.text.decode("utf-8", "surrogateescape")
        else:
            path = os.path.join(fork, *rel.split("/"))
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            source = decode(path, read(path))
        for target, names in imports_of(rel, source, root):
            found.setdefault(target, set()).update(names)
    return found


def imports_of(rel: str, source: str, root: str) -> Iterator[tuple[str, list[str]]]:
    """``(module path, names)`` for each ``from ... import`` of *source* inside the package.

    Each import gives both candidate paths, ``x.py`` and ``x/__init__.py``.
    """
    tree = parse(source)
    if tree is None:
        return
    package = rel.split("/")[:-1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if node.level - 1 > len(package):
                continue
            parts = package[: len(package) - (node.level - 1)]
        elif (node.module or "").split(".")[0] == root:
            parts = []
        else:
            continue
        module = (node.module or "").split(".")
        if not node.level:
            module = module[1:]
        parts = [*parts, *(m for m in module if m)]
        names = [a.name for a in node.names]
        for target in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
            yield target.lstrip("/"), names


def trunk_imports(trunk: str) -> dict[str, set[tuple[str, ...]]]:
    """Per trunk file (a relative path): the modules of the package it imports anywhere.

    Each module is given by its parts below the root package
    (``("_C", "libtriton")`` for ``from triton._C.libtriton import ir``).
    """
    root = os.path.basename(trunk)
    found: dict[str, set[tuple[str, ...]]] = {}
    for rel, entry in walk(trunk):
        if not rel.endswith(".py") or entry.is_symlink():
            continue
        tree = parse(decode(entry.path, read(entry.path)))
        if tree is None:
            continue
        package = rel.split("/")[:-1]
        mine = found.setdefault(rel, set())
        for node in ast.walk(tree):
            mine.update(_modules_of(node, package, root))
    return found


def _modules_of(node: ast.AST, package: list[str], root: str) -> Iterator[tuple[str, ...]]:
    """The modules of the package an import statement imports, as parts below the root."""
    if isinstance(node, ast.ImportFrom) and node.level:
        if node.level - 1 <= len(package):
            parts = package[: len(package) - (node.level - 1)]
            yield (*parts, *(m for m in (node.module or "").split(".") if m))
    elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == root:
        yield tuple((node.module or "").split(".")[1:])
    elif isinstance(node, ast.Import):
        for a in node.names:
            if a.name.split(".")[0] == root:
                yield tuple(a.name.split(".")[1:])


def _missing(
    parts: Sequence[str], tops: Sequence[str], rel: str, imports: dict[str, set[tuple[str, ...]]]
) -> bool:
    """Whether module *parts* of the package exists nowhere, judged without importing it.

    It exists when a file or folder holds it in trunk or the copy.  A module
    below the first part that is missing is judged from where that part
    would be: below a module file (an extension registers submodules such as
    ``triton._C.libtriton.gluon_ir`` when it loads), in a folder holding no
    Python file (``_C``, where the build puts compiled parts), or imported by
    another trunk module (trunk cannot run without it), it is taken to exist,
    so the plan is the same with and without a built extension.
    """
    if any(_module_exists(top, parts) for top in tops):
        return False
    first = next(
        i for i in range(1, len(parts) + 1) if not any(_module_exists(t, parts[:i]) for t in tops)
    )
    above = parts[: first - 1]
    for top in tops:
        if above and not os.path.isdir(os.path.join(top, *above)) and _module_exists(top, above):
            return False  # a submodule of a module file: only an extension has those
        folder = os.path.join(top, *above)
        if above and os.path.isdir(folder) and not _holds_python(folder):
            return False
    wanted = tuple(parts[:first])
    return not any(
        m[: len(wanted)] == wanted
        for other, found in imports.items()
        if other != rel
        for m in found
    )


def _holds_python(folder: str) -> bool:
    return any(any(f.endswith(".py") for f in files) for _, _, files in os.walk(folder))


def whole_for_missing_modules(
    steps: list[Step],
    inputs: dict[str, Given],
    trunk: str,
    fork: str,
    imports: dict[str, set[tuple[str, ...]]],
) -> None:
    """Keep whole what would run a trunk import of a module of the package that does not exist.

    A minimized or dropped module runs trunk's version.  Where that version
    imports, at module level, a module of the package that neither trunk nor
    the copy has (trunk's ``tools/disasm.py`` importing ``triton.common``),
    running it fails; the copy's version, which does not, is kept whole.
    *imports* is what :func:`trunk_imports` gives for the trunk.
    """
    root = os.path.basename(trunk)
    for k, step in enumerate(steps):
        if step.action not in ("minimize", "drop") or step.path not in inputs:
            continue
        tree = parse(inputs[step.path][1])
        if tree is None:
            continue
        package = step.path.split("/")[:-1]
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level - 1 > len(package):
                    continue
                parts = package[: len(package) - (node.level - 1)]
                parts += [m for m in (node.module or "").split(".") if m]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == root:
                parts = (node.module or "").split(".")[1:]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names if a.name.split(".")[0] == root]
                if not found:
                    continue
                parts = found[0].split(".")[1:]
            else:
                continue
            if not parts or not _missing(parts, (trunk, fork), step.path, imports):
                continue
            n, counterpart = inputs[step.path][5], inputs[step.path][6]
            reason = (
                f"kept whole: trunk's version imports {'.'.join([root, *parts])} (line "
                f"{node.lineno}), which neither trunk nor the copy has"
            )
            steps[k] = Step(step.path, counterpart, "move", reason, n, n, None, step.notes)
            break


def keep_broken_copies(
    steps: list[Step],
    trunk: str,
    fork: str,
    imports: dict[str, set[tuple[str, ...]]],
    texts: dict[str, str],
) -> bool:
    """Keep in ``migrate-leftovers/`` a copied module that can never be imported.

    Where the copy's version imports, at module level, a module of the
    package that exists nowhere (FlagTree's ``tools/disasm.py`` importing
    ``triton.common``), it fails in the copy too, where nothing imports it;
    as an override it would break the trunk modules that do (trunk's
    compiler imports ``disasm``).  Trunk's version runs instead.  *texts*
    holds the copy's source per path.  Returns whether a step changed.
    """
    root = os.path.basename(trunk)
    changed = False
    for k, step in enumerate(steps):
        if step.action not in ("move", "minimize") or step.trunk is None:
            continue
        if not step.path.endswith(".py") or step.path not in texts:
            continue
        tree = parse(texts[step.path])
        if tree is None:
            continue
        package = step.path.split("/")[:-1]
        for node in tree.body:
            found = [p for p in _modules_of(node, package, root) if p]
            missing = [p for p in found if _missing(p, (trunk, fork), step.path, imports)]
            if not missing:
                continue
            n = step.lines_before
            reason = (
                f"the copy's version imports {'.'.join([root, *missing[0]])} (line "
                f"{node.lineno}), which exists nowhere, so it can never be imported; as an "
                "override it would break the trunk modules that import it: trunk's version "
                "runs, and the copy is kept for reference"
            )
            steps[k] = Step(step.path, step.trunk, "keep", reason, n, n, None, step.notes)
            changed = True
            break
    return changed


def whole_for_foreign_writes(steps: list[Step], inputs: dict[str, Given], trunk: str) -> bool:
    """Keep whole a module whose trunk-only definitions write, through a decorator of
    another module, to a definition the plan keeps as the copy's.

    Triton's ``standard.py`` says ``@core._tensor_member_fn`` over ``sort``:
    trunk's version, run by ``inherit()``, attaches trunk's ``sort`` to
    ``core.tensor``; where the copy has no such ``sort`` and ``core.py`` is
    the copy's, the copy's ``tensor`` would get a method the copy never gave it.
    """
    root = os.path.basename(trunk)
    by_path = {s.path: s for s in steps}
    changed = False
    for k, step in enumerate(steps):
        if step.action not in ("minimize", "drop") or step.path not in inputs:
            continue
        text, other = inputs[step.path][0], inputs[step.path][1]
        tree = parse(other)
        if tree is None:
            continue
        # Module aliases of trunk's version: "from . import core", "import R.x.core as core".
        aliases: dict[str, str] = {}
        package = step.path.split("/")[:-1]
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level and node.level - 1 <= len(package):
                base = package[: len(package) - (node.level - 1)]
                base += [m for m in (node.module or "").split(".") if m]
                for a in node.names:
                    aliases[a.asname or a.name] = "/".join([*base, a.name]) + ".py"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name.split(".")[0] == root:
                        aliases[a.asname] = "/".join(a.name.split(".")[1:]) + ".py"
        # The copy's decorators per name: a copy that decorates its own version the
        # same way writes its own over trunk's, and then nothing is left of trunk's.
        copy_tree = parse(text)
        mine = {
            n.name: {
                ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in n.decorator_list
            }
            for n in (copy_tree.body if copy_tree is not None else [])
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        for node in tree.body:
            name = getattr(node, "name", None)
            if name is None:
                continue
            for decorator in getattr(node, "decorator_list", ()):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                    continue
                if ast.unparse(target) in mine.get(name, set()):
                    continue
                rel = aliases.get(target.value.id)
                owner = by_path.get(rel or "")
                if rel is None or owner is None or owner.action not in ("move", "minimize"):
                    continue  # trunk's module runs there: the write reaches trunk's object
                source = os.path.join(trunk, *rel.split("/"))
                if not os.path.isfile(source):
                    continue
                written = writers(decode(source, read(source))).get(target.attr, frozenset())
                if owner.text is not None:  # minimized: only what the override defines again
                    again = module_names(owner.text.decode("utf-8", "surrogateescape"))
                else:
                    again = module_names(inputs[rel][0]) if rel in inputs else []
                written = written & frozenset(again)
                if written:
                    n, counterpart = inputs[step.path][5], inputs[step.path][6]
                    reason = (
                        f"kept whole: trunk's {name} (line {node.lineno}) writes to "
                        f"{', '.join(sorted(written))} of {rel} through @{ast.unparse(target)}, "
                        f"which the copy's {name} does not, and {rel} is the copy's"
                    )
                    steps[k] = Step(step.path, counterpart, "move", reason, n, n, None, step.notes)
                    changed = True
                    break
            if steps[k].action == "move":
                break
    return changed


def _module_exists(top: str, parts: Sequence[str]) -> bool:
    folder = os.path.join(top, *parts)
    return (
        os.path.isdir(folder)
        or any(os.path.exists(folder + suffix) for suffix in (".py", ".so", ".pyd", ".pyc"))
        or any(
            name.startswith(parts[-1] + ".") and name.endswith((".so", ".pyd"))
            for name in (
                os.listdir(os.path.dirname(folder))
                if os.path.isdir(os.path.dirname(folder))
                else ()
            )
        )
    )


def whole_for_lost_names(
    steps: list[Step],
    inputs: dict[str, Given],
    root: str,
) -> bool:
    """Keep whole what would run trunk's code importing names a whole copy lacks.

    A module kept whole (moved) loses the names its trunk counterpart binds
    and the copy does not.  A minimized or dropped module runs trunk's
    version (through ``inherit`` or as it is); where that version imports
    such a name from the whole copy, it would fail, so it is kept whole too:
    the copy's version, made to work with the copy's module.  Returns
    whether a step changed.
    """
    lost: dict[str, set[str]] = {}
    for step in steps:
        if step.action == "move" and step.path in inputs:
            text, other = inputs[step.path][0], inputs[step.path][1]
            lost[step.path] = set(lost_names(module_names(text), module_names(other)))
    changed = False
    for k, step in enumerate(steps):
        if step.action not in ("minimize", "drop") or step.path not in inputs:
            continue
        for target, names in imports_of(step.path, inputs[step.path][1], root):
            missing = sorted(set(names) & lost.get(target, set()))
            if missing:
                n, counterpart = inputs[step.path][5], inputs[step.path][6]
                reason = (
                    f"kept whole: trunk's version imports {', '.join(missing[:4])} from "
                    f"{target}, which is kept whole without it"
                )
                steps[k] = Step(step.path, counterpart, "move", reason, n, n, None, step.notes)
                changed = True
                break
    return changed
