"""Random trunk and mirror trees, and the comparison of the static model with real imports.

A *tree* is a trunk package plus the mirror trees of a stack of up to three
backends, laid out as a FlagTree-style source repository::

    <base>/python/<root>/...                      trunk (FLAGTREE_BACKEND marker inside)
    <base>/third_party/<B>/backend/spec/<root>/... mirror tree of backend B
    <base>/third_party/<B>/backend/spec/flagtree_spec.json   optional declaration

Nodes are drawn from a tiny alphabet so that trunk and mirrors collide often:
overrides, added modules and sub-packages, package-init overrides with and
without ``spec_path``, mirror folders without ``__init__`` next to trunk
modules, stray ``.pyc`` files, excluded names.  :func:`import_all` imports
every module of many trees in one fresh interpreter; :func:`disagreements`
compares what happened with :class:`flagtree_spec._tools.model.model.Model`.
"""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from hypothesis import strategies as st

import flagtree_spec
from flagtree_spec._tools.model import model as _model

ALPHABET = ("a", "b", "c")
BACKENDS = ("alpha", "beta", "gamma")
LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(flagtree_spec.__file__)))

INIT_SOURCES = {
    "plain": "X = 1\n",
    "spec": "from flagtree_spec import spec_path\nspec_path(__path__)\n",
    "guarded": (
        "try:\n    from flagtree_spec import spec_path\nexcept ImportError:\n    pass\n"
        "else:\n    spec_path(__path__)\n"
    ),
}

# Package inits that import a child before or after their spec_path call.
ORDERED = {
    "early": "from . import {0}\n" + INIT_SOURCES["spec"],
    "early_star": "from .{0} import *\n" + INIT_SOURCES["spec"],
    "late": INIT_SOURCES["spec"] + "from . import {0}\n",
}

# A module node is its file kinds ("py", "pyc"); a package node is (init, children).
Node = Union["Mod", "Pkg"]


@dataclass
class Mod:
    kinds: tuple[str, ...]  # some of "py", "pyc"


@dataclass
class Pkg:
    # None (namespace folder), "plain", "spec", "guarded", "exclude:a.b", or "early",
    # "early_star", "late": spec_path after / before importing its first child.
    init: Optional[str]
    children: dict[str, Node] = field(default_factory=dict)


@dataclass
class Backend:
    name: str
    mirror: Pkg
    exclude: tuple[str, ...] = ()
    base: tuple[str, ...] = ()


@dataclass
class Tree:
    trunk: Pkg
    backends: list[Backend]
    marker: tuple[str, ...]  # the stack named by the build-time marker


# --------------------------------------------------------------------------- strategies

dotted = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=2).map(".".join)
mirror_init_kinds = st.one_of(
    st.sampled_from(["plain", "spec", "spec", "guarded"]),
    dotted.map(lambda n: f"exclude:{n}"),
)
# Trunk inits also import a child before or after the call: the child is in the
# trunk's folder, so the import itself succeeds whatever a mirror excludes.
init_kinds = st.one_of(
    mirror_init_kinds, st.sampled_from(["early", "early_star", "late", "early", "late"])
)


@st.composite
def package(draw: Any, depth: int, root: bool = False, mirror: bool = False) -> Pkg:
    if root and not mirror:
        init: Optional[str] = draw(init_kinds)
    elif mirror and root:
        init = draw(st.sampled_from([None, None, None, None, "plain"]))
    else:
        init = draw(st.one_of(st.none(), mirror_init_kinds if mirror else init_kinds))
    children: dict[str, Node] = {}
    names = draw(st.lists(st.sampled_from(ALPHABET), unique=True, max_size=3))
    for name in names:
        if depth > 0 and draw(st.integers(0, 2)) == 0:
            children[name] = draw(package(depth - 1, mirror=mirror))
        else:
            kinds = draw(st.sampled_from([("py",), ("py",), ("py",), ("pyc",), ("py", "pyc")]))
            children[name] = Mod(kinds)
    return Pkg(init, children)


@st.composite
def trees(draw: Any) -> Tree:
    trunk = draw(package(2, root=True))
    count = draw(st.integers(0, 3))
    backends = []
    for name in BACKENDS[:count]:
        mirror = draw(package(2, root=True, mirror=True))
        exclude = tuple(draw(st.lists(dotted, unique=True, max_size=2)))
        backends.append(Backend(name, mirror, exclude))
    names = [b.name for b in backends]
    marker: tuple[str, ...] = tuple(names)
    if len(backends) >= 2 and draw(st.booleans()):
        # The first backend builds on the others through its declaration.
        backends[0].base = tuple(names[1:])
        marker = (names[0],)
    return Tree(trunk, backends, marker)


# --------------------------------------------------------------------------- writing


def _write_package(node: Pkg, folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    if node.init is not None:
        if node.init.startswith("exclude:"):
            name = node.init.partition(":")[2]
            text = f"from flagtree_spec import spec_path\nspec_path(__path__, exclude=[{name!r}])\n"
        elif node.init in ORDERED:
            # The first child exists in this folder, so the import itself never fails.
            child = min(node.children, default=None)
            text = INIT_SOURCES["spec"] if child is None else ORDERED[node.init].format(child)
        else:
            text = INIT_SOURCES[node.init]
        with open(os.path.join(folder, "__init__.py"), "w", encoding="utf-8") as f:
            f.write(text)
    for name, child in node.children.items():
        if isinstance(child, Pkg):
            _write_package(child, os.path.join(folder, name))
            continue
        source = os.path.join(folder, name + ".py")
        with open(source, "w", encoding="utf-8") as f:
            f.write(f"X = {name!r}\n")
        if "pyc" in child.kinds:
            py_compile.compile(source, cfile=source + "c", doraise=True)
        if "py" not in child.kinds:
            os.remove(source)


@dataclass
class Written:
    root: str
    rdir: str
    python: str


def write_tree(tree: Tree, base: str, root: str) -> Written:
    """Write *tree* under *base* with root package *root*; return where it went."""
    python = os.path.join(base, "python")
    rdir = os.path.join(python, root)
    _write_package(tree.trunk, rdir)
    with open(os.path.join(rdir, "FLAGTREE_BACKEND"), "w", encoding="utf-8") as f:
        f.write(",".join(tree.marker))
    for backend in tree.backends:
        spec = os.path.join(base, "third_party", backend.name, "backend", "spec")
        _write_package(backend.mirror, os.path.join(spec, root))
        if backend.exclude or backend.base:
            declaration = {"exclude": list(backend.exclude), "base": list(backend.base)}
            with open(os.path.join(spec, "flagtree_spec.json"), "w", encoding="utf-8") as f:
                json.dump(declaration, f)
    return Written(root, rdir, python)


# --------------------------------------------------------------------------- comparing

_CHILD = textwrap.dedent(
    """
    import importlib, json, sys
    names = json.load(open(sys.argv[1], encoding="utf-8"))
    out = {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            out[name] = {"error": type(exc).__name__ + ": " + str(exc)}
            continue
        path = getattr(module, "__path__", None)
        out[name] = {
            "file": getattr(module, "__file__", None),
            "path": None if path is None else list(path),
        }
    json.dump(out, sys.stdout)
    """
)


def _clean_env(pythonpath: Sequence[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env["PYTHONPATH"] = os.pathsep.join([*pythonpath, LIBRARY])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def import_all(written: Sequence[Written], names: Sequence[str], workdir: str) -> dict[str, Any]:
    """Import *names* for real in one fresh interpreter; return what each became."""
    listing = os.path.join(workdir, "names.json")
    with open(listing, "w", encoding="utf-8") as f:
        json.dump(list(names), f)
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, listing],
        env=_clean_env([w.python for w in written]),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"the import child failed with exit code {result.returncode}:\n{result.stderr}"
        )
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def static_model(written: Written) -> _model.Model:
    """The model of a written tree, as the command line would build it."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("FLAGTREE_")}
    try:
        return _model.load(trunk=written.rdir)
    finally:
        os.environ.update(saved)


def _norm(path: Optional[str]) -> Optional[str]:
    return None if path is None else os.path.normpath(path)


def disagreements(model: _model.Model, real: Mapping[str, Any]) -> Iterator[str]:
    """Every module whose static answer differs from what the import system did."""
    for name in model.names():
        answer = model.resolve(name)
        got = real[name]
        if answer.kind == "missing":
            if "error" not in got:
                yield f"{name}: model says it does not import ({answer.reason}); it loaded {got}"
            continue
        if "error" in got:
            yield f"{name}: model says {answer.kind} {answer.file}; import failed: {got['error']}"
            continue
        if _norm(got["file"]) != _norm(answer.file):
            yield f"{name}: model says {answer.file}; __file__ is {got['file']}"
        if answer.kind in ("package", "namespace"):
            want = [_norm(p) for p in answer.path]
            have = [_norm(p) for p in got["path"] or []]
            if want != have:
                yield f"{name}: model says __path__ {want}; real __path__ {have}"
        elif got["path"] is not None:
            yield f"{name}: model says module; it is a package with __path__ {got['path']}"


def describe(tree: Tree) -> str:
    """A readable listing of *tree*, for failure messages."""
    lines = [f"marker: {','.join(tree.marker) or '(none)'}"]

    def walk(node: Pkg, indent: str) -> None:
        for name, child in sorted(node.children.items()):
            if isinstance(child, Pkg):
                lines.append(f"{indent}{name}/ init={child.init}")
                walk(child, indent + "  ")
            else:
                lines.append(f"{indent}{name} {'+'.join(child.kinds)}")

    lines.append(f"trunk/ init={tree.trunk.init}")
    walk(tree.trunk, "  ")
    for backend in tree.backends:
        lines.append(
            f"{backend.name}/ init={backend.mirror.init} exclude={list(backend.exclude)} "
            f"base={list(backend.base)}"
        )
        walk(backend.mirror, "  ")
    return "\n".join(lines)


def check_batch(batch: Sequence[Tree], workdir: str) -> list[str]:
    """Write *batch*, import everything in one interpreter, return the disagreements."""
    written = [
        write_tree(tree, os.path.join(workdir, f"tree{i}"), f"gen{i}")
        for i, tree in enumerate(batch)
    ]
    models = [static_model(w) for w in written]
    names = [n for m in models for n in m.names()]
    real = import_all(written, names, workdir)
    problems = []
    for tree, model in zip(batch, models):
        found = list(disagreements(model, real))
        if found:
            problems.append(describe(tree) + "\n  " + "\n  ".join(found))
    return problems
