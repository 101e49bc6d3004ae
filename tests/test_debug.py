"""DESIGN §9: FLAGTREE_SPEC_DEBUG logs one line per decision."""

from __future__ import annotations

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
