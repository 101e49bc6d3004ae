"""The path finder's view of one folder: what ``FileFinder`` would find there.

Within one folder a package folder (with an ``__init__``) beats an extension
module beats ``.py`` beats ``.pyc``; a folder without ``__init__`` is only a
namespace portion.  A :class:`Folder` lists its directory once, as the path
finder caches it, and answers without loading anything.
"""

from __future__ import annotations

import importlib.machinery
import os
from typing import Callable, NamedTuple, Optional, Union

from .source import Problem

__all__ = [
    "COMPILED_SUFFIXES",
    "EXTENSION_SUFFIXES",
    "SUFFIXES",
    "Entry",
    "Folder",
    "Found",
    "child_path",
]

EXTENSION_SUFFIXES: tuple[str, ...] = tuple(importlib.machinery.EXTENSION_SUFFIXES)
# The path finder's loader order inside one folder: extension, source, bytecode.
SUFFIXES: tuple[str, ...] = (*EXTENSION_SUFFIXES, ".py", ".pyc")
# Any compiled file, whatever interpreter it was built for.
COMPILED_SUFFIXES: tuple[str, ...] = (".so", ".pyd", ".pyc")


def _posix_child(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder and folder[-1] != "/" else folder + name


# os.path.join(folder, name) for a *name* from a directory listing (no separator
# in it): on POSIX, without join's generality, which the model pays per file.
child_path: Callable[[str, str], str] = (
    _posix_child if os.sep == "/" and os.altsep is None else os.path.join
)


class Found(NamedTuple):
    """What the path finder finds for one name in one folder."""

    kind: str  # "package", "module" or "namespace"
    file: Optional[str]  # None for a namespace portion
    folder: str  # the package folder, or the folder holding the module file


class Entry(NamedTuple):
    """A module file (``file``), package ``__init__`` (``init``), folder, or a
    compiled file that this interpreter does not load (``compiled``) in a tree."""

    name: str
    path: str
    kind: str


class Folder:
    """One directory listing, read once (the path finder caches them too).

    The kinds of its entries come from the same ``os.scandir`` (a symlink is
    followed the first time it is asked about), so asking costs no system
    call; in a folder that can be listed but not entered, where ``stat``
    fails, they are asked of ``os.path`` as before.  *opener* gives the
    listing of a subfolder (the model's cache).
    """

    __slots__ = ("_entered", "_entries", "_open", "error", "names", "path")

    def __init__(self, path: str, opener: Optional[Callable[[str], Folder]] = None) -> None:
        self.path = path
        self._open: Callable[[str], Folder] = opener or Folder
        # Why a folder that exists cannot be listed (the path finder then finds
        # nothing in it); empty when it can be, or does not exist.
        self.error = ""
        try:
            with os.scandir(path) as listing:
                self._entries = {e.name: e for e in listing}
        except (FileNotFoundError, NotADirectoryError):
            self._entries = {}
        except OSError as exc:
            self._entries = {}
            self.error = exc.strerror or str(exc)
        self.names = frozenset(self._entries)
        self._entered = bool(self._entries) and _enterable(path)

    def _ask(
        self,
        name: str,
        listed: Callable[[os.DirEntry[str]], bool],
        by_path: Callable[[str], bool],
    ) -> bool:
        entry = self._entries.get(name)
        if entry is None:
            return False
        if not self._entered:
            return by_path(entry.path)
        try:
            return listed(entry)
        except OSError:
            return False

    def is_dir(self, name: str) -> bool:
        """``os.path.isdir`` of entry *name*."""
        return self._ask(name, os.DirEntry.is_dir, os.path.isdir)

    def is_file(self, name: str) -> bool:
        """``os.path.isfile`` of entry *name*."""
        return self._ask(name, os.DirEntry.is_file, os.path.isfile)

    def is_link(self, name: str) -> bool:
        """``os.path.islink`` of entry *name*."""
        return self._ask(name, os.DirEntry.is_symlink, os.path.islink)

    def find(self, name: str) -> Optional[Found]:
        """What ``FileFinder(self.path).find_spec(name)`` would find, without loading."""
        namespace = False
        if name in self.names and self.is_dir(name):
            base = child_path(self.path, name)
            init = self._open(base).init()
            if init is not None:
                return Found("package", init, base)
            namespace = True
        names = self.names
        for suffix in SUFFIXES:
            if name + suffix in names and self.is_file(name + suffix):
                return Found("module", child_path(self.path, name + suffix), self.path)
        if namespace:
            return Found("namespace", None, child_path(self.path, name))
        return None

    def init(self) -> Optional[str]:
        """The ``__init__`` file the path finder would run for this folder as a package."""
        for suffix in SUFFIXES:
            if self.is_file("__init__" + suffix):
                return child_path(self.path, "__init__" + suffix)
        # None in the listing: the path finder tries each file by name (found so
        # in a folder that cannot be listed, or on a case-insensitive disk).
        for suffix in SUFFIXES:
            path = child_path(self.path, "__init__" + suffix)
            if os.path.isfile(path):
                return path
        return None

    def children(self) -> set[str]:
        """The names of every module or package this folder could provide."""
        found = set()
        for entry in self.names:
            if entry == "__pycache__":
                continue
            stem = entry
            for suffix in SUFFIXES:
                if entry.endswith(suffix):
                    stem = entry[: -len(suffix)]
                    break
            if stem.isidentifier() and stem != "__init__" and (stem != entry or self.is_dir(entry)):
                found.add(stem)
        return found

    def entry(self, entry: str, base: str) -> Union[Entry, Problem, None]:
        """What the file *entry* of this folder is, the folder being package *base*.

        A module file or ``__init__``, a compiled file built for another
        interpreter, a broken symlink (a :class:`Problem`: the path finder skips
        it silently), or nothing the path finder would look at.
        """
        path = child_path(self.path, entry)
        if self.is_link(entry) and _is_link_loop(path):
            return Problem(path, 1, 1, f"symlink loop: {path} cannot be resolved; remove the link")
        # The first of the path finder's suffixes (then other builds') that it ends with.
        suffix = ".py" if entry.endswith(".py") else _suffix_of(entry)
        if suffix is None:
            return None
        stem = entry[: -len(suffix)]
        if stem.isidentifier() and self.is_file(entry):
            name = base if stem == "__init__" else f"{base}.{stem}"
            return Entry(name, path, "init" if stem == "__init__" else "file")
        if (
            suffix in COMPILED_SUFFIXES
            and stem.partition(".")[0].isidentifier()
            and self.is_file(entry)
        ):
            # Built for another interpreter or platform: this Python
            # skips it, another one loads it (FTS011 either way).
            stem = stem.partition(".")[0]
            name = base if stem == "__init__" else f"{base}.{stem}"
            return Entry(name, path, "compiled")
        if stem.isidentifier() and self.is_link(entry):
            # The module it names would load from somewhere else, or not at all.
            return Problem(
                path,
                1,
                1,
                f"dangling symlink: {path} points to {os.readlink(path)}, which does not "
                "exist, so Python skips it; fix or remove the link",
            )
        return None


def _suffix_of(entry: str) -> Optional[str]:
    for suffix in (*SUFFIXES, *COMPILED_SUFFIXES):
        if entry.endswith(suffix):
            return suffix
    return None


def _enterable(path: str) -> bool:
    """Whether ``stat`` works on the entries of folder *path* (search permission)."""
    if os.access in os.supports_effective_ids:
        return os.access(path, os.X_OK, effective_ids=True)
    return os.access(path, os.X_OK)


def _is_link_loop(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == 40  # ELOOP
    return False
