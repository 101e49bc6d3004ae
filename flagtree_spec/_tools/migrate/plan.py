"""Plan and apply the migration of a legacy whole-tree copy into a spec tree.

A backend that forked the trunk keeps a copy of its whole Python tree (the
*fork*, ``third_party/B/python/R``).  :func:`make_plan` gives every entry of
the copy one action against its *counterpart*, the next lower version of the
same path (the base backend's override when the spec root's declaration
names a ``base`` that has one, else the trunk's file):

``drop``      byte- or AST-identical to its counterpart: removed;
``move``      differs: moved into the mirror tree (the *into* folder);
``minimize``  differs, and becomes ``inherit(globals())`` plus what the
              backend changed (see :mod:`.minimize`);
``add``       no counterpart: an added module or file, moved;
``link``      a symlink, never followed: links hold no data, removed;
``keep``      cannot be migrated (the root package's ``__init__``, compiled
              files): moved under ``migrate-leftovers/``, outside every spec
              root, with what to do about it.

:func:`.apply.apply` carries the plan out: ``git mv`` inside a git work tree, so
history follows; a file that differs from its counterpart is never
deleted; afterwards nothing under the fork can load.  Every step leaves each
file readable at one of its locations, so an interrupted run is completed
by running again.  Nothing of the trunk or the backend is imported.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import tokenize
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Optional

from ..model.model import InputError
from ..model.source import Source
from .minimize import lost_names, minimize, module_names, signatures, writers

__all__ = ["ACTIONS", "Plan", "Step", "make_plan"]

ACTIONS = ("drop", "move", "minimize", "add", "link", "keep")
# What --minimize needs to plan one differing module again: the copy's text,
# trunk's, the base's, where the counterpart is, the copy's bytes, its line
# count and the counterpart file.
_Given = tuple[str, str, Optional[str], str, bytes, int, str]
_COMPILED = (".so", ".pyd", ".pyc")


class Step(NamedTuple):
    """One entry of the copy and what happens to it."""

    path: str  # relative to the fork, "/"-separated
    trunk: Optional[str]  # the counterpart file
    action: str
    reason: str
    lines_before: int
    lines_after: int
    text: Optional[bytes] = None  # the minimized file
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "trunk": self.trunk,
            "action": self.action,
            "reason": self.reason,
            "lines_before": self.lines_before,
            "lines_after": self.lines_after,
            "notes": list(self.notes),
        }


class Plan(NamedTuple):
    fork: str
    trunk: str
    into: str
    leftovers: str
    steps: list[Step]
    missing: list[str]  # trunk files the copy lacks, relative
    warnings: list[str]
    spec_path: list[str]  # trunk __init__.py files the overrides need the call in
    minimize: bool

    def summary(self) -> dict[str, int]:
        return {a: sum(s.action == a for s in self.steps) for a in ACTIONS}

    def as_dict(self) -> dict[str, Any]:
        return {
            "fork": self.fork,
            "trunk": self.trunk,
            "into": self.into,
            "leftovers": self.leftovers,
            "entries": [s.as_dict() for s in self.steps],
            "summary": self.summary(),
            "missing": self.missing,
            "warnings": self.warnings,
            "spec_path": self.spec_path,
        }

    def destination(self, step: Step) -> Optional[str]:
        if step.action in ("move", "add", "minimize"):
            return os.path.join(self.into, *step.path.split("/"))
        if step.action == "keep":
            return os.path.join(self.leftovers, os.path.basename(self.fork), *step.path.split("/"))
        return None


# --------------------------------------------------------------------------- reading


def read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise InputError(
            f"{path} cannot be read ({exc.strerror or exc}); fix its permissions"
        ) from None


def decode(path: str, data: bytes) -> str:
    """The text of Python source *data*, decoded per PEP 263 as the interpreter does."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise InputError(
            f"{path} does not decode ({exc}); fix the bytes or its coding declaration"
        ) from None


def _parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def same_tree(a: ast.AST, b: ast.AST) -> bool:
    """Whether two syntax trees are equal, positions aside (``ast.dump`` equality)."""
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
        elif x != y or repr(x) != repr(y):  # 0.0 == -0.0, but they are different constants
            return False
    return True


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


class BaseTree:
    """The trunk the copy was made from: a folder, or a git revision of the trunk."""

    def __init__(self, trunk: str, folder: Optional[str], rev: Optional[str]) -> None:
        self.folder = folder
        self.rev = rev
        self.top = ""
        self.prefix = ""
        if rev is not None:
            self.top = _git(trunk, "rev-parse", "--show-toplevel", what=f"--base-rev {rev}")
            self.prefix = os.path.relpath(os.path.realpath(trunk), os.path.realpath(self.top))
            self.prefix = self.prefix.replace(os.sep, "/")
            if self.text("__init__.py") is None:
                raise InputError(
                    f"--base-rev {rev}: {self.prefix}/__init__.py does not exist there, so it "
                    "is not a trunk of this package; give the revision the copy was made from"
                )
            try:
                _git(self.top, "merge-base", "--is-ancestor", rev, "HEAD", what="")
            except InputError:
                raise InputError(
                    f"--base-rev {rev} is not an ancestor of HEAD, so it is not an older trunk; "
                    "give the revision the copy was made from"
                ) from None

    def text(self, rel: str) -> Optional[str]:
        if self.folder is not None:
            path = os.path.join(self.folder, *rel.split("/"))
            return decode(path, read(path)) if os.path.isfile(path) else None
        proc = subprocess.run(
            ["git", "show", f"{self.rev}:{self.prefix}/{rel}"],
            cwd=self.top,
            capture_output=True,
        )
        if proc.returncode != 0:
            return None
        return decode(f"{self.rev}:{self.prefix}/{rel}", proc.stdout)


def _git(where: str, *args: str, what: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True)
    except OSError as exc:
        raise InputError(f"{what}: git cannot run ({exc}); install git") from None
    if proc.returncode != 0:
        raise InputError(f"{what}: {proc.stderr.strip() or 'git ' + args[0] + ' failed'}")
    return proc.stdout.strip()


# --------------------------------------------------------------------------- planning


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _walk(top: str, rel: str = "") -> Iterator[tuple[str, os.DirEntry[str]]]:
    with os.scandir(os.path.join(top, rel) if rel else top) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path = f"{rel}/{entry.name}" if rel else entry.name
        if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
            yield from _walk(top, path)
        else:
            yield path, entry


def check_folders(
    fork: str, trunk: str, into: str, base: Optional[str] = None
) -> tuple[str, str, str]:
    """Validate the three folders (and a base folder); return them absolute."""
    fork, trunk, into = (os.path.abspath(p) for p in (fork, trunk, into))
    if not os.path.isdir(fork) and not os.path.isdir(into):
        raise InputError(f"--fork {fork} is not a directory; give the copy's package folder")
    if not os.path.isfile(os.path.join(trunk, "__init__.py")):
        raise InputError(f"--trunk {trunk} has no __init__.py; give the root package's folder")
    real = {k: os.path.realpath(v) for k, v in (("fork", fork), ("trunk", trunk), ("into", into))}
    if real["fork"] == real["trunk"]:
        raise InputError(f"--fork and --trunk are the same folder ({fork}); give the copy")
    for a, b in (("fork", "trunk"), ("trunk", "fork"), ("into", "fork"), ("fork", "into")):
        if _under(real[a], real[b]):
            raise InputError(f"--{a} {real[a]} lies inside --{b} {real[b]}; give separate folders")
    if _under(real["into"], real["trunk"]):
        raise InputError(
            f"--into {into} lies inside the trunk {trunk}; give the spec root's mirror"
        )
    name = os.path.basename(trunk)
    if os.path.basename(fork) != name:
        raise InputError(
            f"--fork {fork} is a copy of package {os.path.basename(fork)!r}, not of {name!r}; "
            f"give the copy of {name}"
        )
    if base is not None:
        base = os.path.abspath(base)
        if not os.path.isfile(os.path.join(base, "__init__.py")) or os.path.basename(base) != name:
            raise InputError(
                f"--base {base} is not an older trunk of {name!r} (a folder named {name} with "
                "__init__.py); give the trunk the copy was made from"
            )
        if os.path.realpath(base) in real.values():
            raise InputError(f"--base {base} is the fork, trunk or into folder; give the old trunk")
        if not any(
            os.path.isfile(os.path.join(trunk, *rel.split("/")))
            for rel, _ in _walk(base)
            if rel != "__init__.py"
        ):
            raise InputError(
                f"--base {base} shares no module with the trunk {trunk} but its __init__.py, "
                "so it is not an older trunk of it; give the trunk the copy was made from"
            )
        why = _not_older(base, trunk, fork)
        if why:
            raise InputError(
                f"--base {base} is not an older trunk of {name!r}: {why}; give the trunk the "
                "copy was made from"
            )
    return fork, trunk, into


def _not_older(base: str, trunk: str, fork: str) -> str:
    """Why *base* cannot be the trunk *fork* was copied from, or ``""``.

    An older trunk of the same package shares most of its definitions with
    trunk or the copy (each name bound to the same syntax tree in the same
    file), and the copy is at least as close to it as to trunk (files equal
    by syntax tree): a newer trunk, or another package of the same name,
    fails one of the two.
    """
    found = total = near_base = near_trunk = 0
    for rel, entry in _walk(base):
        if not rel.endswith(".py") or entry.is_symlink():
            continue
        parts = rel.split("/")
        texts = {}
        for label, top in (("trunk", trunk), ("copy", fork)):
            path = os.path.join(top, *parts)
            if os.path.isfile(path) and not os.path.islink(path):
                texts[label] = decode(path, read(path))
        if not texts:
            continue
        mine = decode(entry.path, read(entry.path))
        theirs = {label: signatures(text) for label, text in texts.items()}
        for name, sig in signatures(mine).items():
            total += 1
            found += any(t.get(name) == sig for t in theirs.values())
        if "copy" in texts and "trunk" in texts:
            copy_tree, base_tree, trunk_tree = (
                _parse(texts["copy"]),
                _parse(mine),
                _parse(texts["trunk"]),
            )
            if copy_tree is not None and base_tree is not None and trunk_tree is not None:
                near_base += same_tree(copy_tree, base_tree)
                near_trunk += same_tree(copy_tree, trunk_tree)
    if total and found * 2 < total:
        return (
            f"only {found} of its {total} top-level definitions are found in trunk or the "
            "copy, so it is another package of the same name"
        )
    if near_trunk > near_base:
        return (
            f"the copy equals trunk in {near_trunk} files and the base in only {near_base}, "
            "so the base is newer than the copy, or another trunk"
        )
    return ""


def _leftovers(fork: str, into: str, trunk: str) -> str:
    """``<backend>/migrate-leftovers``: beside the copy's spec root, outside every spec root.

    The copy's spec root is the folder holding it (``third_party/B/python``),
    the new one the folder holding *into*; the leftovers go into the folder
    above the copy's (``third_party/B``).
    """
    leftovers = os.path.join(os.path.dirname(os.path.dirname(fork)), "migrate-leftovers")
    for root in (os.path.dirname(into), trunk):
        if _under(os.path.realpath(leftovers), os.path.realpath(root)):
            raise InputError(
                f"the leftovers folder {leftovers} would lie inside {root}; give a --fork "
                "whose parent folder is outside the new spec root and the trunk"
            )
    return leftovers


def _root_init(copy: str, trunk: str) -> str:
    """What in a copied root ``__init__`` differs from trunk's, in a few words."""
    try:
        mine, theirs = ast.parse(copy), ast.parse(trunk)
    except (SyntaxError, ValueError):
        return "it does not parse"
    known = {ast.dump(s) for s in theirs.body}
    found = []
    for s in mine.body:
        if ast.dump(s) not in known:
            head = ast.get_source_segment(copy, s) or ""
            found.append(f"line {s.lineno}: {head.splitlines()[0][:50] if head else '...'}")
    if not found:
        return "it lacks some of trunk's statements"
    return "; ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")


def make_plan(
    fork: str,
    trunk: str,
    into: str,
    *,
    lower: Sequence[str] = (),
    minimize_files: bool = False,
    base: Optional[BaseTree] = None,
) -> Plan:
    """Classify every entry of *fork* against its counterpart.

    *lower* lists the mirror folders of the backends the spec root's
    declaration names as ``base`` (highest first); the trunk comes last.
    Raises :class:`InputError` for an unusable input, before anything changes.
    """
    if base is not None and base.folder is not None:
        check_folders(fork, trunk, into, base.folder)
    fork, trunk, into = check_folders(fork, trunk, into)
    leftovers = _leftovers(fork, into, trunk)
    steps: list[Step] = []
    warnings: list[str] = []
    seen: set[str] = set()
    common = 0
    inputs: dict[str, _Given] = {}
    # A fork that is gone while the mirror exists: an earlier run moved everything.
    for rel, entry in _walk(fork) if os.path.isdir(fork) else iter(()):
        seen.add(rel)
        parts = rel.split("/")
        counterpart = next(
            (
                os.path.join(d, *parts)
                for d in (*lower, trunk)
                if os.path.isfile(os.path.join(d, *parts))
            ),
            None,
        )
        common += counterpart is not None
        via = "trunk" if counterpart is None or _under(counterpart, trunk) else counterpart
        if entry.is_symlink():
            target = os.readlink(entry.path)
            where = "into trunk" if _under(os.path.realpath(entry.path), trunk) else "elsewhere"
            steps.append(
                Step(rel, counterpart, "link", f"symlink to {target} ({where}): removed", 0, 0)
            )
            continue
        if entry.name == "__pycache__":
            steps.append(Step(rel, None, "drop", "bytecode cache: removed", 0, 0))
            continue
        data = read(entry.path)
        n = _lines(data)
        is_py = rel.endswith(".py")
        text = decode(entry.path, data) if is_py else ""
        if counterpart is not None and read(counterpart) == data:
            steps.append(Step(rel, counterpart, "drop", f"byte-identical to {via}", n, 0))
            continue
        other = decode(counterpart, read(counterpart)) if is_py and counterpart else ""
        tree = _parse(text) if is_py and counterpart else None
        theirs = _parse(other) if tree is not None else None
        if tree is not None and theirs is not None and same_tree(tree, theirs):
            steps.append(Step(rel, counterpart, "drop", f"AST-identical to {via}", n, 0))
            continue
        if rel == "__init__.py":
            what = _root_init(text, other) if counterpart else "trunk has none"
            steps.append(
                Step(
                    rel,
                    counterpart,
                    "keep",
                    "the root package's __init__ can never be an override; it differs from "
                    f"trunk's ({what}): put that code into the backend's hook module "
                    "(<spec root>/__init__.py, called through spec()) or into a module of "
                    "the mirror tree, then delete the leftover",
                    n,
                    n,
                )
            )
            continue
        if rel.endswith(_COMPILED):
            steps.append(
                Step(
                    rel,
                    counterpart,
                    "keep",
                    "a compiled file never belongs in a mirror tree: build it from source in "
                    "the backend's build, then delete the leftover",
                    n,
                    n,
                )
            )
            continue
        if counterpart is None:
            _refuse_namespace_init(rel, trunk)
            steps.append(Step(rel, None, "add", "no counterpart: added by the backend", n, n))
            continue
        if tree is not None and minimize_files:
            base_text = base.text(rel) if base is not None and via == "trunk" else None
            inputs[rel] = (text, other, base_text, via, data, n, counterpart)
            steps.append(_minimized(rel, inputs[rel], base is not None, ()))
        else:
            lost = lost_names(module_names(text), module_names(other)) if tree else []
            notes = (
                (
                    f"loses trunk's {', '.join(lost[:8])}{' and more' if len(lost) > 8 else ''}: "
                    "the whole copy replaces trunk's module; add to the override by hand what "
                    "it needs, or run with --minimize",
                )
                if lost
                else ()
            )
            steps.append(Step(rel, counterpart, "move", f"differs from {via}", n, n, None, notes))
    if seen and not common:
        raise InputError(
            f"--fork {fork} shares no file with the trunk {trunk}: it is not a copy of it"
        )
    # Trunk's deletion of a name does not win where another module the plan keeps
    # as the copy's imports it: minimize again with what the kept modules import.
    asked: dict[str, set[str]] = {}
    for _ in range(4):
        imported = _imported_names(fork, steps)
        again = [r for r in inputs if imported.get(r, set()) != asked.get(r, set())]
        if not again:
            break
        for k, step in enumerate(steps):
            if step.path in again:
                asked[step.path] = imported.get(step.path, set())
                names = sorted(asked[step.path])
                steps[k] = _minimized(step.path, inputs[step.path], base is not None, names)
    _whole_for_missing_modules(steps, inputs, trunk, fork)
    for _ in range(len(inputs)):
        changed = _whole_for_foreign_writes(steps, inputs, trunk)
        if not _whole_for_lost_names(steps, inputs, os.path.basename(fork)) and not changed:
            break
    warnings.extend(
        f"{s.path}: a package __init__ override replaces trunk's, whose imports and "
        "spec_path call then do not run; prefer inherit(globals()) in it (check FTS002)"
        for s in steps
        if s.action == "move" and s.path.endswith("/__init__.py")
    )
    links = tuple(s.path + "/" for s in steps if s.action == "link")
    missing = [
        rel
        for rel, e in _walk(trunk)
        if rel not in seen and e.name != "__pycache__" and not rel.startswith(links)
    ]
    plan = Plan(fork, trunk, into, leftovers, steps, missing, warnings, [], minimize_files)
    _conflicts(plan)
    plan.spec_path.extend(_spec_path_needs(plan))
    return plan


def _refuse_namespace_init(rel: str, trunk: str) -> None:
    """An added ``__init__.py`` over a namespace package of trunk: refused (exit 2)."""
    if not rel.endswith("__init__.py") or rel == "__init__.py":
        return
    folder = os.path.join(trunk, *rel.split("/")[:-1])
    if os.path.isdir(folder):
        held = sorted(e for e in os.listdir(folder) if e != "__pycache__")
        shown = ", ".join(held[:3]) + (" ..." if len(held) > 3 else "")
        raise InputError(
            f"{rel}: the copy adds an __init__.py to {rel[: -len('/__init__.py')]}, which is a "
            f"namespace package in trunk ({folder} has no __init__.py); in a mirror tree it "
            f"would make the package a regular one and hide what trunk's folder holds "
            f"({shown or 'nothing yet'}): delete it from the copy (or add it to trunk), then "
            "run again"
        )


def _minimized(
    rel: str,
    given: _Given,
    has_base: bool,
    imported: Sequence[str],
) -> Step:
    """The step for a differing module with ``--minimize``: minimize, drop or move."""
    text, other, base_text, via, data, n, counterpart = given
    result = minimize(
        text, other, base_text, has_base=has_base and via == "trunk", imported=imported
    )
    if has_base and via != "trunk":
        result = result._replace(
            notes=(
                f"the counterpart is {via}, not trunk: the base says nothing about it",
                *result.notes[1:],
            )
        )
    if result.same:
        return Step(rel, counterpart, "drop", result.reason, n, 0, None, result.notes)
    if result.text is not None:
        # The copy's own encoding: its coding line, if any, stays first in the override.
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        encoded = result.text.encode(encoding)
        return Step(
            rel, counterpart, "minimize", result.reason, n, _lines(encoded), encoded, result.notes
        )
    return Step(rel, counterpart, "move", result.reason, n, n, None, result.notes)


def _imported_names(fork: str, steps: Sequence[Step]) -> dict[str, set[str]]:
    """Per module of the copy (a relative path): the names the kept code imports from it.

    The kept code: files the plan moves, adds or keeps whole, and the
    minimized overrides.  ``from .core import add`` in ``language/math.py``
    and ``from R.language.core import add`` anywhere both count for
    ``language/core.py``.
    """
    root = os.path.basename(fork)
    found: dict[str, set[str]] = {}
    for step in steps:
        rel = step.path
        if not rel.endswith(".py") or step.action in ("drop", "link"):
            continue
        if step.text is not None:
            source = step.text.decode("utf-8", "surrogateescape")
        else:
            path = os.path.join(fork, *rel.split("/"))
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            source = decode(path, read(path))
        for target, names in _imports_of(rel, source, root):
            found.setdefault(target, set()).update(names)
    return found


def _imports_of(rel: str, source: str, root: str) -> Iterator[tuple[str, list[str]]]:
    """``(module path, names)`` for each ``from ... import`` of *source* inside the package.

    Each import gives both candidate paths, ``x.py`` and ``x/__init__.py``.
    """
    tree = _parse(source)
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


def _whole_for_missing_modules(
    steps: list[Step], inputs: dict[str, _Given], trunk: str, fork: str
) -> None:
    """Keep whole what would run a trunk import of a module of the package that does not exist.

    A minimized or dropped module runs trunk's version.  Where that version
    imports, at module level, a module of the package that neither trunk nor
    the copy has (trunk's ``tools/disasm.py`` importing ``triton.common``),
    running it fails; the copy's version, which does not, is kept whole.
    """
    root = os.path.basename(trunk)
    for k, step in enumerate(steps):
        if step.action not in ("minimize", "drop") or step.path not in inputs:
            continue
        tree = _parse(inputs[step.path][1])
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
            if not parts or any(_module_exists(top, parts) for top in (trunk, fork)):
                continue
            n, counterpart = inputs[step.path][5], inputs[step.path][6]
            reason = (
                f"kept whole: trunk's version imports {'.'.join([root, *parts])} (line "
                f"{node.lineno}), which neither trunk nor the copy has"
            )
            steps[k] = Step(step.path, counterpart, "move", reason, n, n, None, step.notes)
            break


def _whole_for_foreign_writes(steps: list[Step], inputs: dict[str, _Given], trunk: str) -> bool:
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
        tree = _parse(other)
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
        copy_tree = _parse(text)
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


def _whole_for_lost_names(
    steps: list[Step],
    inputs: dict[str, tuple[str, str, Optional[str], str, bytes, int, str]],
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
        for target, names in _imports_of(step.path, inputs[step.path][1], root):
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


def _conflicts(plan: Plan) -> None:
    for step in plan.steps:
        target = plan.destination(step)
        if target is None or not os.path.lexists(target):
            continue
        wanted = step.text if step.text is not None else read(os.path.join(plan.fork, step.path))
        if os.path.islink(target) or not os.path.isfile(target) or read(target) != wanted:
            raise InputError(
                f"{target} already exists and differs from what {step.path} would become; "
                "move it away or merge it by hand, then run again"
            )


def _spec_path_needs(plan: Plan) -> list[str]:
    """Trunk ``__init__.py`` files that must call spec_path for the overrides to load.

    The overrides are the Python files the plan puts into the mirror and those
    already there (an earlier, interrupted run moved them).
    """
    rels = {s.path for s in plan.steps if s.action in ("move", "add", "minimize")}
    if os.path.isdir(plan.into):
        rels.update(rel for rel, _ in _walk(plan.into))
    needed: list[str] = []
    for rel in sorted(r for r in rels if r.endswith("/__init__.py")):
        # A package-init override: its package's __path__ holds the mirror folder
        # only, until spec_path runs in it.  An inheriting one runs trunk's
        # __init__, which then needs the call; one kept whole needs it itself.
        package = rel.split("/")[:-1]
        own = os.path.join(plan.trunk, *package, "__init__.py")
        if not os.path.isfile(own):
            continue  # a package the backend added: nothing of trunk's to reach
        mirror = os.path.join(plan.into, *rel.split("/"))
        step = next((s for s in plan.steps if s.path == rel), None)
        current = (
            Source(mirror)
            if step is None or os.path.lexists(mirror)
            else Source(os.path.join(plan.fork, *rel.split("/")))
        )
        if current.error is not None:
            continue
        facts = current.facts()
        if facts.inherits or (step is not None and step.action == "minimize"):
            target = own
        elif facts.spec_path is None:
            needed.append(mirror)
            continue
        else:
            continue
        source = Source(target)
        if target not in needed and source.error is None and source.facts().spec_path is None:
            needed.append(target)
    for rel in sorted(r for r in rels if r.endswith(".py")):
        parts = rel.split("/")[:-1]
        if rel.endswith("/__init__.py"):
            parts = parts[:-1]
        while parts and not os.path.isfile(os.path.join(plan.trunk, *parts, "__init__.py")):
            parts = parts[:-1]  # an added package, or a namespace portion: its parent finds it
        init = os.path.join(plan.trunk, *parts, "__init__.py")
        if init in needed:
            continue
        source = Source(init)
        if source.error is None and source.facts().spec_path is None:
            needed.append(init)
    return needed


# --------------------------------------------------------------------------- applying
