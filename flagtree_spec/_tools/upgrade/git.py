"""The few ``git`` operations that ``lock`` and ``rebase`` need, through the ``git`` command.

``lock`` records blob ids of the files overrides were made against;
``rebase`` reads them back and merges three ways with ``git merge-file``.
Nothing here changes a work tree, the index or a ref; ``hash-object -w``
only adds blobs to the object database, so a locked file can be read back
even when it was never committed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from typing import NamedTuple, Optional

__all__ = [
    "GitError",
    "Merged",
    "blob_ids",
    "merge",
    "read_blob",
    "read_from_tree",
    "toplevel",
    "tree_id",
]


class GitError(Exception):
    """``git`` is missing or failed; the message says which command and why."""


def _git() -> str:
    found = shutil.which("git")
    if found is None:
        raise GitError("git is not installed or not on PATH; install git")
    return found


def _run(
    args: Sequence[str],
    cwd: str,
    stdin: Optional[bytes] = None,
    env: Optional[dict[str, str]] = None,
) -> bytes:
    command = [_git(), *args]
    try:
        proc = subprocess.run(
            command, cwd=cwd, input=stdin, capture_output=True, check=False, env=env
        )
    except OSError as exc:
        raise GitError(f"cannot run {' '.join(command)}: {exc}") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"'git {' '.join(args)}' failed in {cwd}: {message}")
    return proc.stdout


def toplevel(folder: str) -> Optional[str]:
    """The top of the git work tree holding *folder*; ``None`` outside one or without git."""
    if shutil.which("git") is None:
        return None
    try:
        out = _run(["rev-parse", "--show-toplevel"], folder)
    except GitError:
        return None
    return os.path.normpath(out.decode("utf-8", "surrogateescape").strip())


def blob_ids(paths: Sequence[str]) -> dict[str, str]:
    """The git blob id of each of *paths* that lies in a git work tree.

    The blobs are written to their repository's object database (``git
    hash-object -w``), so :func:`read_blob` finds them later even for a file
    that was never committed.  Files outside a work tree, or all of them when
    git is missing, are left out.
    """
    by_repo: dict[str, list[str]] = {}
    tops: dict[str, Optional[str]] = {}
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in tops:
            tops[folder] = toplevel(folder)
        top = tops[folder]
        if top is not None:
            by_repo.setdefault(top, []).append(os.path.abspath(path))
    found: dict[str, str] = {}
    for top, files in sorted(by_repo.items()):
        stdin = "".join(f"{f}\n" for f in files).encode("utf-8", "surrogateescape")
        out = _run(["hash-object", "-w", "--stdin-paths"], top, stdin)
        ids = out.decode("ascii").split()
        found.update(zip(files, ids))
    return {path: found[os.path.abspath(path)] for path in paths if os.path.abspath(path) in found}


def read_blob(folder: str, blob: str) -> bytes:
    """The content of *blob* from the repository holding *folder*."""
    top = toplevel(folder)
    if top is None:
        _git()
        raise GitError(f"{folder} is not in a git work tree, so blob {blob} cannot be read")
    try:
        return _run(["cat-file", "blob", blob], top)
    except GitError:
        raise GitError(
            f"blob {blob} is not in the repository at {top} (was the lock made in another clone?)"
        ) from None


def tree_id(folder: str, files: Sequence[str]) -> Optional[str]:
    """The id of a git tree of *folder* holding *files* (paths below it) as they are
    now, its objects written to the repository's database so :func:`read_from_tree`
    reads them later; ``None`` outside a work tree.  The tracked files of *folder*
    are in it as the index has them, *files* as the work tree has them: bytecode or
    build outputs beside them do not change the id.

    A copy of the index is used (its cached file states spare hashing the files
    that did not change): the work tree, the index and the refs stay as they are.
    """
    top = toplevel(folder)
    if top is None:
        return None
    rel = os.path.relpath(os.path.abspath(folder), top).replace(os.sep, "/")
    index = _run(["rev-parse", "--git-path", "index"], top).decode("utf-8", "surrogateescape")
    index = os.path.join(top, index.strip())
    paths = "".join(
        os.path.relpath(os.path.abspath(f), top).replace(os.sep, "/") + "\n" for f in files
    )
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-index-") as scratch:
        copy = os.path.join(scratch, "index")
        if os.path.isfile(index):
            shutil.copyfile(index, copy)
        env = {**os.environ, "GIT_INDEX_FILE": copy}
        stdin = paths.encode("utf-8", "surrogateescape")
        _run(["update-index", "--add", "--stdin"], top, stdin, env)
        out = _run(["write-tree", f"--prefix={rel}/"], top, env=env)
    return out.decode("ascii").strip()


def read_from_tree(folder: str, tree: str, rel: str) -> bytes:
    """The content of file *rel* (``/``-separated) of git tree *tree*, from the
    repository holding *folder*."""
    top = toplevel(folder)
    if top is None:
        _git()
        raise GitError(f"{folder} is not in a git work tree, so tree {tree} cannot be read")
    try:
        return _run(["cat-file", "blob", f"{tree}:{rel}"], top)
    except GitError:
        raise GitError(
            f"{rel} of tree {tree} is not in the repository at {top} (was the lock made in "
            "another clone?)"
        ) from None


class Merged(NamedTuple):
    """The result of a three-way merge."""

    text: str
    conflicts: int  # the number of conflicting hunks, marked in text


def merge(ours: str, base: str, theirs: str, labels: tuple[str, str, str]) -> Merged:
    """Merge the change from *base* to *theirs* into *ours* (``git merge-file -p --diff3``).

    *labels* name ours, base and theirs in conflict markers.
    """
    git = _git()
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-merge-") as folder:
        files = []
        for part, text in zip(("ours", "base", "theirs"), (ours, base, theirs)):
            path = os.path.join(folder, part)
            with open(path, "w", encoding="utf-8", newline="", errors="surrogatepass") as f:
                f.write(text)
            files.append(path)
        command = [git, "merge-file", "-p", "--diff3"]
        for label in labels:
            command += ["-L", label]
        proc = subprocess.run([*command, *files], capture_output=True, check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git merge-file failed: {message}")
    return Merged(proc.stdout.decode("utf-8", "surrogatepass"), proc.returncode)
