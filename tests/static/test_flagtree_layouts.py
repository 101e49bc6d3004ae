"""``status``, ``which`` and ``check`` on every layout of FlagTree's spec file variants.

The contract: discovery finds each variant's mirror and hook module with no
declaration (the alternate installed layout ``<R>/spec/B`` flat unless it holds
``R/``), ``status`` names the hook module picked and the rule that picked it,
paths carry no ``/./``, and ``check`` reports no stray file for a flat mirror.
What ``which`` answers is what a real import loads.  The trees are those of
``tests/flagtree_variants.py``, with the forwarder in place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_support import run
from conftest import scenario
from flagtree_variants import HOOK_MODULE, VARIANTS, build

RULES = {
    "backends-spec-R": "FlagTree's convention triton/__init__.py",
    "backends-spec": "the spec root's own __init__.py",
    "spec-B": "the spec root's own __init__.py",
    "spec-call": "the spec root's own __init__.py",
    "spec-call-nested": "FlagTree's convention triton/__init__.py",
}
FLAT = {"spec-B", "spec-B-backends-hooks", "spec-call"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_status_names_the_hook_module_each_variant_imports_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str
) -> None:
    _, trunk = build(tmp_path, variant, forwarder=True)
    code, out, _ = run(capsys, "status", "--trunk", str(trunk), "--format", "json")
    assert code == 0
    roots = json.loads(out)["spec_roots"]
    hooks = [r for r in roots if r["hook_module"]]
    assert hooks[0]["hook_module"] == HOOK_MODULE[variant]
    if variant in RULES:
        assert hooks[0]["hooks_rule"].startswith(RULES[variant])
    mirrors = [r for r in roots if r["mirror"]]
    assert len(mirrors) == 1
    assert "/./" not in mirrors[0]["mirror"] and not mirrors[0]["mirror"].endswith("/.")
    assert mirrors[0]["mirror_rule"].startswith("flat: ") == (variant in FLAT)
    if variant in FLAT:  # the flat mirror is the spec root itself, as found
        assert mirrors[0]["mirror"] == mirrors[0]["path"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_which_answers_what_the_import_loads_in_each_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str
) -> None:
    folder, trunk = build(tmp_path, variant, forwarder=True)
    names = ["triton.runtime.jit", "triton.language.core", "triton.language.fused"]
    code, out, _ = run(capsys, "which", *names, "--trunk", str(trunk), "--format", "json")
    assert code == 0
    predicted = {row["module"]: row["file"] for row in json.loads(out)}
    loaded = scenario(
        "import importlib, json\n"
        f"names = {names!r}\n"
        "print(json.dumps({n: importlib.import_module(n).__spec__.origin for n in names}))",
        path=[folder],
    )
    assert {n: os.path.realpath(f) for n, f in predicted.items()} == {
        n: os.path.realpath(f) for n, f in loaded.items()
    }
    # Not trunk's files: the overrides (and the module only the backend has) load.
    assert os.path.realpath(loaded["triton.runtime.jit"]) != str(trunk / "runtime/jit.py")
    assert not loaded["triton.language.core"].startswith(str(trunk / "language"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_finds_no_stray_or_dead_file_in_any_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str
) -> None:
    _, trunk = build(tmp_path, variant, forwarder=True)
    code, out, _ = run(capsys, "check", "--trunk", str(trunk), "--format", "json")
    codes = sorted({f["code"] for f in json.loads(out)["findings"]})
    if variant in ("checkout-overlay", "driver-overlay"):
        # The checkout's stale copy of triton/backends/__init__.py, which the root's
        # spec_path(__path__, ("backends", "_C")) keeps on trunk: never loads.
        assert (code, codes) == (1, ["FTS006", "FTS008"])
    else:
        assert (code, codes) == (0, ["FTS008"])
