"""The trunk and mirror folders as files: listings, parsed sources, the module tree.

:class:`Files` is the part of the static model that reads the file system:
each folder listed once as the path finder sees it (:mod:`.finder`), each
source file read and parsed once (:mod:`.source`), the module files and
package folders below the trunk and every mirror tree, and the input
problems found on the way.  :class:`~.model.Model` builds on it the answer
for every module name.
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Iterator, Sequence
from typing import Optional

from ..._discovery import SpecRoot
from .finder import Entry, Folder, child_path
from .source import Problem, Source

__all__ = ["Files", "under"]


# The sort key of dotted names, parents first: their parts.
_dotted = operator.methodcaller("split", ".")


def under(path: str, folder: str) -> bool:
    """Whether *path* is *folder* or lies below it (both normalised)."""
    return path == folder or path.startswith(folder + os.sep)


class Files:
    """The files of a trunk (the folder *rdir* of root package *root*) and of the
    mirror trees of *spec_roots*, each read at most once."""

    def __init__(self, root: str, rdir: str, spec_roots: Sequence[SpecRoot]) -> None:
        self.root = root
        self.rdir = os.path.normpath(os.path.abspath(rdir))
        self.spec_roots = tuple(spec_roots)
        self.mirrors: list[tuple[SpecRoot, str]] = [
            (r, os.path.normpath(os.path.abspath(r.mirror))) for r in self.spec_roots if r.mirror
        ]
        self.problems: list[Problem] = []
        self._folders: dict[str, Folder] = {}
        self._sources: dict[str, Source] = {}
        self._trees: dict[str, list[Entry]] = {}
        self._names: Optional[list[str]] = None

    def folder(self, path: str) -> Folder:
        found = self._folders.get(path)
        if found is None:
            found = self._folders[path] = Folder(path, self.folder)
        return found

    def source(self, path: str) -> Source:
        """The parsed source of *path*, read once."""
        found = self._sources.get(path)
        if found is None:
            found = self._sources[path] = Source(path)
        return found

    def tree_of(self, path: str) -> Optional[ast.Module]:
        """The syntax tree of source file *path* (parsed again once its facts were
        kept and the tree dropped); ``None`` when it cannot be read or parsed."""
        source = self.source(path)
        if source.tree is None and source.error is None:  # released: parse again
            return ast.parse(source.text, filename=path)
        return source.tree

    def origin_of(self, path: str) -> Optional[SpecRoot]:
        """The spec root whose mirror holds *path*; ``None`` for a trunk file."""
        for spec_root, mirror in self.mirrors:
            if under(path, mirror):
                return spec_root
        return None

    def mirror_of(self, spec_root: SpecRoot) -> str:
        """The normalised mirror folder of *spec_root* (one that has a mirror)."""
        return next(mirror for r, mirror in self.mirrors if r is spec_root)

    def problem(self, problem: Problem) -> None:
        """Record an input error once (exit code 2 for the commands)."""
        if problem not in self.problems:
            self.problems.append(problem)

    def _inside_spec_root(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(under(real, r.real) for r in self.spec_roots)

    def tree(self, top: str) -> list[Entry]:
        """Every module file and package folder below *top* (a trunk or mirror folder).

        Folders whose names are not identifiers and ``__pycache__`` are skipped;
        so are spec roots lying inside the trunk (installed layouts).  A symlink
        that leads back to a folder being walked is recorded as a problem.
        """
        found = self._trees.get(top)
        if found is not None:
            return found
        found = []
        # Walking the trunk: leave out the spec roots that lie inside it (installed
        # layouts); walking a mirror tree that lies there: keep all of it.
        skip = under(top, self.rdir) and not self._inside_spec_root(top)
        pending: list[tuple[str, str, tuple[str, ...]]] = [
            (top, self.root, (os.path.realpath(top),))
        ]
        while pending:
            folder, base, seen = pending.pop()
            listing = self.folder(folder)
            if listing.error:
                # The path finder finds nothing in it: every module there is lost.
                self.problem(
                    Problem(
                        folder,
                        1,
                        1,
                        f"cannot be listed ({listing.error}), so Python finds no module in it "
                        f"({base} and below); fix its permissions",
                    )
                )
            for entry in sorted(listing.names):
                path = child_path(folder, entry)
                if listing.is_dir(entry):
                    if not entry.isidentifier() or entry == "__pycache__":
                        continue
                    # Only a symlink can lead back: a folder's real path is otherwise
                    # its parent's real path and its name.
                    real = (
                        os.path.realpath(path)
                        if listing.is_link(entry)
                        else child_path(seen[-1], entry)
                    )
                    if skip and any(under(real, r.real) for r in self.spec_roots):
                        continue  # a spec root inside the trunk (_inside_spec_root)
                    if real in seen:
                        self.problem(
                            Problem(
                                path,
                                1,
                                1,
                                f"symlink loop: {path} leads back to {real}; remove the link",
                            )
                        )
                        continue
                    found.append(Entry(f"{base}.{entry}", path, "folder"))
                    pending.append((path, f"{base}.{entry}", (*seen, real)))
                    continue
                item = listing.entry(entry, base)
                if isinstance(item, Problem):
                    self.problem(item)
                elif item is not None:
                    found.append(item)
        self._trees[top] = found
        return found

    def names(self) -> list[str]:
        """Every module name that the trunk or a mirror tree has a file or folder for."""
        if self._names is not None:
            return list(self._names)
        found = {self.root}
        for top in (self.rdir, *(m for _, m in self.mirrors)):
            found.update(
                e.name
                for e in self.tree(top)
                if e.kind != "compiled" and (e.kind != "init" or e.name != self.root)
            )
        self._names = sorted(found, key=_dotted)
        return list(self._names)

    def mirror_files(self) -> Iterator[tuple[SpecRoot, Entry]]:
        """``(spec root, entry)`` of every module file in every mirror tree."""
        for spec_root, mirror in self.mirrors:
            for entry in self.tree(mirror):
                if entry.kind != "folder":
                    yield spec_root, entry

    def trunk_only(self, name: str) -> Optional[str]:
        """The file module *name* (below the root) would load if no backend were active."""
        parts = name.split(".")
        folder = os.path.join(self.rdir, *parts[1:-1])
        hit = self.folder(folder).find(parts[-1]) if os.path.isdir(folder) else None
        if hit is None or hit.kind == "namespace":
            return None
        return hit.file
