"""A real backend (examples/triton_backend) for the real, unmodified Triton.

Each scenario runs ``examples/triton_demo.py`` (two real ``@triton.jit``
kernels on the CPU, ``TRITON_INTERPRET=1``) in a fresh interpreter and reads
the JSON document it prints: once under ``flagtree-spec run`` with the
example spec root on ``FLAGTREE_SPEC_PATH`` (script and ``-m`` forms), and
twice without it (plain Python, and ``run`` with no spec root).

Needs ``torch`` and ``triton`` (``pip install ".[triton]"``, CPython 3.11).
Without them the tests are skipped, unless ``FLAGTREE_SPEC_REQUIRE_TRITON=1``
(CI on 3.11), where a missing package fails every test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, clean_env

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SPEC_ROOT = EXAMPLES / "triton_backend"
DEMO = EXAMPLES / "triton_demo.py"
RUN = ["-m", "flagtree_spec", "run", "--root", "triton"]  # python -m flagtree_spec run ...

NEEDED = ("torch", "triton", "numpy")
MISSING = [name for name in NEEDED if importlib.util.find_spec(name) is None]
REQUIRED = os.environ.get("FLAGTREE_SPEC_REQUIRE_TRITON", "").strip() == "1"

# float32 rounding of a * x + y, sigmoid and softmax is far below these.
EXACT = 1e-6
# max |hard sigmoid - sigmoid| over [-8, 8] is about 0.069
DIFFERENT = 0.05

Report = dict[str, Any]


def require_triton() -> None:
    """Skip without torch/triton, unless CI requires them: then fail."""
    if not MISSING:
        return
    message = f"{', '.join(MISSING)} not importable by {sys.executable}"
    if REQUIRED:
        pytest.fail(f"FLAGTREE_SPEC_REQUIRE_TRITON=1 but {message}; install '.[triton]'")
    pytest.skip(f"{message} (install '.[triton]'; FLAGTREE_SPEC_REQUIRE_TRITON=1 makes this fail)")


def run_demo(args: list[str], *, cwd: Path, spec_path: bool) -> Report:
    """Run ``python ARGS`` in a fresh interpreter; check the exit code, return the JSON report."""
    extra = {"TRITON_INTERPRET": "1"}
    if spec_path:
        extra["FLAGTREE_SPEC_PATH"] = str(SPEC_ROOT)
    env = clean_env(extra)
    env["PYTHONPATH"] = LIBRARY  # the library under test, as conftest.run_python does
    # cwd is never the repository root: "python -m" would import the source folder.
    proc = subprocess.run(
        [sys.executable, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"{args} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    lines = proc.stdout.strip().splitlines()
    assert lines, f"{args} printed nothing\n--- stderr\n{proc.stderr}"
    report: Report = json.loads(lines[-1])
    return report


@pytest.fixture(scope="module", params=["script", "module"])
def with_backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Report:
    """The demo under ``flagtree-spec run`` with the example spec root (SCRIPT or -m form)."""
    require_triton()
    if request.param == "script":
        return run_demo(
            [*RUN, str(DEMO), "--json"], cwd=tmp_path_factory.mktemp("run"), spec_path=True
        )
    return run_demo([*RUN, "-m", "triton_demo", "--json"], cwd=EXAMPLES, spec_path=True)


@pytest.fixture(scope="module", params=["plain python", "run without a spec root"])
def without_backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Report:
    """The demo with trunk Triton only."""
    require_triton()
    args = [str(DEMO), "--json"] if request.param == "plain python" else [*RUN, str(DEMO), "--json"]
    return run_demo(args, cwd=tmp_path_factory.mktemp("trunk"), spec_path=False)


def under(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_triton_is_importable_when_ci_requires_it() -> None:
    if not REQUIRED:
        pytest.skip("FLAGTREE_SPEC_REQUIRE_TRITON is not 1")
    assert MISSING == [], f"CI requires {NEEDED}; missing: {MISSING}"


def test_backend_primitive_is_bound_into_triton_language_and_exported(
    with_backend: Report,
) -> None:
    assert with_backend["fused_axpy_in_language"] is True
    assert with_backend["fused_axpy_exported"] is True


def test_backend_primitive_in_a_real_kernel_matches_torch(with_backend: Report) -> None:
    assert with_backend["axpy_error"] is None
    assert with_backend["axpy_max_error"] <= EXACT


def test_backend_override_inherits_the_trunk_module(with_backend: Report) -> None:
    assert under(with_backend["standard_file"], SPEC_ROOT)
    assert under(with_backend["language_file"], SPEC_ROOT)
    inherits = with_backend["standard_inherits"]
    assert inherits is not None and not under(inherits, SPEC_ROOT)
    assert Path(inherits).parts[-3:] == ("triton", "language", "standard.py")


def test_backend_override_changes_sigmoid_function_and_member(with_backend: Report) -> None:
    for form in ("fn", "member"):
        assert with_backend[f"sigmoid_{form}_vs_hard"] <= EXACT, form
        assert with_backend[f"sigmoid_{form}_vs_exact"] > DIFFERENT, form


def test_backend_override_keeps_the_trunk_functions_it_does_not_redefine(
    with_backend: Report,
) -> None:
    assert with_backend["softmax_max_error"] <= EXACT


def test_without_backend_the_primitive_is_absent(without_backend: Report) -> None:
    assert without_backend["fused_axpy_in_language"] is False
    assert without_backend["fused_axpy_exported"] is False
    assert "fused_axpy" in without_backend["axpy_error"]
    assert "axpy_max_error" not in without_backend


def test_without_backend_trunk_modules_and_exact_sigmoid_are_back(without_backend: Report) -> None:
    assert not under(without_backend["standard_file"], SPEC_ROOT)
    assert not under(without_backend["language_file"], SPEC_ROOT)
    assert without_backend["standard_inherits"] is None
    for form in ("fn", "member"):
        assert without_backend[f"sigmoid_{form}_vs_exact"] <= EXACT, form
        assert without_backend[f"sigmoid_{form}_vs_hard"] > DIFFERENT, form
    assert without_backend["softmax_max_error"] <= EXACT
