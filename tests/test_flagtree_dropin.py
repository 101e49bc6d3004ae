"""The drop-in for FlagTree's own ``triton/flagtree_spec.py`` (docs/flagtree.md).

``fixtures/flagtree_dropin`` holds a small tree of FlagTree's shape twice:
``installed/site-packages/triton`` (hook package
``triton.backends.mthreads.spec.triton``) and ``source`` (``python/triton``
and ``third_party/mthreads/backend/spec``), no declaration file in either.
Its trunk package inits call ``from triton.flagtree_spec import spec_path``
then ``spec_path(__path__)``, its root calls
``spec("triton_extend_globals", globals())``, and ``triton/flagtree_spec.py``
is the forwarder that docs/flagtree.md shows.  The build marker is FlagTree's:
a ``FLAGTREE_BACKEND`` text file and a ``_flagtree_backend.py`` computing
the value from it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, LIBRARY, clean_env, scenario

DROPIN = FIXTURES / "flagtree_dropin"
LAYOUTS = {"installed": "installed/site-packages", "source": "source/python"}
DOC = Path(__file__).resolve().parent.parent / "docs" / "flagtree.md"

PROBE = """
import json, sys
import triton
import triton.runtime.autotuner as autotuner
from triton.flagtree_spec import spec, spec_func
import flagtree_spec
tl = triton.language
state = flagtree_spec.active("triton")
hook = spec_func("apply_with_path")
print(json.dumps({
    "stack": list(state.backends), "source": state.source,
    "jit": triton.runtime.jit.WHERE, "core": tl.core.WHERE, "autotuner": autotuner.WHERE,
    "extended_by": getattr(triton, "EXTENDED_BY", None),
    "hook": hook("x") if hook else None,
    "spec": spec("apply_with_path", "y"),
    "bound": list(getattr(tl, "BOUND", ())),
    "squeeze": tl.squeeze(1) if hasattr(tl, "squeeze") else None,
    "add": tl.add(1, 2),
    "hooks_loaded": sorted(m.rpartition(".")[2] for m in sys.modules
                           if m.startswith(("triton.backends.mthreads.spec.triton",
                                            "flagtree_spec._hooks.mthreads"))),
}))
"""

SPECIALISED = {
    "jit": "mthreads",  # a whole-file override
    "core": "mthreads",  # an override that inherits the trunk module
    "autotuner": "trunk",
    "extended_by": "mthreads",  # spec("triton_extend_globals", globals()) in the root
    "hook": "mthreads:x",
    "spec": "mthreads:y",
    # bind_language_extension_symbols_to_tl: squeeze is bound; add (triton.language has
    # one) and listed_but_missing (the extension lacks it) are left alone.
    "bound": ["squeeze"],
    "squeeze": "squeezed 1",
    "add": 3,
}


def site(tmp_path: Path, layout: str, *, marker_file: bool) -> Path:
    shutil.copytree(DROPIN / layout, tmp_path / layout)
    path = tmp_path / LAYOUTS[layout]
    if not marker_file:
        (path / "triton" / "FLAGTREE_BACKEND").unlink()
    return path


@pytest.mark.parametrize("layout", LAYOUTS)
def test_forwarder_with_flagtree_build_marker_file_specialises_overrides_hooks_and_binding(
    tmp_path, layout
):
    out = scenario(PROBE, path=[site(tmp_path, layout, marker_file=True)])
    assert out["stack"] == ["mthreads"]
    assert out["source"].startswith("marker ") and out["source"].endswith("FLAGTREE_BACKEND")
    assert {k: out[k] for k in SPECIALISED} == SPECIALISED
    assert {"_utils", "_language_ext", "language"} <= set(out["hooks_loaded"])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_forwarder_with_the_environment_and_no_marker_file_specialises(tmp_path, layout):
    # _flagtree_backend.py computes its value and finds no file: no marker; the
    # environment names the backend.
    path = site(tmp_path, layout, marker_file=False)
    assert scenario(PROBE, path=[path])["stack"] == []
    out = scenario(PROBE, path=[path], env={"FLAGTREE_BACKEND": "mthreads"})
    assert (out["stack"], out["source"]) == (["mthreads"], "FLAGTREE_BACKEND")
    assert {k: out[k] for k in SPECIALISED} == SPECIALISED


@pytest.mark.parametrize("layout", LAYOUTS)
def test_forwarder_with_backend_none_against_the_marker_is_the_trunk(tmp_path, layout):
    out = scenario(
        PROBE, path=[site(tmp_path, layout, marker_file=True)], env={"FLAGTREE_BACKEND": "none"}
    )
    assert out == {
        "stack": [],
        "source": "FLAGTREE_BACKEND=none",
        "jit": "trunk",
        "core": "trunk",
        "autotuner": "trunk",
        "extended_by": None,
        "hook": None,
        "spec": None,
        "bound": [],
        "squeeze": None,
        "add": 3,
        "hooks_loaded": [],
    }


def test_installed_layout_imports_the_hook_package_under_flagtree_own_name(tmp_path):
    out = scenario(PROBE, path=[site(tmp_path, "installed", marker_file=True)])
    # triton.backends.mthreads.spec.triton, as FlagTree's own spec() imports it: one module
    # object per file, whoever imports it.
    assert "triton" in out["hooks_loaded"]


def test_forwarder_in_the_fixtures_is_the_one_docs_flagtree_md_shows():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    forwarder = (DROPIN / "installed/site-packages/triton/flagtree_spec.py").read_text()
    assert forwarder in blocks
    assert (DROPIN / "source/python/triton/flagtree_spec.py").read_text() == forwarder


def test_pytest_report_shows_the_hook_package_and_its_fragments_apart_from_overrides(tmp_path):
    test = tmp_path / "test_hooks.py"
    test.write_text(
        "def test_hook():\n"
        "    import triton\n"
        "    from triton.flagtree_spec import spec\n"
        "    assert spec('apply_with_path', 'x') == 'mthreads:x'\n"
    )
    env = clean_env()
    env["PYTHONPATH"] = os.pathsep.join([str(DROPIN / LAYOUTS["installed"]), LIBRARY])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--flagtree-report",
            "--flagtree-root=triton",
            str(test),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "2 of 2 overrides and added modules loaded" in out, out
    hooks = out[out.index("  hook package, loaded:") :]
    assert "    hook      triton  " in hooks
    assert "    hook fragment triton._utils  " in hooks
    assert "    hook fragment triton._language_ext  " in hooks  # imported by a hook when it ran
    assert "cannot load" not in out
