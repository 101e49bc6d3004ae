"""Every variant of FlagTree's own spec file, and ``adopt`` switching each to the forwarder.

The contract: ``from flagtree_spec.flagtree import *`` replaces FlagTree's spec
file under either name; discovery finds each variant's mirror tree and hook
module with no declaration; ``flagtree-spec adopt`` proves the switch by
importing every module both ways.

``fixtures/flagtree_variants`` holds the parts: ``trunk/triton`` (a trunk of
FlagTree's shape whose package inits call ``spec_path(__path__)`` from the spec
file, whose name the tests write for ``SPECFILE``, and hooks through
``SPECCALL``), ``own/<variant>.py`` (the spec file in the shape of each
variant), ``spectree/hooks`` and ``spectree/mirror`` (one backend's hook
package, gathering a fragment with ``from ._utils import *``, and its
overrides), and ``driver`` (a backend driver whose ``spec`` attribute is the
backend's spec package).  :func:`build` lays them out as each variant puts
them: an installed ``site-packages/triton`` or a checkout ``python/triton``
beside ``third_party``, with the links FlagTree commits.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import NamedTuple, Optional

import pytest
from conftest import FIXTURES, run_python, scenario

from flagtree_spec import flagtree
from flagtree_spec._tools.model.flagtree import FORWARDER

PARTS = FIXTURES / "flagtree_variants"


class Layout(NamedTuple):
    """Where one variant puts things, relative to the site folder or the checkout."""

    file: str
    call: str
    checkout: bool
    hooks: str
    mirror: str
    link: Optional[tuple[str, str]] = None
    root_args: str = "__path__"


MT = "mthreads"
VARIANTS = {
    "backends-spec-R": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec/triton",
        f"triton/backends/{MT}/spec/triton",
    ),
    "backends-spec": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec",
        f"triton/backends/{MT}/spec/triton",
    ),
    "driver": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec",
        f"triton/backends/{MT}/spec/triton",
    ),
    "checkout-overlay": Layout(
        "flagtree_spec",
        "spec",
        True,
        f"python/triton/backends/{MT}/spec",
        f"third_party/{MT}/python/triton",
        root_args='__path__, ("backends", "_C")',
    ),
    "spec-B": Layout("flagtree_spec", "spec", False, f"triton/spec/{MT}", f"triton/spec/{MT}"),
    "spec-B-backends-hooks": Layout(
        "flagtree_spec", "spec", False, f"triton/backends/{MT}/spec", f"triton/spec/{MT}"
    ),
    "renamed": Layout(
        "_flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec/triton",
        f"triton/backends/{MT}/spec/triton",
    ),
    "spec-call": Layout(
        "_flagtree_spec",
        "spec_call",
        True,
        f"third_party/{MT}/spec/triton",
        f"third_party/{MT}/spec/triton",
        link=(f"python/triton/spec/{MT}", f"../../../third_party/{MT}/spec/triton"),
    ),
    "spec-call-nested": Layout(
        "_flagtree_spec",
        "spec_call",
        True,
        f"third_party/{MT}/spec/triton",
        f"third_party/{MT}/spec/triton",
        link=(f"python/triton/spec/{MT}", f"../../../third_party/{MT}/spec"),
    ),
}
# The hook module each variant's own file imports, which the library must pick too.
HOOK_MODULE = {
    "backends-spec-R": f"triton.backends.{MT}.spec.triton",
    "backends-spec": f"triton.backends.{MT}.spec",
    "driver": f"triton.backends.{MT}.spec",
    "checkout-overlay": f"triton.backends.{MT}.spec",
    "spec-B": f"triton.spec.{MT}",
    "spec-B-backends-hooks": f"triton.backends.{MT}.spec",
    "renamed": f"triton.backends.{MT}.spec.triton",
    "spec-call": f"triton.spec.{MT}",
    "spec-call-nested": f"triton.spec.{MT}.triton",
}


def _copy(src: Path, dst: Path, text: dict[str, str]) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        body = path.read_text(encoding="utf-8")
        for key, value in text.items():
            body = body.replace(key, value)
        target.write_text(body, encoding="utf-8")


def build(tmp_path: Path, variant: str, *, forwarder: bool = False) -> tuple[Path, Path]:
    """Lay out *variant* under *tmp_path*; return ``(search folder, trunk folder)``."""
    layout = VARIANTS[variant]
    top = tmp_path / variant
    trunk = top / ("python/triton" if layout.checkout else "triton")
    words = {"SPECFILE": layout.file, "SPECCALL": layout.call}
    _copy(PARTS / "trunk/triton", trunk, {**words, "ROOT_SPEC_PATH_ARGS": layout.root_args})
    (trunk / "FLAGTREE_BACKEND").write_text(f"{MT}\n")
    spec = trunk / f"{layout.file}.py"
    if forwarder:
        spec.write_text(FORWARDER)
    else:
        shutil.copyfile(PARTS / "own" / f"{variant}.py", spec)
    _copy(PARTS / "spectree/hooks", top / layout.hooks, words)
    _copy(PARTS / "spectree/mirror", top / layout.mirror, words)
    if variant == "driver":
        _copy(PARTS / "driver", trunk / "backends" / MT, words)
    if variant == "checkout-overlay":
        # The checkout's copy holds stale copies of what the trunk's exclude keeps on trunk.
        copy = top / layout.mirror
        (copy / "backends").mkdir()
        (copy / "backends/__init__.py").write_text('WHERE = "stale copy"\n')
        # Its _C holds only type stubs, as FlagTree's do; _C is a namespace package.
        (copy / "_C/libtriton").mkdir(parents=True)
        (copy / "_C/libtriton/linear_layout.pyi").write_text("def f() -> None: ...\n")
    if layout.link is not None:
        link = top / layout.link[0]
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(layout.link[1], link)
    return (top / "python" if layout.checkout else top), trunk


PROBE = """
import json, sys
import triton, triton.language, triton.runtime.autotuner, triton.backends, triton._C.libtriton
from triton.SPECFILE import SPECCALL, spec_func
import triton.language.fused
print(json.dumps({
    "jit": sys.modules["triton.runtime.jit"].WHERE,
    "core": triton.language.core.WHERE,
    "fused": triton.language.fused.fused_axpy(2, 3, 4),
    "autotuner": triton.runtime.autotuner.WHERE,
    "backends": triton.backends.WHERE,
    "C": triton._C.libtriton.WHERE,
    "extended_by": getattr(triton, "EXTENDED_BY", None),
    "pruned": triton.runtime.autotuner.Autotuner().prune([1, 2, 3]),
    "squeeze": triton.language.squeeze(1),
    "hook_module": spec_func("prune_configs").__module__.rpartition("._utils")[0],
    "library": "flagtree_spec" in sys.modules,
}))
"""
EXPECTED = {
    "jit": "mthreads",
    "core": "mthreads",
    "fused": 10,
    "autotuner": "trunk",
    "backends": "trunk",
    "C": "trunk",
    "extended_by": "mthreads",
    "pruned": [1],
    "squeeze": "squeezed 1",
}


def _probe(folder: Path, variant: str) -> dict[str, object]:
    layout = VARIANTS[variant]
    code = PROBE.replace("SPECFILE", layout.file).replace("SPECCALL", layout.call)
    out: dict[str, object] = scenario(code, path=[folder])
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_own_file_and_forwarder_load_the_same_overrides_and_hooks(tmp_path, variant):
    # Every variant's mirror and hook module, found with no declaration.
    own = _probe(build(tmp_path / "own", variant)[0], variant)
    mine = _probe(build(tmp_path / "fwd", variant, forwarder=True)[0], variant)
    assert {k: own[k] for k in EXPECTED} == EXPECTED  # the fixture is what each shape does
    assert {k: mine[k] for k in EXPECTED} == EXPECTED
    assert own["hook_module"] == mine["hook_module"] == HOOK_MODULE[variant]
    assert (own["library"], mine["library"]) == (False, True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_adopt_detects_each_variant_proves_it_and_writes_the_forwarder(tmp_path, variant):
    folder, trunk = build(tmp_path, variant)
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}, '--format', 'json']))",
        path=[],
    )
    data = json.loads(proc.stdout)
    assert data["variant"] == variant
    assert data["proven"] is True and data["adopted"] is True
    (result,) = data["backends"]
    assert result["differences"] == []
    assert result["imported"] == result["modules"] >= 10
    assert result["from_spec_tree"] >= 3  # jit, core, fused (and the hook fragment)
    assert result["hooks_answered"] >= 3
    spec = trunk / f"{VARIANTS[variant].file}.py"
    assert spec.read_text() == FORWARDER
    after = _probe(folder, variant)
    assert {k: after[k] for k in EXPECTED} == EXPECTED and after["library"] is True


def test_forwarder_exports_every_name_flagtree_spec_files_define():
    own_names = set()
    for path in (PARTS / "own").glob("*.py"):
        text = path.read_text()
        own_names.update(
            n
            for n in (
                "spec",
                "spec_call",
                "spec_func",
                "spec_path",
                "bind_language_extension_symbols_to_tl",
            )
            if f"def {n}(" in text
        )
    assert own_names <= set(flagtree.__all__)
    assert flagtree.spec_call is flagtree.spec  # one function: no cost per call
    ns: dict[str, object] = {}
    exec(FORWARDER, ns)
    assert set(flagtree.__all__) <= set(ns)


def test_spec_path_of_the_forwarder_takes_exclude_by_position_or_by_keyword(tmp_path):
    for args in ('__path__, ("backends", "_C")', '__path__, exclude=("backends", "_C")'):
        folder, _ = build(tmp_path / str(len(args)), "checkout-overlay", forwarder=True)
        root = folder / "triton/__init__.py"
        root.write_text(root.read_text().replace('__path__, ("backends", "_C")', args))
        assert _probe(folder, "checkout-overlay")["backends"] == "trunk"


def test_adopt_refuses_and_changes_nothing_when_a_hook_module_only_the_library_loads(tmp_path):
    # Planted: 43be79a0's hooks come from backends/B/spec; a hook package in the flat
    # spec/B answers a hook there too, which FlagTree's own file never imports.
    _, trunk = build(tmp_path, "spec-B-backends-hooks")
    (trunk / f"spec/{MT}/__init__.py").write_text("def only_here():\n    return 1\n")
    before = (trunk / "flagtree_spec.py").read_text()
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}]))",
        path=[],
        expect_rc=1,
    )
    assert "hook only_here: answer: own None" in proc.stdout
    assert "NOT equivalent" in proc.stdout
    assert (trunk / "flagtree_spec.py").read_text() == before


def test_adopt_refuses_a_package_init_override_that_imports_only_with_the_forwarder(tmp_path):
    # Planted: a package-init override calling spec_path(__path__): FlagTree's own
    # spec_path adds no trunk folder to it, the library's does (FTS002).
    _, trunk = build(tmp_path, "backends-spec-R")
    init = trunk / f"backends/{MT}/spec/triton/language/__init__.py"
    init.write_text(
        "from triton.flagtree_spec import spec_path\nspec_path(__path__)\n"
        "from .core import add, where\n__all__ = ['add', 'where']\n"
    )
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}, '--format', 'json']))",
        path=[],
        expect_rc=1,
    )
    data = json.loads(proc.stdout)
    assert data["adopted"] is False and data["proven"] is False
    what = {(d["module"], d["what"]) for d in data["backends"][0]["differences"]}
    assert ("triton.language", "path") in what
    assert (trunk / "flagtree_spec.py").read_text() != FORWARDER


def test_adopt_refuses_when_the_two_orders_of_checkout_and_installed_mirrors_differ(tmp_path):
    # FEP #98 puts the checkout's copy before <triton>/backends/B/spec/triton; the
    # library puts the installed spec tree first. Where both hold a module, adopt says so.
    _, trunk = build(tmp_path, "checkout-overlay")
    other = trunk / f"backends/{MT}/spec/triton/runtime"
    other.mkdir(parents=True)
    (other / "jit.py").write_text('WHERE = "installed"\n\ndef jit(fn):\n    return fn\n')
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}, '--format', 'json']))",
        path=[],
        expect_rc=1,
    )
    data = json.loads(proc.stdout)
    origins = [d for d in data["backends"][0]["differences"] if d["module"] == "triton.runtime.jit"]
    assert origins and origins[0]["what"] == "origin"


def test_adopt_names_an_import_the_forwarder_lacks_and_changes_nothing(tmp_path):
    _, trunk = build(tmp_path, "spec-call")
    jit = trunk.parent.parent / f"third_party/{MT}/spec/triton/runtime/jit.py"
    jit.write_text("from triton._flagtree_spec import _triton_root\n" + jit.read_text())
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}]))",
        path=[],
        expect_rc=2,
    )
    assert "_triton_root" in proc.stderr and "nothing was changed" in proc.stderr
    assert (trunk / "_flagtree_spec.py").read_text() != FORWARDER


def test_adopt_of_a_forwarder_is_a_no_op(tmp_path):
    _, trunk = build(tmp_path, "spec-call", forwarder=True)
    proc = run_python(
        f"import sys\nfrom flagtree_spec._cli import main\n"
        f"sys.exit(main(['adopt', '--trunk', {str(trunk)!r}]))",
        path=[],
    )
    assert "forwards to flagtree_spec already" in proc.stdout
