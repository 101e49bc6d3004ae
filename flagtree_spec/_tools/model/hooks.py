"""Which hooks a backend's hook module defines, found as the import system would find them.

At run time ``spec("h")`` calls ``getattr(hook_module, "h")`` when that is
callable.  Real hook modules are packages that gather their hooks from
fragment files (``from .runtime.jit import *``, ``from ._utils import
apply as apply_with_path``), so the names a hook module binds are only known
by following its imports.  :class:`HookModule` does that without importing
anything: it executes the top-level statements of the hook module and of
every module of the hook package they import, in order, on a model of their
namespaces:

* ``def``, ``class``, assignments, ``del``, ``import`` and ``from ... import``
  bind names as Python does, the last binding winning; a name bound to a
  literal (a number, a string, ``None``, a list) or to a module is no hook;
* ``from .x import *`` binds ``x``'s ``__all__`` when it has one, else every
  name of ``x``'s namespace not starting with ``_`` (its imports and its own
  star imports included);
* importing a submodule for the first time binds its name on its package,
  after the submodule has run, in every package of the hook package;
* modules are executed once; a module still running is seen as it is.

The answer for a name is *defined* (with the file and line of the binding),
*not defined*, or *unknown*: names bound inside ``if``/``try``/``for``/
``while``/``match`` (conditional), names that may come from a module
``__getattr__``, from ``globals().update(...)`` (or ``bind_symbols``,
``globals()[...] =``), or from a star import of a module outside the hook
package.  An import that would fail at run time makes the whole hook module
*broken* (it raises when loaded), and every answer unknown.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, Optional, Protocol

from .hook_exec import Binding, _Broken, _Executor, _Module

__all__ = ["DEFINED", "NOT_DEFINED", "UNKNOWN", "Binding", "HookModule", "Loaded", "first_hook"]

DEFINED = "defined"
NOT_DEFINED = "not defined"
UNKNOWN = "unknown"

# Kinds of a binding that make spec() find no hook: callable() is false for them.
_NOT_CALLABLE = frozenset({"literal", "module"})


class Loaded(NamedTuple):
    """A module of the hook package that runs when the hook module is imported."""

    key: str  # dotted name below the hook package ("" for the hook module itself)
    path: Optional[str]  # its file (None for a namespace package)
    importer: str  # the file whose import statement loaded it first
    line: int
    col: int


class FolderView(Protocol):
    """The part of the path finder's view of one folder that hook resolution needs."""

    def find(self, name: str) -> Optional[tuple[str, Optional[str], str]]:
        """``(kind, file, folder)``: kind ``package``, ``module`` or ``namespace``."""


class HookModule:
    """The names a hook module binds, found by executing its imports on a model.

    *hooks* is the hook module's file, *package* whether it is a package
    (its folder is then its ``__path__``), *hook_name* the dotted name it is
    imported under (absolute imports of that name are imports of the hook
    package).  *tree_of* returns the syntax tree of a ``.py`` file (``None``
    when it cannot be read or parsed) and *folder* the path finder's view of
    a folder.
    """

    def __init__(
        self,
        hooks: str,
        package: bool,
        hook_name: Optional[str],
        tree_of: Callable[[str], Optional[ast.Module]],
        folder: Callable[[str], FolderView],
    ) -> None:
        self.hooks = hooks
        self.package = package
        self.hook_name = (
            hook_name if hook_name and not hook_name.startswith("flagtree_spec.") else None
        )
        self.tree_of = tree_of
        self.folder = folder
        self.modules: dict[str, _Module] = {}
        self.loaded: list[Loaded] = []
        self.broken: Optional[tuple[str, int, int, str]] = None
        # Set when whether an import succeeds depends on names the model cannot see.
        self.uncertain = ""
        top = _Module("", hooks, [os.path.dirname(hooks)] if package else None)
        self.modules[""] = top
        self.loaded.append(Loaded("", hooks, hooks, 1, 1))
        try:
            self._run(top)
        except _Broken as exc:
            self.broken = (*exc.where, exc.message)
        self.top = top

    # -- answers

    def answer(self, name: str) -> tuple[str, Optional[Binding]]:
        """``(state, binding)`` for hook *name*: defined, not defined or unknown."""
        if self.broken is not None or self.uncertain:
            return UNKNOWN, None
        top = self.top
        binding = top.ns.get(name)
        if binding is not None:
            if binding.kind in _NOT_CALLABLE:
                return NOT_DEFINED, binding
            if binding.kind == "unknown":
                return UNKNOWN, binding
            return DEFINED, binding
        if top.getattr_hook or top.dynamic:
            return UNKNOWN, None
        return NOT_DEFINED, None

    def all_entries(self) -> Optional[list[tuple[str, int, int]]]:
        """The hook module's literal ``__all__`` with positions; ``None`` without one."""
        return self.top.all_entries if self.top.all_known else None

    def declared(self) -> Iterator[tuple[str, Binding]]:
        """The hooks the module declares: its ``__all__`` entries that it binds, else
        the public functions that files of the hook package define and it binds."""
        entries = self.all_entries()
        if entries is not None:
            for name, line, col in entries:
                binding = self.top.ns.get(name)
                if binding is not None:
                    yield name, binding._replace(path=self.hooks, line=line, col=col)
            return
        if self.top.all_entries is not None:  # an __all__ that is no literal: unknown
            return
        for name, binding in self.top.ns.items():
            if binding.kind == "function" and binding.local and not name.startswith("_"):
                yield name, binding

    def files(self) -> list[Loaded]:
        """Every module of the hook package that loads with it, in load order."""
        return [m for m in self.loaded if m.path is not None]

    def later_files(self) -> list[Loaded]:
        """Modules of the hook package that its functions import when they run.

        A hook such as ``def language_extend_globals(g): from .. import _ext``
        loads ``_ext`` through the hook package when it is called, not when
        the hook module is imported; those files, and the files they import
        in turn, are modules of the hook package too.  Found without running
        anything, so the hooks' answers do not change.
        """
        seen = {m.path for m in self.loaded if m.path is not None}
        # (module, its file, whether its top level ran in the model already)
        pending: list[tuple[_Module, str, bool]] = [
            (self.modules[m.key], m.path, True) for m in self.loaded if m.path is not None
        ]
        found: list[Loaded] = []
        while pending:
            module, file, ran = pending.pop()
            tree = self.tree_of(file) if file.endswith(".py") else None
            if tree is None:
                continue
            for node, key in self._imports(module, tree, inside_functions=ran):
                located = self._locate(key)
                target = located[0] if located is not None else None
                if located is None or target is None or target in seen:
                    continue
                path = located[1]
                seen.add(target)
                found.append(Loaded(key, target, file, node.lineno, node.col_offset + 1))
                pending.append((_Module(key, target, path), target, False))
        return found

    def _imports(
        self, module: _Module, tree: ast.Module, *, inside_functions: bool
    ) -> Iterator[tuple[ast.stmt, str]]:
        """Hook-package keys imported by *tree*: inside function bodies only when
        *inside_functions* (its top level ran already), else everywhere."""
        pending: list[tuple[ast.AST, bool]] = [(node, False) for node in tree.body]
        while pending:
            node, in_function = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                pending.extend((child, True) for child in ast.iter_child_nodes(node))
                continue
            wanted = in_function or not inside_functions
            if wanted and isinstance(node, ast.Import):
                for alias in node.names:
                    key = self.resolve(module, 0, alias.name)
                    if key is not None:
                        yield node, key
            elif wanted and isinstance(node, ast.ImportFrom):
                key = self.resolve(module, node.level, node.module)
                if key is not None:
                    yield node, key
                    for alias in node.names:
                        if alias.name != "*":
                            yield node, f"{key}.{alias.name}" if key else alias.name
            pending.extend((child, in_function) for child in ast.iter_child_nodes(node))

    def _locate(self, key: str) -> Optional[tuple[Optional[str], Optional[list[str]]]]:
        """``(file, __path__)`` of hook-package module *key*, found as the path finder
        would, without running it; ``None`` when there is none."""
        top = self.modules[""]
        file, path = top.file, top.path
        parts = key.split(".") if key else []
        for index, part in enumerate(parts):
            known = self.modules.get(".".join(parts[: index + 1]))
            if known is not None:
                file, path = known.file, known.path
                continue
            if path is None:
                return None
            hit = None
            for entry in path:
                hit = self.folder(entry).find(part)
                if hit is not None:
                    break
            if hit is None:
                return None
            kind, file, folder = hit
            path = [folder] if kind in ("package", "namespace") else None
        return file, path

    # -- the import system, modelled

    def load(self, key: str, at: tuple[str, int, int]) -> Optional[_Module]:
        """``importlib.import_module`` of hook-package module *key*; ``None``: not found."""
        found = self.modules.get(key)
        if found is not None:
            return found
        parent_key, _, last = key.rpartition(".")
        parent = self.load(parent_key, at) if key else None
        if parent is None or parent.path is None:
            return None
        hit = None
        portions: list[str] = []
        for entry in parent.path:
            view = self.folder(entry).find(last)
            if view is None:
                continue
            if view[0] == "namespace":
                portions.append(view[2])
                continue
            hit = view
            break
        if hit is None and not portions:
            return None
        if hit is None:
            module = _Module(key, None, portions)
        else:
            kind, file, folder = hit
            module = _Module(key, file, [folder] if kind == "package" else None)
        self.modules[key] = module
        self.loaded.append(Loaded(key, module.file, *at))
        if module.file is not None:
            self._run(module)
        # The import system binds a submodule on its package once it has loaded.
        parent.ns[last] = Binding("module", module.file or at[0], 1, 1, origin=key)
        return module

    def _run(self, module: _Module) -> None:
        file = module.file
        assert file is not None
        if not file.endswith(".py"):
            module.dynamic = f"{file} is compiled, so its names are unknown"
            return
        tree = self.tree_of(file)
        if tree is None:
            raise _Broken(file, 1, 1, f"{file} cannot be read or parsed")
        _Executor(self, module, file).block(tree.body, "")

    def resolve(self, module: _Module, level: int, name: Optional[str]) -> Optional[str]:
        """The hook-package key of an import in *module*; ``None`` when it is outside."""
        if level == 0:
            if self.hook_name is None or name is None:
                return None
            if name == self.hook_name:
                return ""
            if name.startswith(self.hook_name + "."):
                return name[len(self.hook_name) + 1 :]
            return None
        parts = module.key.split(".") if module.key else []
        if module.path is None:  # a plain module: relative to its package
            if not parts:
                return None  # a hook module that is a plain file has no package of its own
            parts = parts[:-1]
        if level - 1 > len(parts):
            return None  # above the hook package
        parts = parts[: len(parts) - (level - 1)]
        if name:
            parts.extend(name.split("."))
        return ".".join(parts)


def first_hook(
    modules: Sequence[HookModule], name: str
) -> tuple[str, Optional[Binding], Optional[HookModule]]:
    """What ``spec_func(name)`` finds in hook modules *modules*, highest priority first.

    The run time imports every hook module of the stack at the first lookup, so
    one that is broken or uncertain makes every answer unknown; otherwise the
    first module that defines *name* wins, and one that may define it makes the
    answer unknown.
    """
    if any(m.broken is not None or m.uncertain for m in modules):
        return UNKNOWN, None, None
    for module in modules:
        state, binding = module.answer(name)
        if state != NOT_DEFINED:
            return state, binding, module
    return NOT_DEFINED, None, None
