"""The trunk the copy was made from (``--base DIR`` or ``--base-rev REV``), and whether it can be.

``--minimize`` classifies every definition three ways against the base; a
base that is not an older trunk of the same package would turn another
package's names, or names trunk never had, into "trunk's changes".
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
from typing import Optional

from ..model.model import InputError
from .files import decode, parse, read, same_tree, walk
from .statements import signatures

__all__ = ["BaseTree", "git", "not_newer", "not_older"]


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
                    f"--base-rev {rev} is not an ancestor of HEAD, so it is not an older trunk "
                    "(names trunk never had would read as trunk's deletions); give the revision "
                    "the copy was made from"
                ) from None
            mine = _version(self.text("__init__.py"))
            theirs = _version(_read_text(os.path.join(trunk, "__init__.py")))
            if mine is not None and theirs is not None and mine > theirs:
                raise InputError(
                    f"--base-rev {rev}: its __version__ {'.'.join(map(str, mine))} is later than "
                    f"trunk's {'.'.join(map(str, theirs))}, so it is newer than trunk; give the "
                    "revision the copy was made from"
                )

    def same_as(self, path: str, rel: str) -> bool:
        """Whether the file *path* has the syntax tree of the base's *rel* (positions aside)."""
        theirs = self.text(rel)
        if theirs is None or not os.path.isfile(path):
            return False
        mine, tree = parse(decode(path, read(path))), parse(theirs)
        return mine is not None and tree is not None and same_tree(mine, tree)

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
            "so the copy was not made from it (the base is newer than the copy, older than "
            "the trunk the copy was made from, or another trunk)"
        )
    return ""


def _tree_id(folder: str) -> str:
    """The git tree id *folder* would have if committed (nothing is written anywhere)."""
    entries: list[tuple[str, bytes]] = []
    with os.scandir(folder) as it:
        found = list(it)
    for entry in found:
        if entry.name in (".git", "__pycache__"):
            continue
        if entry.is_symlink():
            mode, sha = "120000", _object("blob", os.fsencode(os.readlink(entry.path)))
        elif entry.is_dir():
            mode, sha = "40000", _tree_id(entry.path)
        else:
            mode = "100755" if os.access(entry.path, os.X_OK) else "100644"
            sha = _object("blob", read(entry.path))
        # git sorts a folder's name as if it ended with "/".
        key = entry.name + ("/" if mode == "40000" else "")
        entries.append((key, f"{mode} {entry.name}".encode() + b"\0" + bytes.fromhex(sha)))
    data = b"".join(e for _, e in sorted(entries, key=lambda e: e[0].encode()))
    return _object("tree", data)


def _object(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def _commits_of_tree(trunk: str, tree: str) -> tuple[str, list[str]]:
    """The work tree holding *trunk* and the commits whose trunk folder is *tree*.

    ``("", [])`` when *trunk* is not in a git work tree.
    """
    try:
        top = git(trunk, "rev-parse", "--show-toplevel", what="git")
    except InputError:
        return "", []
    prefix = os.path.relpath(os.path.realpath(trunk), os.path.realpath(top)).replace(os.sep, "/")
    proc = subprocess.run(
        ["git", "rev-list", "--all", "--", prefix], cwd=top, capture_output=True, text=True
    )
    commits = proc.stdout.split()
    if proc.returncode != 0 or not commits:
        return top, []
    listed = subprocess.run(
        ["git", "cat-file", "--batch-check=%(objectname)"],
        cwd=top,
        input="".join(f"{c}:{prefix}\n" for c in commits),
        capture_output=True,
        text=True,
    )
    ids = listed.stdout.split("\n")
    return top, [c for c, found in zip(commits, ids) if found.strip() == tree]


_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _version(text: Optional[str]) -> Optional[tuple[int, int, int]]:
    """The release in a root ``__init__``'s literal ``__version__ = "3.2.0"``, if any."""
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == ["__version__"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            match = _VERSION.match(node.value.value)
            if match:
                return (int(match[1]), int(match[2]), int(match[3] or 0))
    return None


def not_newer(base: str, trunk: str) -> str:
    """Why the base folder *base* cannot be older than *trunk*, or ``""``.

    A base whose ``__version__`` is a later release than trunk's is newer.
    Where trunk lies in a git work tree and some commit holds exactly the
    base's files, that commit must be an ancestor of ``HEAD``, as
    ``--base-rev`` requires: a base from another branch holds names trunk
    never had, which the three-way classification would take for trunk's
    deletions.
    """
    mine = _version(_read_text(os.path.join(base, "__init__.py")))
    theirs = _version(_read_text(os.path.join(trunk, "__init__.py")))
    if mine is not None and theirs is not None and mine > theirs:
        shown = ".".join(map(str, mine)), ".".join(map(str, theirs))
        return (
            f"its __version__ {shown[0]} is later than trunk's {shown[1]}, so it is newer than "
            "trunk and names trunk never had would read as trunk's deletions"
        )
    top, commits = _commits_of_tree(trunk, _tree_id(base))
    if not commits:
        return ""
    for commit in commits:
        proc = subprocess.run(
            ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=top, capture_output=True
        )
        if proc.returncode == 0:
            return ""
    return (
        f"it is commit {commits[0][:10]}'s trunk, which is not an ancestor of HEAD (another "
        "branch, or newer), so names trunk never had would read as trunk's deletions"
    )


def _read_text(path: str) -> Optional[str]:
    return decode(path, read(path)) if os.path.isfile(path) else None
