"""Build-time markers in every shape FlagTree writes, and the environment against them.

``fixtures/marker_computed`` holds FlagTree's own shape: a ``FLAGTREE_BACKEND``
text file naming ``gamma`` and a ``_flagtree_backend.py`` that computes the
value from it (and sets ``MARKER_MODULE_RAN`` if it is ever executed).
``fixtures/marker_bad`` holds a module that is neither a literal nor computed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_python, scenario

from flagtree_spec import SpecConfigError
from flagtree_spec._config import read_marker

COMPUTED = FIXTURES / "marker_computed" / "site-packages"
BAD = FIXTURES / "marker_bad" / "site-packages"

# What loaded, where the backend came from, and whether the marker module ever ran.
PROBE = """
import json, os
try:
    import mkpkg.runtime.jit as jit
except Exception as exc:
    print(json.dumps([type(exc).__name__, str(exc)]))
else:
    from flagtree_spec import active
    print(json.dumps([jit.WHERE, active("mkpkg").source, os.environ.get("MARKER_MODULE_RAN")]))
"""


def copy_tree(tmp_path: Path, source: Path = COMPUTED) -> Path:
    site = tmp_path / "site-packages"
    shutil.copytree(source, site, ignore=shutil.ignore_patterns("__pycache__"))
    return site


def test_marker_module_that_computes_the_value_defers_to_the_text_file_beside_it():
    where, source, ran = scenario(PROBE, path=[COMPUTED])
    assert where == "gamma"
    assert source.startswith("marker ") and source.endswith("FLAGTREE_BACKEND"), source
    assert ran is None  # read with ast, never executed


def test_marker_module_that_computes_the_value_without_a_text_file_is_no_marker(tmp_path):
    site = copy_tree(tmp_path)
    (site / "mkpkg" / "FLAGTREE_BACKEND").unlink()
    proc = run_python(PROBE, path=[site], env={"FLAGTREE_SPEC_DEBUG": "1"})
    assert proc.stdout.strip().splitlines()[-1] == '["trunk", "no backend set", null]'
    assert "computes FLAGTREE_BACKEND and there is no FLAGTREE_BACKEND file beside it" in (
        proc.stderr
    )


@pytest.mark.parametrize(
    "text",
    [
        'FLAGTREE_BACKEND: str = "gamma"\n',
        '"""doc"""\nFLAGTREE_BACKEND = "gamma"\n',
        "FLAGTREE_BACKEND: 'str' = 'gamma'\n",
    ],
)
def test_marker_module_with_a_literal_annotated_or_not_is_read(tmp_path, text):
    site = copy_tree(tmp_path)
    (site / "mkpkg" / "FLAGTREE_BACKEND").unlink()
    (site / "mkpkg" / "_flagtree_backend.py").write_text(text)
    assert scenario(PROBE, path=[site])[:2] == [
        "gamma",
        f"marker {site / 'mkpkg' / '_flagtree_backend.py'}",
    ]


@pytest.mark.parametrize("value", ["none", "gamma"])
def test_environment_is_never_blocked_by_a_marker_that_cannot_be_read(value):
    proc = run_python(PROBE, path=[BAD], env={"FLAGTREE_BACKEND": value})
    expected = "trunk" if value == "none" else "gamma"
    assert proc.stdout.strip().splitlines()[-1].startswith(f'["{expected}", "FLAGTREE_BACKEND')
    assert "marker ignored" not in proc.stderr  # the environment decided: nothing to report


def test_marker_that_cannot_be_read_means_no_backend_and_is_reported_once_on_stderr():
    code = PROBE + "import importlib, flagtree_spec; flagtree_spec.activate(None)\n"
    proc = run_python(code, path=[BAD], env={"PYTHONWARNINGS": "error"})
    assert proc.stdout.strip().splitlines()[-1].startswith('["trunk", "no backend set"')
    assert proc.stderr.count("build-time backend marker ignored, so no backend is active") == 1
    assert "FLAGTREE_SPEC_STRICT=1" in proc.stderr and "_flagtree_backend.py" in proc.stderr


@pytest.mark.parametrize("env", [{}, {"FLAGTREE_BACKEND": "none"}, {"FLAGTREE_BACKEND": "gamma"}])
def test_strict_mode_makes_a_marker_that_cannot_be_read_an_import_error(env):
    out = scenario(PROBE, path=[BAD], env={"FLAGTREE_SPEC_STRICT": "1", **env})
    assert out[0] == "SpecConfigError", out
    assert "never executed" in out[1] and "[FLAGTREE_SPEC_STRICT=1]" in out[1]


def test_environment_against_the_text_file_of_a_computing_marker_module_is_a_mismatch():
    out = scenario(PROBE, path=[COMPUTED], env={"FLAGTREE_BACKEND": "alpha"})
    assert out[0] == "SpecConfigError" and "contradicts the build-time marker" in out[1]
    assert scenario(
        PROBE,
        path=[COMPUTED],
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_ALLOW_MISMATCH": "1"},
    )[:2] == ["trunk", "FLAGTREE_BACKEND"]  # alpha has no spec root here


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('FLAGTREE_BACKEND = "a"\nFLAGTREE_BACKEND = "b"\n', "assigns FLAGTREE_BACKEND 2 times"),
        ("FLAGTREE_BACKEND = None\n", "is None, not a string"),
        ("FLAGTREE_BACKEND: int = 3\n", "is 3, not a string"),
        ("X = 1\n", "must hold exactly one top-level"),
        ("a = b = FLAGTREE_BACKEND = f()\n", "must hold exactly one top-level"),
        ("import os\nFLAGTREE_BACKEND = 'a'\n", "must hold exactly one top-level"),
        ("FLAGTREE_BACKEND = f()\nfor FLAGTREE_BACKEND in x: pass\n", "2 times"),
    ],
)
def test_marker_module_of_neither_shape_is_config_error(tmp_path, text, why):
    (tmp_path / "_flagtree_backend.py").write_text(text)
    with pytest.raises(SpecConfigError, match=why):
        read_marker(str(tmp_path))


@pytest.mark.parametrize(
    "text",
    [
        "FLAGTREE_BACKEND: str = _read()\n",
        "import os\nFLAGTREE_BACKEND = os.environ.get('X', '')\n",
        "def f():\n    FLAGTREE_BACKEND = 'x'\n    return FLAGTREE_BACKEND\n"
        "FLAGTREE_BACKEND = f()\n",
        "FLAGTREE_BACKEND = f'{1}'\n",
        'FLAGTREE_BACKEND = "a" + "b"\n',
    ],
)
def test_marker_module_that_computes_the_value_is_no_marker_by_itself(tmp_path, text):
    (tmp_path / "_flagtree_backend.py").write_text(text)
    assert read_marker(str(tmp_path)) is None
    (tmp_path / "FLAGTREE_BACKEND").write_text("alpha\n")
    marker = read_marker(str(tmp_path))
    assert marker is not None and marker.stack == ("alpha",)
    assert marker.path == str(tmp_path / "FLAGTREE_BACKEND")
