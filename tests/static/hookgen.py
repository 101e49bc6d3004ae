"""Random hook packages, and the comparison of static hook answers with ``spec_func``.

A *hook tree* is a trunk package plus one or two backends whose spec roots
(source layout, ``third_party/<B>/backend/spec/``) hold a hook package: an
``__init__.py`` and fragment modules and sub-packages (regular or namespace)
below it.  Each module runs a few random statements that bind hook names the
ways real hook packages do: ``def``, ``class``, ``lambda``, literals,
aliases, ``from .x import name [as alias]``, ``from .x import *`` with and
without ``__all__``, ``from . import sub``, ``del``, and the constructs whose
answer may be "unknown" (a conditional binding, a module ``__getattr__``,
``globals().update``, a star import from outside the spec root).  A module
imports only modules that come after it in a fixed order, so there are no
cycles; an import may still fail (a name the fragment does not bind), which
makes the hook module fail to load: the model must predict that too.

:func:`check_batch` writes many trees, asks ``for_root(R).spec_func(name)``
for every hook name in one fresh interpreter, and compares each answer with
the static model's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import treegen
from hypothesis import strategies as st

from flagtree_spec._tools.model import hooks as static_hooks

HOOKS = ("h", "g", "k", "_u")
MODULES = ("a", "b")
PACKAGES = ("p", "q")
QUERIED = (*HOOKS, *MODULES, *PACKAGES, "zz")
BACKENDS = ("alpha", "beta")
# Constructs for which the model may answer "unknown".
UNKNOWN_MAKERS = ("if len('x'):", "__getattr__", "globals().update", "from json import *")


@dataclass
class HookMod:
    """One module of a hook package: a file (``init`` of a package) and its statements."""

    key: str  # dotted below the hook package; "" for the hook module
    package: bool
    regular: bool = True  # a package with __init__.py (False: namespace folder)
    body: list[str] = field(default_factory=list)


@dataclass
class HookTree:
    backends: list[list[HookMod]]  # per backend, modules in import order
    # Per backend: the hook package is the spec root (spec/__init__.py), or FlagTree's
    # convention, spec/R/__init__.py, whose folder is also the mirror's root folder.
    convention: list[bool] = field(default_factory=list)


def _layout(draw: Any, prefix: str, depth: int, out: list[HookMod]) -> None:
    names = draw(st.lists(st.sampled_from((*MODULES, *PACKAGES)), unique=True, max_size=3))
    for name in sorted(names):
        key = f"{prefix}.{name}" if prefix else name
        if name in PACKAGES and depth > 0:
            out.append(HookMod(key, True, draw(st.booleans())))
            _layout(draw, key, depth - 1, out)
        elif name in MODULES:
            out.append(HookMod(key, False))


def _package_of(mod: HookMod) -> str:
    return mod.key if mod.package else mod.key.rpartition(".")[0]


def _relative(package: str, target: str) -> str:
    """``.x.y`` for *target* seen from *package* (target lies below package)."""
    rest = target[len(package) :].lstrip(".") if package else target
    return "." + rest


@st.composite
def _statement(
    draw: Any, mod: HookMod, later: Sequence[HookMod], unknowns: bool, before: list[str]
) -> str:
    package = _package_of(mod)
    below = [
        m
        for m in later
        if (m.key.startswith(package + ".") if package else True) and (not m.package or m.regular)
    ]
    hook = draw(st.sampled_from(HOOKS))
    other = draw(st.sampled_from(HOOKS))
    choices = ["def", "def", "def", "literal", "alias", "lambda", "class", "all", "del", "module"]
    if below:
        choices += ["from", "from", "from", "from_as", "from_as", "star", "star", "star"]
        choices += ["submodule"]
    if unknowns:
        choices += ["cond", "getattr", "update", "outside"]
    kind = draw(st.sampled_from(choices))
    earlier = _bound_names(HookMod("", False, body=before))
    if kind in ("alias", "del") and draw(st.integers(0, 3)):
        if not earlier:
            kind = "def"  # mostly names bound already (else a NameError)
        else:
            other = draw(st.sampled_from(earlier))
    if kind == "def":
        return f"def {hook}(*args):\n    return {mod.key!r}\n"
    if kind == "literal":
        return f"{hook} = {draw(st.sampled_from(['None', '3', repr('s'), '[1]']))}\n"
    if kind == "alias":
        return f"{hook} = {other}\n"
    if kind == "lambda":
        return f"{hook} = lambda: 0\n"
    if kind == "class":
        return f"class {hook}:\n    pass\n"
    if kind == "all":
        names = draw(st.lists(st.sampled_from((*HOOKS, *MODULES)), unique=True, max_size=3))
        return f"__all__ = {names!r}\n"
    if kind == "del":
        return f"del {other}\n"
    if kind in ("from", "from_as", "star"):
        target = draw(st.sampled_from(below))
        rel = _relative(package, target.key)
        if kind == "star":
            return f"from {rel} import *\n"
        bound = _bound_names(target)
        if bound and draw(st.integers(0, 3)):
            hook = draw(st.sampled_from(bound))  # mostly names the target binds
        alias = f" as {other}" if kind == "from_as" else ""
        return f"from {rel} import {hook}{alias}\n"
    if kind == "submodule":
        target = draw(st.sampled_from(below))
        parent, _, last = target.key.rpartition(".")
        return f"from {_relative(package, parent) if parent != package else '.'} import {last}\n"
    if kind == "cond":
        return f"if len('x'):\n    def {hook}():\n        pass\n"
    if kind == "getattr":
        return "def __getattr__(name):\n    raise AttributeError(name)\n"
    if kind == "update":
        return "globals().update({})\n"
    if kind == "outside":
        return "from json import *\n"
    return f"import json as {hook}\n"


def _bound_names(mod: HookMod) -> list[str]:
    """Names a module's statements bind at their start (``def h``, ``h = ...``)."""
    found = []
    for stmt in mod.body:
        words = stmt.replace("(", " ").replace(":", " ").split()
        if words[0] in ("def", "class") and words[1] in HOOKS:
            found.append(words[1])
        elif len(words) > 1 and words[0] in HOOKS and words[1] == "=":
            found.append(words[0])
    return sorted(set(found))


@st.composite
def hook_package(draw: Any) -> list[HookMod]:
    mods = [HookMod("", True)]
    _layout(draw, "", 2, mods)
    # One package in four uses the constructs whose answer may be "unknown".
    unknowns = draw(st.integers(0, 3)) == 0
    # Last module first, so an import can name what its target binds.
    for i, mod in reversed(list(enumerate(mods))):
        if not mod.regular:
            continue
        count = draw(st.integers(1 if i == 0 else 0, 5 if i == 0 else 3))
        for _ in range(count):
            mod.body.append(draw(_statement(mod, mods[i + 1 :], unknowns, mod.body)))
    return mods


@st.composite
def hook_trees(draw: Any) -> HookTree:
    count = draw(st.integers(1, 2))
    return HookTree(
        [draw(hook_package()) for _ in range(count)],
        [draw(st.booleans()) for _ in range(count)],
    )


# --------------------------------------------------------------------------- writing


@dataclass
class WrittenHooks:
    root: str
    rdir: str
    python: str


def write_tree(tree: HookTree, base: str, root: str) -> WrittenHooks:
    python = os.path.join(base, "python")
    rdir = os.path.join(python, root)
    os.makedirs(rdir)
    with open(os.path.join(rdir, "__init__.py"), "w", encoding="utf-8") as f:
        f.write("from flagtree_spec import spec_path\nspec_path(__path__)\n")
    names = BACKENDS[: len(tree.backends)]
    with open(os.path.join(rdir, "FLAGTREE_BACKEND"), "w", encoding="utf-8") as f:
        f.write(",".join(names))
    for name, mods, convention in zip(names, tree.backends, tree.convention):
        spec = os.path.join(base, "third_party", name, "backend", "spec")
        if convention:
            spec = os.path.join(spec, root)
        for mod in mods:
            parts = mod.key.split(".") if mod.key else []
            if mod.package:
                folder = os.path.join(spec, *parts)
                os.makedirs(folder, exist_ok=True)
                if not mod.regular:
                    continue
                path = os.path.join(folder, "__init__.py")
            else:
                os.makedirs(os.path.join(spec, *parts[:-1]), exist_ok=True)
                path = os.path.join(spec, *parts) + ".py"
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(mod.body))
    return WrittenHooks(root, rdir, python)


# --------------------------------------------------------------------------- comparing

_CHILD = textwrap.dedent(
    """
    import json, os, sys
    import flagtree_spec
    queries = json.load(open(sys.argv[1], encoding="utf-8"))
    out = {}
    for root, names in queries.items():
        answers = out[root] = {}
        for name in names:
            try:
                func = flagtree_spec.for_root(root).spec_func(name)
            except flagtree_spec.SpecImportError as exc:
                answers[name] = "broken"
                continue
            code = getattr(func, "__code__", None)
            if func is None:
                answers[name] = None
            elif code is None:
                answers[name] = "callable"
            else:
                answers[name] = [os.path.realpath(code.co_filename), code.co_firstlineno]
    json.dump(out, sys.stdout)
    """
)


def spec_funcs(written: Sequence[WrittenHooks], workdir: str) -> dict[str, Any]:
    queries = os.path.join(workdir, "queries.json")
    with open(queries, "w", encoding="utf-8") as f:
        json.dump({w.root: list(QUERIED) for w in written}, f)
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, queries],
        env=treegen._clean_env([w.python for w in written]),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise AssertionError(f"the child failed ({result.returncode}):\n{result.stderr}")
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


Static = Union[str, None, tuple[str, int]]


def static_answers(written: WrittenHooks) -> dict[str, Static]:
    """The model's answer per queried name."""
    model = treegen.static_model(written)  # type: ignore[arg-type]
    assert len(model.hook_modules()) == len(model.spec_roots)
    resolved = [hooks for _, hooks in model.hook_modules()]
    out: dict[str, Static] = {}
    for name in QUERIED:
        if any(h.broken for h in resolved):
            out[name] = "broken"
            continue
        state, binding, _ = static_hooks.first_hook(resolved, name)
        if state == static_hooks.UNKNOWN:
            out[name] = "unknown"
        elif state == static_hooks.NOT_DEFINED:
            out[name] = None
        else:
            assert binding is not None
            if binding.kind in ("function", "lambda"):
                out[name] = (os.path.realpath(binding.path), binding.line)
            else:
                out[name] = "callable"
    return out


def _listing(tree: HookTree) -> str:
    lines = []
    for name, mods, convention in zip(BACKENDS, tree.backends, tree.convention):
        lines.append(f"backend {name}:" + (" (hook package spec/R/)" if convention else ""))
        for mod in mods:
            label = (mod.key or "<hook>") + ("/" if mod.package else ".py")
            if mod.package and not mod.regular:
                label += " (namespace)"
            lines.append(f"  {label}")
            lines.extend("    | " + line for stmt in mod.body for line in stmt.splitlines())
    return "\n".join(lines)


def _may_be_unknown(tree: HookTree) -> bool:
    return any(
        marker in stmt
        for mods in tree.backends
        for mod in mods
        for stmt in mod.body
        for marker in UNKNOWN_MAKERS
    )


def check_batch(batch: Sequence[HookTree], workdir: str) -> tuple[list[str], dict[str, int]]:
    """Write *batch*, ask spec_func in one interpreter; return disagreements and a tally."""
    written = [
        write_tree(tree, os.path.join(workdir, f"tree{i}"), f"hk{i}")
        for i, tree in enumerate(batch)
    ]
    real = spec_funcs(written, workdir)
    problems = []
    tally: dict[str, int] = {}
    for tree, w in zip(batch, written):
        static = static_answers(w)
        found = []
        for name in QUERIED:
            want, got = real[w.root][name], static[name]
            kind = "broken" if want == "broken" else "none" if want is None else "defined"
            tally[kind] = tally.get(kind, 0) + 1
            if got == "unknown":
                tally["unknown"] = tally.get("unknown", 0) + 1
                if not _may_be_unknown(tree):
                    found.append(f"{name}: model says unknown; spec_func gives {want}")
                continue
            if isinstance(want, list):
                want = tuple(want)
            if want != got:
                found.append(f"{name}: model says {got}; spec_func gives {want}")
        if found:
            problems.append(_listing(tree) + "\n  " + "\n  ".join(found))
    return problems, tally


def describe(tally: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(tally.items()))
