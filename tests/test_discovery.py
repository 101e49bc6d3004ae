"""Spec-root sources, their order, declarations and de-duplication."""

from __future__ import annotations

import importlib.metadata
import json
import os
import zipfile

import pytest
from conftest import FIXTURES, INSTALLED, NEUTRAL, SOURCE, SOURCE_PY, scenario

from flagtree_spec import _entrypoints

THIRD = SOURCE / "third_party"

JIT = "import json, fixpkg.runtime.jit as j; print(json.dumps(j.WHERE))"


def test_installed_layouts_backends_then_spec_folder():
    out = scenario(
        """
        import json, instpkg.runtime.jit as j, instpkg.runtime as r
        from flagtree_spec import spec, active
        print(json.dumps([j.WHERE, spec("init_language"), list(r.__path__),
                          [s.kind for s in active("instpkg").spec_roots]]))
        """,
        path=[INSTALLED],
        env={"FLAGTREE_BACKEND": "gamma,delta"},
    )
    base = str(INSTALLED / "instpkg")
    assert out == [
        "gamma",
        "gamma",
        [
            f"{base}/backends/gamma/spec/instpkg/runtime",
            f"{base}/spec/delta/instpkg/runtime",
            f"{base}/runtime",
        ],
        ["installed", "installed-alt"],
    ]


def test_installed_hook_module_imported_under_real_dotted_name_once():
    out = scenario(
        """
        import json, instpkg
        from flagtree_spec import spec
        first = spec("module_name")
        import instpkg.backends.gamma.spec as direct
        print(json.dumps([first, direct.COUNT, spec("init_language")]))
        """,
        path=[INSTALLED],
        env={"FLAGTREE_BACKEND": "gamma"},
    )
    assert out == ["instpkg.backends.gamma.spec", [1], "gamma"]


def test_alternate_installed_layout_hook_name():
    out = scenario(
        "import json, instpkg; from flagtree_spec import spec;"
        " print(json.dumps(spec('module_name')))",
        path=[INSTALLED],
        env={"FLAGTREE_BACKEND": "delta"},
    )
    assert out == "instpkg.spec.delta"


def test_editable_link_deduplicated_by_real_path_first_occurrence_wins():
    repo = FIXTURES / "editable_repo"
    out = scenario(
        """
        import json, edpkg.runtime.jit as j, edpkg.runtime as r
        from flagtree_spec import spec, active
        print(json.dumps([j.WHERE, list(r.__path__), spec("module_name"),
                          [(s.kind, s.path) for s in active("edpkg").spec_roots]]))
        """,
        path=[repo / "python"],
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    linked = f"{repo}/python/edpkg/backends/alpha/spec"
    assert out[0] == "alpha"
    assert out[1] == [f"{linked}/edpkg/runtime", f"{repo}/python/edpkg/runtime"]
    assert out[2] == "edpkg.backends.alpha.spec"
    assert out[3] == [["installed", linked]]


def test_source_layout_hook_module_gets_private_stable_name():
    out = scenario(
        "import json, fixpkg; from flagtree_spec import active, spec; spec('x');"
        " print(json.dumps(active('fixpkg').hook_modules))",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert len(out) == 1 and out[0].startswith("flagtree_spec._hooks.alpha_")
    again = scenario(
        "import json, fixpkg; from flagtree_spec import active;"
        " print(json.dumps(active('fixpkg').hook_modules))",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert again == out


def test_source_root_variable_selects_repository(tmp_path):
    import shutil

    shutil.copytree(SOURCE_PY / "fixpkg", tmp_path / "fixpkg")
    assert scenario(JIT, path=[tmp_path], env={"FLAGTREE_BACKEND": "alpha"}) == "trunk"
    out = scenario(
        JIT, path=[tmp_path], env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SOURCE_ROOT": str(SOURCE)}
    )
    assert out == "alpha"


def test_legacy_whole_tree_copy_gives_files_only_never_hooks():
    out = scenario(
        """
        import json, fixpkg.runtime.jit as j
        from flagtree_spec import spec, active
        print(json.dumps([j.WHERE, spec("init_language"), active("fixpkg").hook_modules]))
        """,
        env={"FLAGTREE_BACKEND": "legacy"},
    )
    assert out == ["legacy", None, []]


def test_spec_path_variable_applies_without_backend_and_comes_first():
    root = str(FIXTURES / "spec_path_root")
    code = """
        import json, fixpkg.runtime.autotuner as a, fixpkg.runtime.jit as j
        from flagtree_spec import spec
        print(json.dumps([a.WHERE, j.WHERE, spec("init_language")]))
    """
    assert scenario(code, env={"FLAGTREE_SPEC_PATH": root}) == ["spec-path", "trunk", "spec-path"]
    assert scenario(code, env={"FLAGTREE_SPEC_PATH": root, "FLAGTREE_BACKEND": "alpha"}) == [
        "spec-path",
        "alpha",
        "spec-path",
    ]


def test_spec_path_variable_empty_missing_and_relative_entries(tmp_path):
    value = os.pathsep.join(["", str(tmp_path / "missing"), "spec_path_root", ""])
    out = scenario(
        """
        import json, os, fixpkg.runtime.autotuner as a
        from flagtree_spec import active
        os.chdir("/")
        print(json.dumps([a.WHERE, [s.path for s in active("fixpkg").spec_roots]]))
        """,
        env={"FLAGTREE_SPEC_PATH": value, "FLAGTREE_SPEC_DEBUG": "1"},
        cwd=FIXTURES,
    )
    assert out == ["spec-path", [str(FIXTURES / "spec_path_root")]]


def test_spec_path_variable_missing_entry_logs_a_debug_line(tmp_path):
    from conftest import run_python

    proc = run_python(
        "import fixpkg",
        env={"FLAGTREE_SPEC_PATH": str(tmp_path / "missing"), "FLAGTREE_SPEC_DEBUG": "1"},
    )
    assert f"FLAGTREE_SPEC_PATH entry {tmp_path / 'missing'} does not exist" in proc.stderr


def test_spec_path_entry_that_is_a_file_or_inside_zip_is_config_error(tmp_path):
    archive = tmp_path / "roots.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("spec/fixpkg/runtime/jit.py", "WHERE = 'zip'\n")
    code = """
        import json
        try:
            import fixpkg
        except Exception as exc:
            print(json.dumps([type(exc).__name__, str(exc)]))
    """
    out = scenario(code, env={"FLAGTREE_SPEC_PATH": str(archive)})
    assert out[0] == "SpecConfigError" and "is a file" in out[1]
    out = scenario(code, env={"FLAGTREE_SPEC_PATH": str(archive / "spec")})
    assert out[0] == "SpecConfigError" and "zip archive" in out[1]


def test_entry_point_backend_shipped_as_separate_distribution():
    out = scenario(
        """
        import json, fixpkg.runtime.jit as j
        from flagtree_spec import spec, active
        print(json.dumps([j.WHERE, spec("init_language"), active("fixpkg").hook_modules]))
        """,
        path=[SOURCE_PY, FIXTURES / "entry_point" / "site-packages"],
        env={"FLAGTREE_BACKEND": "ext"},
    )
    assert out == ["ext", "ext", ["extbackend"]]


def test_backend_both_in_tree_and_entry_point_is_config_error():
    out = scenario(
        """
        import json
        try:
            import fixpkg
        except Exception as exc:
            print(json.dumps([type(exc).__name__, str(exc)]))
        """,
        path=[SOURCE_PY, FIXTURES / "entry_point_collision" / "site-packages"],
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out[0] == "SpecConfigError"
    assert "exists in the tree" in out[1] and "fake_alpha-2.0.dist-info" in out[1]


@pytest.mark.parametrize("value", ["pkg:attr", "not a name", "missing_package_xyz"])
def test_entry_point_must_name_an_importable_package(tmp_path, value):
    dist = tmp_path / "bad-1.0.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text(f"[flagtree_spec.backends]\nbadep = {value}\n")
    out = scenario(
        """
        import json
        try:
            import fixpkg
        except Exception as exc:
            print(json.dumps([type(exc).__name__, str(exc)]))
        """,
        path=[SOURCE_PY, tmp_path],
        env={"FLAGTREE_BACKEND": "badep"},
    )
    assert out[0] == "SpecConfigError" and "badep" in out[1]


def test_entry_point_scan_agrees_with_importlib_metadata():
    paths = [
        str(FIXTURES / "entry_point" / "site-packages"),
        str(FIXTURES / "entry_point_collision" / "site-packages"),
    ]
    ours = sorted((ep.name, ep.value) for ep in _entrypoints.scan(paths))
    theirs = sorted(
        (ep.name, ep.value)
        for dist in importlib.metadata.distributions(path=paths)
        for ep in dist.entry_points
        if ep.group == _entrypoints.GROUP
    )
    assert ours == theirs == [("alpha", "fakealpha"), ("ext", "extbackend")]


def test_entry_point_scan_of_this_environment_agrees_with_importlib_metadata():
    import sys

    group = "console_scripts"
    ours = sorted((ep.name, ep.value) for ep in _entrypoints.scan(sys.path, group=group))
    seen, theirs = set(), []
    for dist in importlib.metadata.distributions():
        key = dist.metadata["Name"]
        if key is None:
            continue
        key = key.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            continue
        seen.add(key)
        theirs.extend((ep.name, ep.value) for ep in dist.entry_points if ep.group == group)
    assert ours == sorted(theirs)


def test_hook_only_backend_declaration_disables_its_mirror_folder():
    out = scenario(
        """
        import json, fixpkg.runtime.jit as j
        from flagtree_spec import spec
        print(json.dumps([j.WHERE, spec("init_language")]))
        """,
        env={"FLAGTREE_BACKEND": "hookonly"},
    )
    assert out == ["trunk", "hookonly"]


def test_declared_base_joins_stack_right_below():
    out = scenario(
        """
        import json, fixpkg.runtime.jit as j, fixpkg.compiler.code_generator as g
        from flagtree_spec import spec, active
        a = active("fixpkg")
        print(json.dumps([j.WHERE, g.WHERE, spec("init_language"), spec("tile_only"), a.backends]))
        """,
        env={"FLAGTREE_BACKEND": "tilebk,alpha"},
    )
    assert out == ["tilebk", "tileir", "tilebk", "tileir", ["tilebk", "tileir", "alpha"]]


BAD = """
    import json
    try:
        import fixpkg
    except Exception as exc:
        print(json.dumps([type(exc).__name__, str(exc)]))
"""


def test_base_cycle_is_config_error():
    out = scenario(BAD, env={"FLAGTREE_BACKEND": "cycle_a"})
    assert out[0] == "SpecConfigError" and "cycle_a -> cycle_b -> cycle_a" in out[1]


def test_declaration_not_valid_json_is_config_error():
    out = scenario(BAD, env={"FLAGTREE_BACKEND": "badjson"})
    assert out[0] == "SpecConfigError" and "not valid JSON" in out[1]
    assert str(THIRD / "badjson" / "backend" / "spec" / "flagtree_spec.json") in out[1]


def test_declaration_unknown_key_is_config_error():
    out = scenario(BAD, env={"FLAGTREE_BACKEND": "badkey"})
    assert out[0] == "SpecConfigError" and "unknown key 'mirrors'" in out[1]


def test_valid_backend_without_spec_roots_is_no_op_with_debug_line():
    from conftest import run_python

    proc = run_python(JIT, env={"FLAGTREE_BACKEND": "nosuch", "FLAGTREE_SPEC_DEBUG": "1"})
    assert proc.stdout.strip() == '"trunk"'
    assert "backend 'nosuch' has no spec root for package 'fixpkg'" in proc.stderr


def test_backend_without_spec_roots_under_strict_is_config_error():
    out = scenario(BAD, env={"FLAGTREE_BACKEND": "nosuch", "FLAGTREE_SPEC_STRICT": "1"})
    assert out[0] == "SpecConfigError" and "FLAGTREE_SPEC_STRICT=1" in out[1]


def test_dotted_entry_point_found_without_running_its_parent_package():
    out = scenario(
        """
        import json, sys, fixpkg.runtime.jit as j
        runs_after_import = len(getattr(sys, "_vendorpkg_runs", []))
        from flagtree_spec import spec
        print(json.dumps([j.WHERE, runs_after_import, spec("init_language"),
                          len(getattr(sys, "_vendorpkg_runs", []))]))
        """,
        path=[SOURCE_PY, FIXTURES / "entry_point_dotted" / "site-packages"],
        env={"FLAGTREE_BACKEND": "vendor"},
    )
    # The mirror loads with the parent package never executed; the hook module
    # is imported under its own dotted name at the first spec() call.
    assert out == ["vendor", 0, "vendor", 1]


def test_base_in_a_root_without_backend_name_is_config_error(tmp_path):
    root = tmp_path / "unnamed"
    root.mkdir()
    (root / "flagtree_spec.json").write_text('{"base": ["alpha"]}')
    out = scenario(BAD, env={"FLAGTREE_SPEC_PATH": str(root)})
    assert out[0] == "SpecConfigError"
    assert "'base' needs a named backend" in out[1] and "a FLAGTREE_SPEC_PATH root" in out[1]
    out = scenario(
        f"""
        import json, fixpkg
        from flagtree_spec import activate
        try:
            activate(spec_roots=[{str(root)!r}])
        except Exception as exc:
            print(json.dumps([type(exc).__name__, str(exc)]))
        """
    )
    assert out[0] == "SpecConfigError" and "an explicit root" in out[1]


@pytest.mark.parametrize("mirror", ["", ".", "./"])
def test_declaration_mirror_of_the_spec_root_itself_puts_no_dot_in_paths(tmp_path, mirror):
    # A flat mirror declared by a spec root kept elsewhere ({"mirror": ""} or "."):
    # __path__, __spec__.origin and __file__ name the spec root itself, with no "/./".
    pkg = tmp_path / "site/flatpkg"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from flagtree_spec import spec_path\nspec_path(__path__)\n")
    (pkg / "runtime/__init__.py").write_text(
        "from flagtree_spec import spec_path\nspec_path(__path__)\n"
    )
    (pkg / "runtime/jit.py").write_text('WHERE = "trunk"\n')
    root = tmp_path / "flat_spec"
    (root / "runtime").mkdir(parents=True)
    (root / "runtime/jit.py").write_text('WHERE = "flat"\n')
    (root / "flagtree_spec.json").write_text(json.dumps({"mirror": mirror, "hooks": None}))
    out = scenario(
        """
        import json, flatpkg.runtime.jit as j, flatpkg.runtime as r
        print(json.dumps([j.WHERE, j.__spec__.origin, j.__file__, list(r.__path__)]))
        """,
        path=[tmp_path / "site"],
        env={"FLAGTREE_SPEC_PATH": str(root)},
    )
    assert out == [
        "flat",
        f"{root}/runtime/jit.py",
        f"{root}/runtime/jit.py",
        [f"{root}/runtime", f"{pkg}/runtime"],
    ]


def test_a_relative_flagtree_source_root_is_resolved_once_so_a_chdir_does_not_move_it():
    folder = FIXTURES / "relative_source_root"
    out = scenario(
        f"""
        import json, os
        import mrka.mod
        os.chdir({str(NEUTRAL)!r})
        import mrkb.mod
        print(json.dumps([mrka.mod.WHERE, mrkb.mod.WHERE]))
        """,
        path=[folder / "site"],
        cwd=folder,
        env={"FLAGTREE_SOURCE_ROOT": "repo"},
    )
    assert out == ["zz", "zz"]
