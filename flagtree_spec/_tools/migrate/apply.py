"""Carry out a migration plan: move, drop and keep files, insert ``spec_path``.

:func:`apply` takes a :class:`~.plan.Plan` made by :func:`.plan.make_plan`:
``git mv`` inside a git work tree, so history follows; a file that differs
from its counterpart is never deleted; afterwards nothing under the fork can
load.  Every step leaves each file readable at one of its locations, so an
interrupted run is completed by running again.
"""

from __future__ import annotations

import ast
import io
import os
import shutil
import subprocess
import tempfile
import tokenize
from typing import Callable, Optional

from ..model.model import InputError
from ..model.source import Source
from .base import git
from .plan import Plan

__all__ = ["IDIOM", "Snapshot", "apply", "insert_spec_path"]

IDIOM = (
    "try:\n"
    "    from flagtree_spec import spec_path\n"
    "except ImportError:\n"
    "    pass\n"
    "else:\n"
    "    spec_path(__path__)\n"
)
# Tests replace this to interrupt apply() after a given step (an exception).
after_step: Optional[Callable[[int], None]] = None


def insert_spec_path(path: str) -> bool:
    """Insert the guarded spec_path idiom into package ``__init__`` *path*.

    It goes right after the docstring and any ``from __future__`` import, before
    every other statement, so submodules the package imports load from the
    mirror.  Returns False when the file already calls spec_path.
    """
    source = Source(path)
    if source.error is not None:
        raise InputError(f"cannot add spec_path to {path}: {source.error.message}")
    if source.facts().spec_path is not None:
        return False
    assert source.tree is not None
    lines = source.text.splitlines(keepends=True)
    at = 0
    for i, node in enumerate(source.tree.body):
        doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            at = node.end_lineno or node.lineno
        else:
            break
    if at == 0:
        while at < len(lines) and lines[at].lstrip().startswith("#"):
            at += 1
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    block = IDIOM.replace("\n", newline)
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += newline
    before = newline if at and lines[at - 1].strip() else ""
    after = newline if at < len(lines) and lines[at].strip() else ""
    lines.insert(at, before + block + after)
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source.data).readline)
    _write(path, "".join(lines).encode(encoding))
    return True


def _write(path: str, data: bytes) -> None:
    """Replace *path* by *data* atomically (a reader sees the old or the new file)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".migrate-tmp"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, path)


def _key(path: str) -> str:
    """*path* with its folder's symlinks resolved (not the file's own: it may be a link)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


class _Git:
    """git commands for the files of one work tree (nothing when there is none)."""

    def __init__(self, folder: str) -> None:
        where = folder
        while not os.path.isdir(where):
            where = os.path.dirname(where)
        try:
            self.top: Optional[str] = git(where, "rev-parse", "--show-toplevel", what="git")
        except InputError:
            self.top = None
        self.tracked: set[str] = set()
        if self.top is not None:
            listed = git(
                self.top,
                "ls-files",
                "-z",
                "--",
                os.path.relpath(folder, self.top),
                what="git ls-files",
            )
            self.tracked = {_key(os.path.join(self.top, p)) for p in listed.split("\0") if p}

    def clean(self, folder: str) -> str:
        """Why *folder* is not committed and clean in git, or ``""``."""
        if self.top is None:
            return f"{folder} is not in a git work tree"
        rel = os.path.relpath(folder, self.top)
        changed = git(
            self.top, "diff", "--name-only", "--diff-filter=d", "HEAD", "--", rel, what="git diff"
        )
        untracked = git(
            self.top, "ls-files", "--others", "--exclude-standard", "--", rel, what="git ls-files"
        )
        files = (changed + "\n" + untracked).split()
        return f"uncommitted changes in {', '.join(files[:3])}" if files else ""

    def sparse(self) -> bool:
        """Whether the work tree is a sparse checkout (some paths are outside it)."""
        if self.top is None:
            return False
        proc = subprocess.run(
            ["git", "config", "--bool", "core.sparseCheckout"],
            cwd=self.top,
            capture_output=True,
            text=True,
        )
        return proc.stdout.strip() == "true"

    def can_move(self, source: str, target: str) -> str:
        """Why ``git mv`` of *source* to *target* would fail (a dry run), or ``""``."""
        if self.top is None or _key(source) not in self.tracked:
            return ""
        proc = subprocess.run(
            ["git", "mv", "-n", "-f", source, target], cwd=self.top, capture_output=True, text=True
        )
        if proc.returncode == 0:
            return ""
        return (proc.stderr.strip().splitlines() or ["git mv failed"])[0]

    def move(self, source: str, target: str) -> None:
        if _key(source) in self.tracked and self.top is not None:
            git(self.top, "mv", "-f", source, target, what="git mv")
        else:
            os.replace(source, target)

    def add(self, path: str) -> None:
        if self.top is not None:
            git(self.top, "add", "--", path, what="git add")

    def remove(self, path: str) -> None:
        if _key(path) in self.tracked and self.top is not None:
            git(self.top, "rm", "-q", "-f", "--cached", path, what="git rm")
        os.unlink(path)


def apply(plan: Plan, *, add_spec_path: bool = False, history: bool = True) -> list[str]:
    """Carry out *plan*; return one line per change.  Raises :class:`InputError`.

    Every precondition is checked before the first change; a step that
    fails after it (the disk full, a file changed meanwhile) undoes what was
    done before the error is raised, so an :class:`InputError` always means
    that nothing changed.  *history* False skips the check that a minimized
    copy is committed in git (for a scratch copy of the trees, which
    ``--verify`` migrates).
    """
    git = _Git(plan.fork)
    _preconditions(plan, git, add_spec_path=add_spec_path, history=history)
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-apply-") as where:
        snapshot = Snapshot(plan, where)
        try:
            return _apply(plan, git, add_spec_path)
        except (OSError, InputError) as exc:
            snapshot.restore()
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(
                f"the migration failed half-way ({why}) and was rolled back: the tree is as "
                "it was; fix the cause, then run again"
            ) from None


def _preconditions(plan: Plan, git: _Git, *, add_spec_path: bool, history: bool) -> None:
    """Raise :class:`InputError` for anything that would stop :func:`apply` half-way."""
    if plan.minimize and history:
        why = git.clean(plan.fork)
        if why:
            raise InputError(
                f"--apply with --minimize needs the copy committed and clean in git, so the "
                f"full copy stays in history: {why}; commit it first"
            )
    if add_spec_path:
        # An __init__ the moves put into the mirror is read where it is now.
        moved = {
            plan.destination(s): os.path.join(plan.fork, *s.path.split("/")) for s in plan.steps
        }
        for init in plan.spec_path:
            path = init if os.path.lexists(init) else moved.get(init, init)
            error = Source(path).error
            if error is not None:
                raise InputError(f"cannot add spec_path to {init}: {error.message}")
    if git.sparse():
        # A destination outside the sparse checkout: git mv and git add refuse it.
        tried: set[str] = set()
        for step in plan.steps:
            target = plan.destination(step)
            source = os.path.join(plan.fork, *step.path.split("/"))
            if target is None or os.path.lexists(target) or os.path.dirname(target) in tried:
                continue
            tried.add(os.path.dirname(target))
            why = git.can_move(source, target)
            if why:
                folder = os.path.relpath(os.path.dirname(target), git.top or "")
                raise InputError(
                    f"{target} lies outside the sparse checkout ({why}); add its folder "
                    f"(git sparse-checkout add {folder}), then run again"
                )


def _apply(plan: Plan, git: _Git, add_spec_path: bool) -> list[str]:
    done: list[str] = []
    for k, step in enumerate(plan.steps, 1):
        source = os.path.join(plan.fork, *step.path.split("/"))
        target = plan.destination(step)
        if step.path.endswith("__pycache__"):
            shutil.rmtree(source)
        elif target is None or os.path.lexists(target):
            # Dropped, a link, or an earlier interrupted run already put it there.
            git.remove(source)
        elif step.text is not None:
            _write(target, step.text)
            git.add(target)
            git.remove(source)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            git.move(source, target)
        done.append(f"{step.action:<8} {step.path}" + (f" -> {target}" if target else ""))
        if after_step is not None:
            after_step(k)
    for folder, _, _ in sorted(os.walk(plan.fork), reverse=True):  # nothing when it is gone
        if not os.listdir(folder):
            os.rmdir(folder)
    if add_spec_path:
        for k, init in enumerate(plan.spec_path, len(plan.steps) + 1):
            if insert_spec_path(init):
                done.append(f"spec_path added to {init}")
            if after_step is not None:
                after_step(k)
    return done


def _under_strictly(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _existing(folder: str) -> str:
    """*folder*, or the nearest folder above it that exists."""
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


class Snapshot:
    """What :func:`apply` may change, saved before it runs, so that it can be undone.

    The copy (every file and link), the files already in the mirror tree and
    in ``migrate-leftovers/``, and the ``__init__.py`` files that get the
    ``spec_path`` call.  :meth:`restore` puts every one back, removes what
    the migration created, and resets git's index for those paths to
    ``HEAD``, so a failed verification leaves the tree as it was.
    """

    def __init__(self, plan: Plan, where: str) -> None:
        self.plan = plan
        self.fork = os.path.join(where, "fork")
        if os.path.isdir(plan.fork):
            shutil.copytree(plan.fork, self.fork, symlinks=True)
        self.files: dict[str, bytes] = {}
        self.folders = [plan.into, plan.leftovers]
        # The folders that exist now: those the migration creates above them go again.
        self.existing = {f: _existing(f) for f in self.folders}
        for folder in self.folders:
            for top, _, names in os.walk(folder):
                for name in names:
                    path = os.path.join(top, name)
                    if not os.path.islink(path):
                        with open(path, "rb") as f:
                            self.files[path] = f.read()
        for init in plan.spec_path:
            if os.path.isfile(init):
                with open(init, "rb") as f:
                    self.files[init] = f.read()
        self.git = _Git(plan.fork)

    def restore(self) -> None:
        plan = self.plan
        for folder in self.folders:
            for top, _, names in os.walk(folder, topdown=False):
                for name in names:
                    path = os.path.join(top, name)
                    if path not in self.files:
                        os.unlink(path)
                if not os.listdir(top):
                    os.rmdir(top)
        for folder in self.folders:
            kept = self.existing[folder]
            above = os.path.dirname(folder)
            while _under_strictly(above, kept) and os.path.isdir(above) and not os.listdir(above):
                os.rmdir(above)
                above = os.path.dirname(above)
        for path, data in self.files.items():
            _write(path, data)
        if os.path.isdir(self.fork):
            if os.path.isdir(plan.fork):
                shutil.rmtree(plan.fork)
            shutil.copytree(self.fork, plan.fork, symlinks=True)
        if self.git.top is not None:
            paths = [plan.fork, *self.folders, *plan.spec_path]
            rels = [os.path.relpath(p, self.git.top) for p in paths]
            git(self.git.top, "reset", "-q", "--", *rels, what="git reset")
