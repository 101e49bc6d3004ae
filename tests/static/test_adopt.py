"""``flagtree-spec adopt``: its options, its refusals, and the probe it runs in each child.

The proofs on every variant are in ``tests/test_flagtree_variants.py``; here
the command runs in this process (its children are the probes), so that each
path of it is seen.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from cli_support import run
from flagtree_variants import MT, PARTS, build

from flagtree_spec._tools.adopt import probe
from flagtree_spec._tools.adopt.proof import DIGESTS
from flagtree_spec._tools.model.flagtree import FORWARDER, VARIANTS, spec_file


def test_adopt_without_a_spec_file_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "spec-B")
    (trunk / "flagtree_spec.py").unlink()
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk))
    assert code == 2
    assert "holds no FlagTree spec file (_flagtree_spec.py or flagtree_spec.py)" in err


def test_adopt_of_a_file_that_is_not_flagtree_s_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "spec-B")
    (trunk / "flagtree_spec.py").write_text("VERSION = 1\n")
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk))
    assert code == 2 and "it is not FlagTree's spec file" in err


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--auto"], "--spec-root and --auto do not apply"),
        (["-b", f"{MT},other"], "names a stack; FlagTree's own spec file knows one backend"),
    ],
)
def test_adopt_refuses_options_that_do_not_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    _, trunk = build(tmp_path, "backends-spec")
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk), *option)
    assert code == 2 and message in err
    assert (trunk / "flagtree_spec.py").read_text() != FORWARDER


def test_adopt_with_no_marker_proves_every_backend_with_a_spec_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "backends-spec")
    (trunk / "FLAGTREE_BACKEND").unlink()
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk), "--format", "json")
    data = json.loads(out)
    assert code == 0 and [b["backend"] for b in data["backends"]] == [MT]


def test_adopt_with_no_marker_and_no_spec_root_asks_for_a_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "backends-spec")
    (trunk / "FLAGTREE_BACKEND").unlink()
    shutil.rmtree(trunk / "backends" / MT / "spec")
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk))
    assert code == 2 and "no backend to prove" in err and "give -b B" in err


def test_adopt_no_verify_writes_the_forwarder_and_says_it_proved_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "spec-call")
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk), "--no-verify")
    assert code == 0 and "not verified (--no-verify)" in out
    assert (trunk / "_flagtree_spec.py").read_text() == FORWARDER


def test_adopt_keep_on_failure_writes_the_forwarder_and_still_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "spec-B-backends-hooks")
    (trunk / f"spec/{MT}/__init__.py").write_text("def only_here():\n    return 1\n")
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk), "--keep-on-failure")
    assert code == 1 and "NOT equivalent; kept the forwarder" in out
    assert (trunk / "flagtree_spec.py").read_text() == FORWARDER


def test_adopt_says_when_nothing_imports_on_either_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing compared is nothing proven: exit 1, the tree as it was.
    _, trunk = build(tmp_path, "backends-spec")
    (trunk / "__init__.py").write_text("raise RuntimeError('no device')\n")
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk))
    assert code == 1
    assert "nothing imported on either side, so nothing was compared" in out
    assert "RuntimeError: no device" in out
    assert (trunk / "flagtree_spec.py").read_text() != FORWARDER


@pytest.mark.parametrize("variant", [v.key for v in VARIANTS])
def test_each_variant_of_the_spec_file_is_recognised(tmp_path: Path, variant: str) -> None:
    _, trunk = build(tmp_path, variant)
    found = spec_file(str(trunk), "triton")
    assert found is not None and (found.kind, found.variant) == ("flagtree", variant)
    assert "FlagTree's own (variant " + variant in found.describe("triton")


def test_probe_describes_modules_and_asks_the_trunk_own_spec_func(
    tmp_path: Path, import_state: None
) -> None:
    folder, trunk = build(tmp_path, "backends-spec")
    report = tmp_path / "report.json"
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "root": "triton",
                "spec_files": ["flagtree_spec"],
                "modules": ["triton", "triton.runtime.jit", "triton.nothing_here"],
                "hooks": ["prune_configs", "not_a_hook"],
                "hook_modules": [f"triton.backends.{MT}.spec"],
                "strip": [str(folder)],
                "digests": DIGESTS,
                "report": str(report),
            }
        )
    )
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        del sys.modules[name]
    sys.path.insert(0, str(folder))
    assert probe.main([str(config)]) == 0
    data = json.loads(report.read_text())
    jit = data["modules"]["triton.runtime.jit"]
    expected = os.path.join("<root>", "triton/backends", MT, "spec/triton/runtime/jit.py")
    assert jit["origin"] == expected
    assert data["modules"]["triton.nothing_here"]["error"].startswith("ModuleNotFoundError")
    assert data["modules"]["triton"]["names"]["spec_path"] == "<spec file> spec_path"
    assert data["hooks"]["not_a_hook"] is None
    assert data["hooks"]["prune_configs"].startswith(f"triton.backends.{MT}.spec._utils def ")
    assert "prune_configs" in data["offered"] and isinstance(data["library"], bool)
    assert data["backend"] == MT
    assert str(trunk) not in json.dumps(data)


def test_adopt_refuses_a_helper_of_the_spec_file_used_through_the_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not "from triton._flagtree_spec import NAME" but the module's attribute, inside a
    # function: no import would show it, so the name check must.
    _, trunk = build(tmp_path, "spec-call")
    own = trunk / "_flagtree_spec.py"
    own.write_text(own.read_text() + "\n\ndef _triton_root():\n    return '/opt/triton'\n")
    tuner = trunk / "runtime/autotuner.py"
    tuner.write_text(
        tuner.read_text() + "\n\ndef install_root():\n    from triton import _flagtree_spec\n\n"
        "    return _flagtree_spec._triton_root()\n"
    )
    before = own.read_text()
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk))
    assert code == 2 and "_triton_root (used by" in err and "nothing was changed" in err
    assert own.read_text() == before


def test_adopt_proves_and_replaces_both_files_when_the_trunk_has_both_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trunk half-way from flagtree_spec.py to _flagtree_spec.py: both are FlagTree's own,
    # and both are switched, or neither.
    _, trunk = build(tmp_path, "spec-call")
    shutil.copyfile(PARTS / "own/spec-B.py", trunk / "flagtree_spec.py")
    init = trunk / "runtime/__init__.py"
    init.write_text(init.read_text().replace("triton._flagtree_spec", "triton.flagtree_spec"))
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["proven"] is True
    assert sorted(os.path.basename(p) for p in data["spec_files"]) == [
        "_flagtree_spec.py",
        "flagtree_spec.py",
    ]
    assert (trunk / "_flagtree_spec.py").read_text() == FORWARDER
    assert (trunk / "flagtree_spec.py").read_text() == FORWARDER


def test_a_spec_file_that_defines_spec_itself_is_flagtree_s_even_if_it_imports_the_library(
    tmp_path: Path,
) -> None:
    (tmp_path / "flagtree_spec.py").write_text(
        "from flagtree_spec import spec_path\n\n\ndef spec(name, *a, **k):\n    return None\n"
    )
    found = spec_file(str(tmp_path), "triton")
    assert found is not None and found.kind == "flagtree"


def test_adopt_reads_a_module_missing_on_both_sides_alike_whatever_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stale copy of an excluded package's module: missing with both files, though the
    # library's finder explains why in its message.
    _, trunk = build(tmp_path, "checkout-overlay")
    stale = trunk.parent.parent / f"third_party/{MT}/python/triton/backends/foo.py"
    stale.write_text('WHERE = "stale copy"\n')
    code, out, _ = run(capsys, "adopt", "--trunk", str(trunk), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["proven"] is True, data["backends"][0]["differences"]


def test_adopt_refuses_a_backend_a_literal_marker_module_does_not_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trunk = build(tmp_path, "backends-spec")
    (trunk / "FLAGTREE_BACKEND").unlink()
    (trunk / "_flagtree_backend.py").write_text(f'FLAGTREE_BACKEND = "{MT}"\n')
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk), "-b", "other")
    assert code == 2 and "as a literal, so the proof cannot run 'other'" in err
    code, _, err = run(capsys, "adopt", "--trunk", str(trunk), "-b", "none")
    assert code == 2 and "names no backend" in err


def test_adopt_never_writes_through_a_hard_link_into_another_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A work copy made with ``cp -al`` shares its files with the original: the
    forwarder replaces the work copy's file, the original keeps FlagTree's own."""
    _, trunk = build(tmp_path, "spec-call")
    original = tmp_path / "original_flagtree_spec.py"
    os.link(trunk / "_flagtree_spec.py", original)
    own = original.read_text()
    code, _, _ = run(capsys, "adopt", "--trunk", str(trunk), "--no-verify")
    assert code == 0
    assert (trunk / "_flagtree_spec.py").read_text() == FORWARDER
    assert original.read_text() == own != FORWARDER
