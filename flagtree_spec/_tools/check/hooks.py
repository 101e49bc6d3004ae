"""The check rules about hook modules and hook calls: FTS009, FTS012, FTS013, FTS015 and
FTS022.

They read the hook modules as the model resolves them
(:mod:`flagtree_spec._tools.model.hooks`: names bound as the import system
binds them, following fragments) and the trunk's hook calls from the facts of
each source file.  They register in :mod:`.registry`.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from typing import Optional

from ..._discovery import SpecRoot
from ..model.hooks import DEFINED, NOT_DEFINED, Binding, HookModule, first_hook
from ..model.model import Model, Module
from ..model.source import Source, resolve_relative
from .registry import Hit, Rule, _hook_calls, _running, rule
from .signatures import bind_error

__all__: list[str] = []


def _declaration_hint(model: Model, spec_root: SpecRoot) -> str:
    """For a spec root without a declaration whose hook package holds its mirror tree."""
    if spec_root.declaration is not None or spec_root.hooks is None or spec_root.mirror is None:
        return ""
    folder = os.path.dirname(spec_root.hooks)
    mirror = model.mirror_of(spec_root)
    if not (mirror == folder or mirror.startswith(folder + os.sep)):
        return ""
    hooks = os.path.relpath(spec_root.hooks, spec_root.path).replace(os.sep, "/")
    return (
        f". If {mirror} is a tree of hook fragments rather than overrides (usually the case), "
        f"declare it in {os.path.join(spec_root.path, 'flagtree_spec.json')}: "
        f'{{"mirror": null, "hooks": "{hooks}"}}'
    )


def _dispatches(model: Model, module: Module, source: Source, name: str, depth: int = 4) -> bool:
    """Whether bare name *name* of *module* certainly calls hooks the way ``spec()`` does:
    flagtree_spec's ``spec``, ``for_root(...).spec``, a ``def spec(hook, *args,
    **kwargs)`` that forwards them, or such a name imported from another trunk module."""
    found = source.dispatchers().get(name)
    if found is None or depth == 0:
        return False
    if found[0] in ("flagtree_spec", "for_root"):
        return found[1] == "spec"
    if found[0] == "forwarder":
        return True
    _, level, target, imported = found
    assert isinstance(level, int) and isinstance(target, str) and isinstance(imported, str)
    package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
    absolute = resolve_relative(level, target or None, package)
    if absolute is None or absolute.partition(".")[0] != model.root:
        return False
    other = model.resolve(absolute)
    if other.file is None or not other.file.endswith(".py"):
        return False
    return _dispatches(model, other, model.source(other.file), imported, depth - 1)


def _definition_elsewhere(model: Model, spec_root: SpecRoot, name: str) -> str:
    """``path:line`` of a top-level ``def``/``class`` *name* in the spec root, if any."""
    for dirpath, dirnames, filenames in os.walk(spec_root.path):
        dirnames[:] = sorted(d for d in dirnames if d.isidentifier())
        for filename in sorted(f for f in filenames if f.endswith(".py")):
            path = os.path.join(dirpath, filename)
            if path == spec_root.hooks:
                continue
            tree = model.source(path).tree
            for node in tree.body if tree is not None else ():
                if (
                    isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.name == name
                ):
                    return f"{path}:{node.lineno}"
    return ""


def _fetched_in_loops(model: Model, hook_modules: list[HookModule]) -> set[str]:
    """Hooks that trunk fetches by name in a loop over a list: ``for n in
    _ext_spec_api_list: spec_func(n)`` over a module-level list of trunk, or
    ``for n in spec.core_ext_spec_api_list: getattr(spec, n)`` over a list that
    a module of a hook package defines (FlagTree's form).  Those names count as
    called."""
    looped: set[tuple[str, str, str]] = set()
    found: set[str] = set()
    lists: dict[str, set[str]] = {}
    for _, source, _lower in _running(model):
        dynamic = source.dynamic_hooks()
        looped |= dynamic.looped
        found |= dynamic.names
        for name, items in dynamic.lists.items():
            lists.setdefault(name, set()).update(items)
    if not looped:
        return found
    for hooks in hook_modules:
        for loaded in hooks.files():
            if loaded.path is not None and loaded.path.endswith(".py"):
                for name, items in model.source(loaded.path).dynamic_hooks().lists.items():
                    lists.setdefault(name, set()).update(items)
    for name, prefix, suffix in looped:
        found.update(prefix + item + suffix for item in lists.get(name, ()))
    return found


@rule(
    "FTS009",
    "warning",
    "hook called by trunk and defined by no backend (info), or the reverse",
)
class UnmatchedHook(Rule):
    """## What it does
    Matches the hooks trunk calls (`spec("h")`, `spec_func("h")`, names fetched
    in a loop over a literal list) with the hooks the backend's hook module
    defines: a hook called and defined by no backend of the stack is an info,
    a hook defined and never called is a warning.

    ## Why is this bad?
    An optional hook that no backend defines is normal (info). A hook that is
    defined and never called is almost always a typo in its name, and the
    backend's function silently never runs.

    ## Example
    ```python
    # python/R/language/__init__.py (trunk)
    spec("init_language", globals())

    # third_party/B/backend/spec/__init__.py (the hook module)
    def init_languge(namespace): ...
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/__init__.py
    def init_language(namespace): ...
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        if not model.spec_roots:
            return
        hook_modules = [hooks for _, hooks in model.hook_modules()]
        called: set[str] = set()
        states: dict[str, str] = {}  # hook name -> what the stack answers for it
        for _, source, call, note in _hook_calls(model):
            called.add(call.hook)
            state = states.get(call.hook)
            if state is None:
                state = states[call.hook] = first_hook(hook_modules, call.hook)[0]
            if state == NOT_DEFINED:
                yield Hit(
                    source.path,
                    call.line,
                    call.col,
                    f"hook {call.hook!r} is called here{note} and defined by no backend of the "
                    "stack (fine for an optional hook)",
                    "info",
                )
        called |= _fetched_in_loops(model, hook_modules)
        for hooks in hook_modules:
            for name, binding in hooks.declared():
                if name not in called and binding.kind in ("function", "lambda", "class"):
                    yield Hit(
                        binding.path,
                        binding.line,
                        binding.col,
                        f"hook {name!r} is defined here and never called by spec({name!r}) or "
                        f"spec_func({name!r}); a typo?",
                    )


@rule("FTS012", "error", "a trunk hook call whose arguments the hook's signature cannot accept")
class HookCallArguments(Rule):
    """## What it does
    Binds the arguments of each trunk hook call (`spec("h", a, k=v)`) to the
    signature of the function that run time would call, as Python binds them:
    argument count, keyword names, defaults, `*args`, `**kwargs`, keyword-only
    and positional-only parameters.

    ## Why is this bad?
    The call raises `TypeError` on this backend only, the first time trunk
    reaches it, which may be deep inside a compilation.

    ## Example
    ```python
    # python/R/runtime/jit.py (trunk)
    spec("launch_metadata", kernel, grid, stream=s)

    # third_party/B/backend/spec/R/runtime/jit.py (a hook fragment)
    def launch_metadata(kernel, grid): ...
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/runtime/jit.py
    def launch_metadata(kernel, grid, stream=None): ...
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        hook_modules = [hooks for _, hooks in model.hook_modules()]
        if not hook_modules:
            return
        answers: dict[str, tuple[str, Optional[Binding], Optional[HookModule]]] = {}
        errors: dict[tuple[str, int, tuple[str, ...]], Optional[str]] = {}
        for module, source, call, note in _hook_calls(model):
            # Judged only where the callee certainly dispatches and the arguments are known.
            if not call.callee or call.unpacked:
                continue
            found = answers.get(call.hook)
            if found is None:
                found = answers[call.hook] = first_hook(hook_modules, call.hook)
            state, binding, _ = found
            if state != DEFINED or binding is None or binding.signature is None:
                continue  # no hook, a class, a decorated def, or any other callable
            shape = (call.hook, call.positional, call.keywords)
            if shape not in errors:
                errors[shape] = bind_error(binding.signature, call.positional, call.keywords)
            error = errors[shape]
            if error is None or not _dispatches(model, module, source, call.callee):
                continue
            yield Hit(
                source.path,
                call.line,
                call.col,
                f"{call.callee}({call.hook!r}, ...){note}: the hook "
                f"{binding.origin}{binding.signature.describe()} at "
                f"{binding.path}:{binding.line} {error}; change the call or the hook's "
                "parameters",
            )


@rule("FTS013", "error", "override also imported through the hook package")
class OverrideThroughHookPackage(Rule):
    """## What it does
    Finds a file that loads twice: once as an override of a trunk module, and
    once as a module of the hook package (imported by the hook module).

    ## Why is this bad?
    One file, two module objects: two copies of every class and every global,
    so `isinstance` checks and module state disagree between the two.

    ## Example
    ```python
    # third_party/B/backend/spec/__init__.py (the hook module)
    from .R.runtime import autotuner
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/__init__.py
    import R.runtime.autotuner as autotuner  # the override, one module object
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        live = {
            os.path.normpath(entry.path): entry.name
            for _, entry in model.mirror_files()
            if entry.kind != "folder"
            and os.path.normpath(model.resolve(entry.name).file or "")
            == os.path.normpath(entry.path)
        }
        fragments = model.hook_fragments()
        for spec_root, hooks in model.hook_modules():
            yield from self.loaded(model, spec_root, hooks, live)
            if spec_root.hooks_package and spec_root.mirror is not None:
                assert spec_root.hooks is not None
                yield from self.hook_package(
                    model, spec_root, os.path.dirname(spec_root.hooks), fragments
                )

    def loaded(
        self, model: Model, spec_root: SpecRoot, hooks: HookModule, live: dict[str, str]
    ) -> Iterator[Hit]:
        """Modules the hook package loads that also load as overrides."""
        for loaded in hooks.files():
            assert loaded.path is not None
            name = live.get(os.path.normpath(loaded.path))
            if name is None or loaded.key == "":
                continue
            yield Hit(
                loaded.importer,
                loaded.line,
                loaded.col,
                f"imports {loaded.path} through the hook package (as its module {loaded.key}), "
                f"and it also loads as the override {name}: two module objects of one file, two "
                f"copies of every class; import {name} instead"
                + _declaration_hint(model, spec_root),
            )

    def hook_package(
        self, model: Model, spec_root: SpecRoot, folder: str, fragments: frozenset[str]
    ) -> Iterator[Hit]:
        """Files of the hook package's folder that the model did not see load (imported
        some other way) and that import an override through the hook package's name."""
        mirror = model.mirror_of(spec_root)
        rel = os.path.relpath(mirror, folder)
        if rel.startswith(os.pardir) or os.path.isabs(rel):
            return
        hook = spec_root.hook_name or "__hooks__"
        prefix = ".".join([hook, *rel.split(os.sep)])
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d.isidentifier() and os.path.join(dirpath, d) != mirror and d != "__pycache__"
            )
            parts = os.path.relpath(dirpath, folder).split(os.sep)
            package = ".".join([hook, *(p for p in parts if p != os.curdir)])
            for filename in sorted(f for f in filenames if f.endswith(".py")):
                path = os.path.join(dirpath, filename)
                source = model.source(path)
                if source.tree is None or os.path.normpath(path) in fragments:
                    continue
                for imp in source.imports(package):
                    for target in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)):
                        if not target.startswith(prefix + "."):
                            continue
                        rest = target[len(prefix) + 1 :].split(".")
                        file = os.path.join(mirror, *rest)
                        if os.path.isfile(file + ".py") or os.path.isfile(
                            os.path.join(file, "__init__.py")
                        ):
                            name = ".".join([model.root, *rest])
                            yield Hit(
                                path,
                                imp.line,
                                imp.col,
                                f"imports the override {name} through the hook package as "
                                f"{target}: two module objects of one file, two copies of every "
                                f"class; import {name} instead"
                                + _declaration_hint(model, spec_root),
                            )


@rule("FTS015", "error", "the hook module's __all__ names a hook it never binds")
class UnboundHookInAll(Rule):
    """## What it does
    Finds a name in the hook module's `__all__` that the hook module never
    binds, and names a `def` of that name elsewhere in the spec root if there
    is one.

    ## Why is this bad?
    `spec("h")` finds nothing, so the hook silently never runs, and
    `from hooks import *` raises `AttributeError`.

    ## Example
    ```python
    # third_party/B/backend/spec/R/__init__.py (the hook module)
    from ._utils import helper

    __all__ = ["helper", "missing_hook"]
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/__init__.py
    from ._utils import helper, missing_hook

    __all__ = ["helper", "missing_hook"]
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        for spec_root, hooks in model.hook_modules():
            entries = hooks.all_entries()
            assert spec_root.hooks is not None
            if entries is None or hooks.broken is not None or hooks.uncertain:
                continue
            folder = os.path.dirname(spec_root.hooks)
            for name, line, col in entries:
                if hooks.answer(name)[1] is not None or hooks.answer(name)[0] != NOT_DEFINED:
                    continue  # bound (maybe to no hook), or unknown
                if spec_root.hooks_package and model.folder(folder).find(name) is not None:
                    continue  # a submodule: 'from hook import *' imports it
                elsewhere = _definition_elsewhere(model, spec_root, name)
                fix = (
                    f"{elsewhere} defines it: import it into the hook module"
                    if elsewhere
                    else "define or import it, or drop it from __all__"
                )
                yield Hit(
                    spec_root.hooks,
                    line,
                    col,
                    f"__all__ names hook {name!r}, which the hook module never binds, so "
                    f"spec({name!r}) finds nothing and 'from ... import *' raises "
                    f"AttributeError; {fix}",
                )


@rule("FTS022", "warning", "spec(...) or default: a hook may return a falsy value")
class SpecOrDefault(Rule):
    """## What it does
    Finds `spec("h", ...) or default(...)` in code that loads.

    ## Why is this bad?
    The default also runs when the hook ran and returned a falsy value (`0`,
    `None`, an empty array), so the backend's answer is thrown away.

    ## Example
    ```python
    value = spec("atomic_add", ptr, val) or generic_atomic_add(ptr, val)
    ```

    ## Use instead
    ```python
    value = (spec_func("atomic_add") or generic_atomic_add)(ptr, val)
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        for _, source, lower in _running(model):
            for line, col, hook in source.or_defaults():
                if lower is not None and not lower.runs(line):
                    continue
                yield Hit(
                    source.path,
                    line,
                    col,
                    f"spec({hook!r}, ...) or default: the default also runs when the hook "
                    "returns a falsy value (0, None, an empty array); call "
                    f"(spec_func({hook!r}) or default)(...) instead",
                )
