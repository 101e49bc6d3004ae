"""A real backend (examples/triton_backend) for the real, unmodified Triton.

Each scenario runs ``examples/triton_demo.py`` (two real ``@triton.jit``
kernels on the CPU, ``TRITON_INTERPRET=1``) in a fresh interpreter and reads
the JSON document it prints: once under ``flagtree-spec run`` with the
example spec root on ``FLAGTREE_SPEC_PATH`` (script and ``-m`` forms), and
twice without it (plain Python, and ``run`` with no spec root).

The cache-key tests run a small probe that prints
``triton.runtime.cache.triton_key()``, on a copy of the spec root that they
edit between runs.

Needs ``torch`` and ``triton`` (``pip install ".[triton]"``, CPython 3.11).
Without them the tests are skipped, unless ``FLAGTREE_SPEC_REQUIRE_TRITON=1``
(CI on 3.11), where a missing package fails every test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
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


def run_demo(args: list[str], *, cwd: Path, spec_path: bool, spec_root: Path = SPEC_ROOT) -> Any:
    """Run ``python ARGS`` in a fresh interpreter; check the exit code, return the JSON report."""
    extra = {"TRITON_INTERPRET": "1"}
    if spec_path:
        extra["FLAGTREE_SPEC_PATH"] = str(spec_root)
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
    return json.loads(lines[-1])


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


# ----------------------------------------------------------------- the helper a trunk @jit calls


def test_backend_helper_is_called_by_trunk_jit_source(with_backend: Report) -> None:
    # tl.rand is the trunk's @jit function; it calls uint_to_uniform_float by its
    # global name, which the backend's override of triton.language.random replaced.
    assert under(with_backend["random_file"], SPEC_ROOT)
    assert with_backend["rand_vs_24_bits"] <= EXACT
    assert with_backend["rand_vs_31_bits"] > DIFFERENT


def test_without_backend_trunk_helper_converts_random_integers(without_backend: Report) -> None:
    assert not under(without_backend["random_file"], SPEC_ROOT)
    assert without_backend["rand_vs_31_bits"] <= EXACT
    assert without_backend["rand_vs_24_bits"] > DIFFERENT


# ----------------------------------------------------------------- the compilation cache key

SPEC_SUFFIX = re.compile(r"-spec-[0-9a-f]{64}")

PROBE = """
import json, os
os.environ.setdefault("TRITON_INTERPRET", "1")
import triton.runtime.cache as cache
print(json.dumps(cache.triton_key()))
"""


def test_backend_cache_override_keeps_trunk_triton_key_working(with_backend: Report) -> None:
    # The override inherits the trunk module; the trunk's triton_key() reads
    # files next to __file__ (libtriton), which stays the trunk's file.
    assert under(with_backend["cache_file"], SPEC_ROOT)
    dunder_file = Path(with_backend["cache_dunder_file"])
    assert dunder_file.parts[-3:] == ("triton", "runtime", "cache.py")
    assert not under(str(dunder_file), SPEC_ROOT)
    key = with_backend["triton_key"]
    assert SPEC_SUFFIX.fullmatch(key[-70:]), key[-80:]


def test_without_backend_triton_key_is_the_trunk_key(without_backend: Report) -> None:
    assert not under(without_backend["cache_file"], SPEC_ROOT)
    assert SPEC_SUFFIX.search(without_backend["triton_key"]) is None


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``triton_key()`` of trunk Triton, then under a copy of the spec root, edited twice.

    Each key comes from a new process, as a new run of a program would see it.
    """
    require_triton()
    tmp = tmp_path_factory.mktemp("keys")
    probe = tmp / "key_probe.py"
    probe.write_text(PROBE)
    copy = tmp / "triton_backend"
    shutil.copytree(SPEC_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def key(spec_path: bool) -> str:
        args = [*RUN, str(probe)] if spec_path else [str(probe)]
        result: str = run_demo(args, cwd=tmp, spec_path=spec_path, spec_root=copy)
        return result

    found = {"trunk": key(False), "copy": key(True)}
    # A file that holds no @jit source: the hook module.
    hooks = copy / "__init__.py"
    hooks.write_text(hooks.read_text() + "\n# edited\n")
    found["hooks edited"] = key(True)
    # The override that makes the key, itself.
    override = copy / "triton" / "runtime" / "cache.py"
    text = override.read_text()
    assert "The trunk's key" in text
    override.write_text(text.replace("The trunk's key", "The trunk key"))
    found["override edited"] = key(True)
    return found


def test_triton_key_under_the_backend_is_the_trunk_key_and_the_fingerprint(
    keys: dict[str, str],
) -> None:
    assert keys["copy"] != keys["trunk"]
    assert keys["copy"].startswith(keys["trunk"] + "-spec-")
    assert SPEC_SUFFIX.fullmatch(keys["copy"][len(keys["trunk"]) :])


def test_triton_key_is_the_same_wherever_the_spec_root_lies(
    keys: dict[str, str], with_backend: Report
) -> None:
    assert with_backend["triton_key"] == keys["copy"]


@pytest.mark.parametrize("edit", ["hooks edited", "override edited"])
def test_triton_key_changes_in_a_new_process_after_a_spec_file_changes(
    keys: dict[str, str], edit: str
) -> None:
    # So kernels compiled before an edit of the backend are not served after it.
    assert keys[edit].startswith(keys["trunk"] + "-spec-")
    others = [value for name, value in keys.items() if name != edit]
    assert keys[edit] not in others


def test_static_check_of_the_example_backend_is_clean(tmp_path: Path) -> None:
    require_triton()
    env = clean_env()
    env["PYTHONPATH"] = LIBRARY
    args = ["check", "--package", "triton", "--spec-root", str(SPEC_ROOT), "--auto"]
    proc = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", *args, "--format", "json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    assert json.loads(proc.stdout) == {"findings": []}
