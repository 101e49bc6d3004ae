"""FLAGTREE_SPEC_DEBUG logs one line per decision."""

from __future__ import annotations

import json

from conftest import SOURCE, run_python


def test_debug_logs_backend_directories_hook_modules_and_mirror_loads():
    proc = run_python(
        """
        import fixpkg.runtime.jit, fixpkg.runtime.autotuner
        from flagtree_spec import spec
        spec("init_language")
        """,
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_DEBUG": "1"},
    )
    err = proc.stderr
    alpha = SOURCE / "third_party" / "alpha" / "backend" / "spec"
    assert "flagtree_spec: root package fixpkg: backend stack alpha (FLAGTREE_BACKEND)" in err
    assert f"package fixpkg.runtime: added {alpha}/fixpkg/runtime" in err
    assert "hook module flagtree_spec._hooks.alpha_" in err and f"{alpha}/__init__.py" in err
    assert f"module fixpkg.runtime.jit: loading from mirror {alpha}/fixpkg/runtime/jit.py" in err
    assert "fixpkg.runtime.autotuner: loading from mirror" not in err
    assert "hook init_language for root package 'fixpkg': init_language from" in err


def test_no_output_without_debug():
    proc = run_python(
        "import fixpkg.runtime.jit\nfrom flagtree_spec import spec\nspec('init_language')",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert proc.stderr == ""


def test_logger_used_when_program_configured_logging_without_variable():
    proc = run_python(
        """
        import logging, sys
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s")
        import fixpkg.runtime.jit
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert "flagtree_spec root package fixpkg: backend stack alpha" in proc.stderr


def test_importing_the_library_loads_no_heavy_modules():
    proc = run_python(
        """
        import sys
        import typing  # every real trunk imports it (on 3.9 and 3.10 it brings re)
        before = set(sys.modules)
        import flagtree_spec, fixpkg.runtime.jit
        new = sorted(set(sys.modules) - before)
        import json
        print(json.dumps(new))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    new = set(json.loads(proc.stdout))
    heavy = {
        "logging",
        "dataclasses",
        "inspect",
        "hashlib",
        "importlib.metadata",
        "ast",
        "re",
        "json",
        "difflib",
        "argparse",
    }
    assert not (new & heavy), sorted(new & heavy)
    assert "flagtree_spec._path" in new
