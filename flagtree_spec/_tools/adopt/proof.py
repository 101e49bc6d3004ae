"""``adopt``: replace FlagTree's own spec file by the forwarder, proven by importing.

The proof imports every module of the root package twice per backend, each
time in a fresh interpreter: once with the trunk's own spec file and once with
the forwarder (``from flagtree_spec.flagtree import *``), both in a scratch
copy of the tree (files hard-linked, symlinks kept, the build marker written
for the backend), and compares them module by module: whether it imports (or
the error), ``__spec__.origin``, ``__file__``, ``__path__`` and the code of
every name; then what each hook answers.  The real tree is changed only after
the proof holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any, NamedTuple, Optional

from ..model.flagtree import FORWARDER, SpecFile
from ..model.model import InputError, Model

__all__ = ["Comparison", "Difference", "compare", "imported_names", "scratch_copy"]

_HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(_HERE, "probe.py")
# migrate's probe holds the digest of a value (the same code in two processes).
DIGESTS = os.path.join(os.path.dirname(_HERE), "migrate", "probe.py")
LIBRARY = os.path.dirname(os.path.dirname(os.path.dirname(_HERE)))


class Difference(NamedTuple):
    """One way a module (or a hook) differs between the two sides."""

    module: str
    what: str
    own: str
    forwarder: str


class Comparison(NamedTuple):
    """The outcome of the proof for one backend."""

    backend: str
    modules: int
    imported: int
    failed_alike: int
    from_spec_tree: int
    hooks: int
    hooks_answered: int
    differences: tuple[Difference, ...]
    first_errors: tuple[str, ...]

    @property
    def proven(self) -> bool:
        """Whether the two sides were compared at all and agree."""
        return not self.differences and self.imported > 0


def imported_names(model: Model, spec: SpecFile) -> dict[str, set[str]]:
    """Per file of the trunk and the mirrors, the names it takes from the spec file: by
    ``from R.<stem> import NAME``, as ``X.NAME`` of a name bound to the module
    (``import R.<stem> as X``, ``from R import <stem>``, ``import R.<stem>``), and by a
    star import (every public name the spec file binds itself)."""
    import ast

    stem = os.path.basename(spec.path)[:-3]
    full = f"{model.root}.{stem}"
    found: dict[str, set[str]] = {}
    files = {
        m.file
        for m in model.modules()
        if m.file is not None and m.file.endswith(".py") and m.file != spec.path
    }
    files.update(e.path for _, e in model.mirror_files() if e.path.endswith(".py"))
    for path in sorted(files):
        tree = model.source(path).tree
        if tree is None or stem not in model.source(path).text:
            continue
        package = _package_of(path, model.rdir, model.root)
        aliases: set[str] = set()  # names bound to the module itself
        dotted = False  # "import R.<stem>": its names read as R.<stem>.NAME
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = _absolute(node, package)
                for alias in node.names:
                    if module == full:
                        names.update(spec.defines if alias.name == "*" else {alias.name})
                    elif module == full.rpartition(".")[0] and alias.name == stem:
                        aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == full:
                        if alias.asname:
                            aliases.add(alias.asname)
                        else:
                            dotted = True
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            value = node.value
            if (isinstance(value, ast.Name) and value.id in aliases) or (
                dotted and ast.unparse(value) == full
            ):
                names.add(node.attr)
        if names:
            found[path] = names
    return found


def _absolute(node: Any, package: Optional[str]) -> str:
    """The module an ``ImportFrom`` *node* in *package* imports from."""
    if not node.level:
        return str(node.module or "")
    if package is None:
        return ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _package_of(path: str, rdir: str, root: str) -> Optional[str]:
    rel = os.path.relpath(os.path.dirname(path), rdir)
    if rel.startswith(os.pardir):
        return None
    parts = [] if rel == os.curdir else rel.split(os.sep)
    return ".".join([root, *parts])


# --------------------------------------------------------------------------- scratch


def scratch_copy(model: Model, scratch: str) -> tuple[str, str]:
    """Copy the root package's tree into *scratch*; return ``(search folder, rdir)``.

    Files are hard-linked (copied where that fails) and symlinks kept as they
    are; in a checkout (``<repo>/python/R``) the copy is ``<scratch>/python/R``
    beside a link ``<scratch>/third_party`` to the checkout's, so the spec
    roots and relative links of ``third_party`` resolve as in the checkout.
    """
    rdir = os.path.realpath(model.rdir)
    parent = os.path.dirname(rdir)
    repo = os.path.dirname(parent) if os.path.basename(parent) == "python" else None
    if repo is not None and os.path.isdir(os.path.join(repo, "third_party")):
        folder = os.path.join(scratch, "python")
        os.symlink(os.path.join(repo, "third_party"), os.path.join(scratch, "third_party"))
    else:
        folder = os.path.join(scratch, "site")
    os.makedirs(folder)
    target = os.path.join(folder, model.root)
    shutil.copytree(rdir, target, symlinks=True, copy_function=_link_or_copy)
    return folder, target


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write(path: str, text: str) -> None:
    """Write *path* anew: never through a hard link into the real tree."""
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# --------------------------------------------------------------------------- the proof


def compare(
    model: Model,
    files: Sequence[SpecFile],
    backend: str,
    modules: Sequence[str],
    hooks: Sequence[str],
    hook_modules: Sequence[str],
    python: str,
    timeout: float = 600.0,
) -> Comparison:
    """Import *modules* with the trunk's own spec file and with the forwarder, under
    *backend*, in a scratch copy; compare them."""
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-adopt-") as work:
        sides = {}
        for side in ("own", "forwarder"):
            scratch = os.path.join(work, side)
            os.makedirs(scratch)
            folder, rdir = scratch_copy(model, scratch)
            _write(os.path.join(rdir, "FLAGTREE_BACKEND"), backend + "\n")
            if side == "forwarder":
                for spec in files:
                    _write(os.path.join(rdir, os.path.basename(spec.path)), FORWARDER)
            sides[side] = (folder, rdir, scratch)
        reports = {}
        wanted = list(hooks)
        for _ in range(2):  # a second round when one side offers hooks the other was not asked
            for side, (folder, _, scratch) in sides.items():
                reports[side] = _probe(
                    python,
                    side,
                    model.root,
                    files,
                    folder,
                    scratch,
                    modules,
                    wanted,
                    hook_modules,
                    work,
                    timeout,
                    extra=side == "forwarder",
                )
            offered = sorted(
                set(wanted) | set(reports["own"]["offered"]) | set(reports["forwarder"]["offered"])
            )
            if offered == wanted:
                break
            wanted = offered
        trunk = {}
        for name in modules:
            file = model.trunk_only(name) if name != model.root else None
            if file is not None:
                rel = os.path.relpath(file, model.rdir)
                trunk[name] = (
                    f"<root>{os.sep}{os.path.basename(sides['own'][0])}{os.sep}{model.root}{os.sep}{rel}"
                )
        return _compared(backend, reports["own"], reports["forwarder"], modules, wanted, trunk)


def _probe(
    python: str,
    side: str,
    root: str,
    files: Sequence[SpecFile],
    folder: str,
    scratch: str,
    modules: Sequence[str],
    hooks: Sequence[str],
    hook_modules: Sequence[str],
    work: str,
    timeout: float,
    *,
    extra: bool,
) -> dict[str, Any]:
    config = os.path.join(work, f"{side}.json")
    report = os.path.join(work, f"{side}-report.json")
    with open(config, "w", encoding="utf-8") as f:
        json.dump(
            {
                "root": root,
                "spec_files": [os.path.basename(f.path)[:-3] for f in files],
                "modules": list(modules),
                "hooks": list(hooks),
                "hook_modules": list(hook_modules),
                "strip": [os.path.realpath(scratch), scratch],
                "digests": DIGESTS,
                "report": report,
            },
            f,
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env.pop("PYTHONPATH", None)
    # No bytecode written: in a checkout, third_party is the checkout's own folder.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The scratch copy first; on the forwarder's side, a folder holding only a link to
    # this library, so that FlagTree's own file runs without it (unless the trunk imports
    # it) and no other package of this library's environment joins the trunk's.
    path = [folder]
    if extra:
        library = os.path.join(work, "library")
        if not os.path.isdir(library):
            os.makedirs(library)
            os.symlink(
                os.path.join(LIBRARY, "flagtree_spec"), os.path.join(library, "flagtree_spec")
            )
        path.append(library)
    env["PYTHONPATH"] = os.pathsep.join(path)
    neutral = os.path.join(work, "cwd")
    os.makedirs(neutral, exist_ok=True)
    try:
        proc = subprocess.run(
            [python, PROBE, config],
            env=env,
            cwd=neutral,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise InputError(
            f"importing the modules of {root} took longer than {timeout:.0f} s with "
            f"{'the forwarder' if extra else 'the trunk own spec file'}; is an import waiting "
            "for input or a device?"
        ) from None
    if proc.returncode != 0 or not os.path.isfile(report):
        raise InputError(
            f"the import probe ({'forwarder' if extra else 'own spec file'}) exited with "
            f"{proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    with open(report, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def _compared(
    backend: str,
    own: dict[str, Any],
    forwarder: dict[str, Any],
    modules: Sequence[str],
    hooks: Sequence[str],
    trunk: dict[str, str],
) -> Comparison:
    differences: list[Difference] = []
    imported = failed = from_tree = 0
    own_root = modules[0].partition(".")[0] if modules else ""
    errors: list[str] = []
    for name in modules:
        a, b = own["modules"][name], forwarder["modules"][name]
        if "error" in a or "error" in b:
            if a.get("error") == b.get("error"):
                failed += 1
                if len(errors) < 3:
                    errors.append(f"{name}: {a['error']}")
                continue
            differences.append(
                Difference(name, "import", a.get("error", "imports"), b.get("error", "imports"))
            )
            continue
        imported += 1
        # A file other than the trunk's (a namespace package has none: not counted).
        if a["origin"] is not None and name != own_root and a["origin"] != trunk.get(name):
            from_tree += 1
        for key in ("origin", "file", "path"):
            if a[key] != b[key]:
                differences.append(Difference(name, key, repr(a[key]), repr(b[key])))
        names_a, names_b = a["names"], b["names"]
        for key in sorted(set(names_a) | set(names_b)):
            if names_a.get(key) != names_b.get(key):
                differences.append(
                    Difference(
                        name,
                        f"name {key}",
                        names_a.get(key, "(missing)"),
                        names_b.get(key, "(missing)"),
                    )
                )
    answered = 0
    for hook in hooks:
        a, b = own["hooks"].get(hook), forwarder["hooks"].get(hook)
        if a is not None:
            answered += 1
        if a != b:
            differences.append(Difference(f"hook {hook}", "answer", str(a), str(b)))
    return Comparison(
        backend,
        len(modules),
        imported,
        failed,
        from_tree,
        len(hooks),
        answered,
        tuple(differences),
        tuple(errors),
    )
