"""The trunk the copy was made from (``--base DIR`` or ``--base-rev REV``), and whether it can be.

``--minimize`` classifies every definition three ways against the base; a
base that is not an older trunk of the same package would turn another
package's names, or names trunk never had, into "trunk's changes".
"""

from __future__ import annotations

import os
import subprocess
from typing import Optional

from ..model.model import InputError
from .files import decode, parse, read, same_tree, walk
from .statements import signatures

__all__ = ["BaseTree", "git", "not_older"]


class BaseTree:
    """The trunk the copy was made from: a folder, or a git revision of the trunk."""

    def __init__(self, trunk: str, folder: Optional[str], rev: Optional[str]) -> None:
        self.folder = folder
        self.rev = rev
        self.top = ""
        self.prefix = ""
        if rev is not None:
            self.top = git(trunk, "rev-parse", "--show-toplevel", what=f"--base-rev {rev}")
            self.prefix = os.path.relpath(os.path.realpath(trunk), os.path.realpath(self.top))
            self.prefix = self.prefix.replace(os.sep, "/")
            if self.text("__init__.py") is None:
                raise InputError(
                    f"--base-rev {rev}: {self.prefix}/__init__.py does not exist there, so it "
                    "is not a trunk of this package; give the revision the copy was made from"
                )
            try:
                git(self.top, "merge-base", "--is-ancestor", rev, "HEAD", what="")
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


def git(where: str, *args: str, what: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True)
    except OSError as exc:
        raise InputError(f"{what}: git cannot run ({exc}); install git") from None
    if proc.returncode != 0:
        raise InputError(f"{what}: {proc.stderr.strip() or 'git ' + args[0] + ' failed'}")
    return proc.stdout.strip()


# --------------------------------------------------------------------------- planning


def not_older(base: str, trunk: str, fork: str) -> str:
    """Why *base* cannot be the trunk *fork* was copied from, or ``""``.

    An older trunk of the same package shares most of its definitions with
    trunk or the copy (each name bound to the same syntax tree in the same
    file), and the copy is at least as close to it as to trunk (files equal
    by syntax tree): a newer trunk, or another package of the same name,
    fails one of the two.
    """
    found = total = near_base = near_trunk = 0
    for rel, entry in walk(base):
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
                parse(texts["copy"]),
                parse(mine),
                parse(texts["trunk"]),
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
