"""Every variant of FlagTree's own spec file, and ``adopt`` switching each to the forwarder.

The contract: ``from flagtree_spec.flagtree import *`` replaces FlagTree's spec
file under either name; discovery finds each variant's mirror tree and hook
module with no declaration; ``flagtree-spec adopt`` proves the switch by
importing every module both ways.  The trees are built by
``tests/flagtree_variants.py`` from ``fixtures/flagtree_variants``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_python, scenario
from flagtree_variants import HOOK_MODULE, MT, PARTS, VARIANTS, build

from flagtree_spec import flagtree
from flagtree_spec._cli import main
from flagtree_spec._tools.model.flagtree import FORWARDER

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


def _adopt(capsys: pytest.CaptureFixture[str], trunk: Path, *options: str) -> tuple[int, str, str]:
    """Run ``flagtree-spec adopt --trunk TRUNK`` in this process (its proof runs children)."""
    code = main(["adopt", "--trunk", str(trunk), *options])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("variant", VARIANTS)
def test_adopt_detects_each_variant_proves_it_and_writes_the_forwarder(tmp_path, capsys, variant):
    # Every variant's mirror and hook module, found with no declaration: with FlagTree's
    # own file the fixture does what each shape does; adopt proves the forwarder does the
    # same, module by module, and after it the tree loads the same with the library.
    folder, trunk = build(tmp_path, variant)
    own = _probe(folder, variant)
    assert {k: own[k] for k in EXPECTED} == EXPECTED
    assert own["hook_module"] == HOOK_MODULE[variant] and own["library"] is False
    code, out, _ = _adopt(capsys, trunk, "--format", "json")
    data = json.loads(out)
    assert code == 0
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
    assert after["hook_module"] == HOOK_MODULE[variant]


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


def test_adopt_refuses_and_changes_nothing_when_a_hook_module_only_the_library_loads(
    tmp_path, capsys
):
    # Planted: 43be79a0's hooks come from backends/B/spec; a hook package in the flat
    # spec/B answers a hook there too, which FlagTree's own file never imports.
    _, trunk = build(tmp_path, "spec-B-backends-hooks")
    (trunk / f"spec/{MT}/__init__.py").write_text("def only_here():\n    return 1\n")
    before = (trunk / "flagtree_spec.py").read_text()
    code, out, err = _adopt(capsys, trunk)
    assert code == 1, out + err
    assert "hook only_here: answer: own None" in out
    assert "NOT equivalent" in out
    assert (trunk / "flagtree_spec.py").read_text() == before


def test_adopt_refuses_a_package_init_override_that_imports_only_with_the_forwarder(
    tmp_path, capsys
):
    # Planted: a package-init override calling spec_path(__path__): FlagTree's own
    # spec_path adds no trunk folder to it, the library's does (FTS002).
    _, trunk = build(tmp_path, "backends-spec-R")
    init = trunk / f"backends/{MT}/spec/triton/language/__init__.py"
    init.write_text(
        "from triton.flagtree_spec import spec_path\nspec_path(__path__)\n"
        "from .core import add, where\n__all__ = ['add', 'where']\n"
    )
    code, out, err = _adopt(capsys, trunk, "--format", "json")
    assert code == 1, out + err
    data = json.loads(out)
    assert data["adopted"] is False and data["proven"] is False
    what = {(d["module"], d["what"]) for d in data["backends"][0]["differences"]}
    assert ("triton.language", "path") in what
    assert (trunk / "flagtree_spec.py").read_text() != FORWARDER


def test_adopt_refuses_when_the_two_orders_of_checkout_and_installed_mirrors_differ(
    tmp_path, capsys
):
    # FEP #98 puts the checkout's copy before <triton>/backends/B/spec/triton; the
    # library puts the installed spec tree first. Where both hold a module, adopt says so.
    _, trunk = build(tmp_path, "checkout-overlay")
    other = trunk / f"backends/{MT}/spec/triton/runtime"
    other.mkdir(parents=True)
    (other / "jit.py").write_text('WHERE = "installed"\n\ndef jit(fn):\n    return fn\n')
    code, out, err = _adopt(capsys, trunk, "--format", "json")
    assert code == 1, out + err
    data = json.loads(out)
    origins = [d for d in data["backends"][0]["differences"] if d["module"] == "triton.runtime.jit"]
    assert origins and origins[0]["what"] == "origin"


def test_adopt_names_an_import_the_forwarder_lacks_and_changes_nothing(tmp_path, capsys):
    _, trunk = build(tmp_path, "spec-call")
    jit = trunk.parent.parent / f"third_party/{MT}/spec/triton/runtime/jit.py"
    jit.write_text("from triton._flagtree_spec import _triton_root\n" + jit.read_text())
    code, out, err = _adopt(capsys, trunk)
    assert code == 2, out + err
    assert "_triton_root" in err and "nothing was changed" in err
    assert (trunk / "_flagtree_spec.py").read_text() != FORWARDER


def test_adopt_of_a_forwarder_is_a_no_op(tmp_path, capsys):
    _, trunk = build(tmp_path, "spec-call", forwarder=True)
    code, out, err = _adopt(capsys, trunk)
    assert code == 0, out + err
    assert "forwards to flagtree_spec already" in out


MARKER = """
import json, sys
import triton
import flagtree_spec
built = sys.modules["triton._flagtree_backend"]
out = {"library": list(flagtree_spec.active("triton").backends),
       "trunk_read": triton.language.BUILT_FOR, "module": built.FLAGTREE_BACKEND}
if "ACTIVATE" in sys.argv[1:]:
    with flagtree_spec.activate(None):
        out["inside"] = built.FLAGTREE_BACKEND
    out["after"] = built.FLAGTREE_BACKEND
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("env", "marker", "library", "value"),
    [
        ({}, True, ["mthreads"], "mthreads"),
        ({"FLAGTREE_BACKEND": "none"}, True, [], ""),
        ({"FLAGTREE_BACKEND": "mthreads"}, False, ["mthreads"], "mthreads"),
        ({}, False, [], ""),
    ],
)
def test_flagtree_trunk_reads_the_backend_the_library_chose(tmp_path, env, marker, library, value):
    # The library and FlagTree's trunk never disagree about the backend in one process:
    # R._flagtree_backend.FLAGTREE_BACKEND is made to name the library's stack.
    folder, trunk = build(tmp_path, "spec-call", forwarder=True)
    if not marker:
        (trunk / "FLAGTREE_BACKEND").unlink()
    out = scenario(MARKER, path=[folder], env=env)
    assert out == {"library": library, "trunk_read": value, "module": value}


def test_activate_changes_what_the_flagtree_marker_module_says_and_restores_it(tmp_path):
    folder, _ = build(tmp_path, "spec-call", forwarder=True)
    code = MARKER.replace('"ACTIVATE" in sys.argv[1:]', "True")
    out = scenario(code, path=[folder])
    assert (out["module"], out["inside"], out["after"]) == ("mthreads", "", "mthreads")


def test_a_flagtree_marker_that_agrees_is_never_imported_by_the_library(tmp_path):
    folder, trunk = build(tmp_path, "backends-spec", forwarder=True)
    init = trunk / "language/__init__.py"
    lines = init.read_text().splitlines(keepends=True)
    init.write_text("".join(line for line in lines if "_flagtree_backend" not in line))
    out = scenario(
        "import json, sys, triton\nprint(json.dumps('triton._flagtree_backend' in sys.modules))",
        path=[folder],
    )
    assert out is False


def test_a_stack_makes_flagtree_s_marker_module_name_its_highest_backend(tmp_path):
    # FlagTree's trunk knows one backend: the highest of the library's stack.
    folder, _ = build(tmp_path, "spec-call", forwarder=True)
    out = scenario(
        "import json, sys, triton, flagtree_spec\n"
        "with flagtree_spec.activate('mthreads,other'):\n"
        "    inside = sys.modules['triton._flagtree_backend'].FLAGTREE_BACKEND\n"
        "print(json.dumps(inside))",
        path=[folder],
    )
    assert out == "mthreads"


def test_an_unreadable_marker_makes_flagtree_s_module_say_no_backend_as_the_library(tmp_path):
    # The text file is no backend name: the library runs with none, and FlagTree's
    # module, which reads the raw text, is made to agree.
    folder, trunk = build(tmp_path, "spec-call", forwarder=True)
    (trunk / "FLAGTREE_BACKEND").write_text("mthreads.v2\n")
    proc = run_python(MARKER, path=[folder])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"library": [], "trunk_read": "", "module": ""}
    assert "build-time backend marker ignored" in proc.stderr


def test_a_marker_module_of_a_trunk_without_flagtree_s_spec_file_is_never_executed(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from flagtree_spec import spec_path\nspec_path(__path__)\n")
    (pkg / "_flagtree_backend.py").write_text(
        "import sys\nsys.stderr.write('MARKER MODULE EXECUTED\\n')\nFLAGTREE_BACKEND = 'vendor'\n"
    )
    proc = run_python(
        "import json, sys, pkg\nprint(json.dumps('pkg._flagtree_backend' in sys.modules))",
        path=[tmp_path],
        env={"FLAGTREE_BACKEND": "none"},
    )
    assert proc.stdout.strip().splitlines()[-1] == "false"
    assert "MARKER MODULE EXECUTED" not in proc.stderr


def test_spec_path_of_the_forwarder_takes_none_as_no_exclusion(tmp_path):
    folder, trunk = build(tmp_path, "backends-spec", forwarder=True)
    root = trunk / "__init__.py"
    root.write_text(root.read_text().replace("spec_path(__path__)", "spec_path(__path__, None)"))
    out = _probe(folder, "backends-spec")
    assert {k: out[k] for k in EXPECTED} == EXPECTED
