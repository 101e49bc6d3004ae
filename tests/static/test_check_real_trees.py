"""`which` and `check` on the shapes found in real backend trees.

Each fixture under fixtures/check/ reproduces one shape seen on FlagTree's
backends (import order in package inits, imports that exist nowhere, imports
run by inherit(), hook files, overrides inside package-init overrides,
shadowed namespace packages, dynamic hooks, incidental names, conflict
markers, stacked whole-file overrides, `spec(...) or default`, a misspelled
added module, and `check` without a backend).  Where the tool predicts what
an import does, the import is also run in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import run_python

from flagtree_spec._cli import main

# The commands print absolute paths from there (text shows paths below the working folder
# relative to it: tests/static/test_output.py).
pytestmark = pytest.mark.usefixtures("outside_the_trees")

CHECK = Path(__file__).resolve().parent.parent.parent / "fixtures" / "check"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def findings(
    capsys: pytest.CaptureFixture[str], scenario: str, *extra: str, backend: str = "vendor"
) -> tuple[int, list[Any]]:
    code, out, err = run(
        capsys,
        "check",
        "--repo",
        str(CHECK / scenario),
        "-b",
        backend,
        "--format",
        "json",
        *extra,
    )
    assert code in (0, 1), err
    found: list[Any] = json.loads(out)["findings"]
    return code, found


def spec(scenario: str, *parts: str, backend: str = "vendor") -> str:
    return str(CHECK / scenario / "third_party" / backend / "backend" / "spec" / Path(*parts))


def trunk(scenario: str, *parts: str) -> str:
    return str(CHECK / scenario / "python" / Path(*parts))


def codes(found: list[Any], code: str) -> list[tuple[str, str, int]]:
    return [(f["severity"], f["path"], f["line"]) for f in found if f["code"] == code]


def message(found: list[Any], code: str, path: str) -> str:
    return next(f["message"] for f in found if f["code"] == code and f["path"] == path)


def imported_files(scenario: str, *modules: str, backend: str = "vendor") -> dict[str, str]:
    """``__file__`` of each module, or the import error, imported for real under *backend*."""
    code = f"""
        import importlib, json
        out = {{}}
        for name in {list(modules)!r}:
            try:
                out[name] = importlib.import_module(name).__file__
            except ImportError as exc:
                out[name] = type(exc).__name__ + ": " + str(exc)
        print(json.dumps(out))
        """
    proc = run_python(code, env={"FLAGTREE_BACKEND": backend}, path=[CHECK / scenario / "python"])
    result: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- 1. import order


def test_fts019_submodule_imported_before_spec_path_loads_from_trunk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts019_import_before_spec_path"
    init = trunk(scenario, "orderpkg/__init__.py")
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS019") == [("error", init, 2), ("error", init, 3)]
    jit = message(found, "FTS019", init)
    assert spec(scenario, "orderpkg/jit.py") in jit and "line 6" in jit
    assert "move the spec_path call above" in jit
    util = next(f["message"] for f in found if f["code"] == "FTS019" and f["line"] == 3)
    assert spec(scenario, "orderpkg/util.py") in util and "orderpkg.tools" in util
    # The overrides that never load are not also called dead (FTS001).
    assert codes(found, "FTS001") == []
    assert code == 1
    real = imported_files(scenario, "orderpkg.jit", "orderpkg.util", "orderpkg.late")
    assert real == {
        "orderpkg.jit": trunk(scenario, "orderpkg/jit.py"),
        "orderpkg.util": trunk(scenario, "orderpkg/util.py"),
        "orderpkg.late": spec(scenario, "orderpkg/late.py"),
    }


def test_which_names_the_import_before_spec_path_with_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts019_import_before_spec_path"
    repo = str(CHECK / scenario)
    code, out, _ = run(
        capsys, "which", "orderpkg.jit", "orderpkg.late", "--repo", repo, "-b", "vendor"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"orderpkg.jit: {trunk(scenario, 'orderpkg/jit.py')}  [trunk]"
    assert lines[1] == (
        f"  loads from trunk: {trunk(scenario, 'orderpkg/__init__.py')}:2 imports it before its "
        f"spec_path call (line 6), so {spec(scenario, 'orderpkg/jit.py')} never loads"
    )
    assert lines[2] == f"orderpkg.late: {spec(scenario, 'orderpkg/late.py')}  [backend vendor]"
    code, out, _ = run(
        capsys, "which", "orderpkg.jit", "--repo", repo, "-b", "vendor", "--format", "json"
    )
    (answer,) = json.loads(out)
    assert answer["file"] == trunk(scenario, "orderpkg/jit.py")
    assert answer["reason"].startswith("loads from trunk: ")


# --------------------------------------------------------------------------- 2. every import


def test_fts004_import_of_a_module_that_exists_nowhere_is_an_error_at_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts004_missing_module"
    compiler = spec(scenario, "modpkg/compiler/compiler.py")
    added = spec(scenario, "modpkg/added.py")
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS004") == [
        ("error", added, 5),
        ("error", compiler, 1),
        ("error", compiler, 2),
        ("error", compiler, 3),
    ]
    texts = [f["message"] for f in found if f["code"] == "FTS004"]
    assert "modpkg.gone" in texts[0]
    assert "modpkg.compiler.adjust_kernel_param" in texts[1] and "exists nowhere" in texts[1]
    assert "modpkg.common.backend" in texts[2]
    assert "modpkg.nowhere" in texts[3]
    assert code == 1
    real = imported_files(scenario, "modpkg.compiler.compiler")
    assert real["modpkg.compiler.compiler"].startswith("ModuleNotFoundError")


def test_fts004_follows_the_imports_of_the_lower_version_inherit_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts004_inherit_imports"
    code, found = findings(capsys, scenario)
    override = spec(scenario, "inhpkg/runtime.py")
    lower = trunk(scenario, "inhpkg/runtime.py")
    core = spec(scenario, "inhpkg/core.py")
    assert ("error", override, 3) in codes(found, "FTS004")
    text = message(found, "FTS004", override)
    assert lower in text and core in text and "'fast_path'" in text
    assert code == 1
    real = imported_files(scenario, "inhpkg.runtime")
    assert "fast_path" in real["inhpkg.runtime"]


def test_fts004_checks_the_hook_module_its_fragments_and_hook_function_bodies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts004_hook_imports"
    hooks = spec(scenario, "__init__.py")
    fragment = spec(scenario, "triton_frag.py")
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS004") == [
        ("error", hooks, 1),
        ("error", fragment, 1),
        ("error", fragment, 5),
    ]
    assert "'helper'" in message(found, "FTS004", hooks)
    texts = [f["message"] for f in found if f["path"] == fragment and f["code"] == "FTS004"]
    assert "hookimp.missing_mod" in texts[0] and "'gone'" in texts[1]
    assert code == 1


# --------------------------------------------------------------------------- 3. counterparts


def test_fts003_and_fts005_compare_overrides_inside_a_package_init_override_with_trunk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts003_inside_init_override"
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS003") == [("warning", spec(scenario, "cpkg/language/core.py"), 1)]
    assert codes(found, "FTS005") == [("warning", spec(scenario, "cpkg/language/semantic.py"), 1)]
    assert "sub" in message(found, "FTS005", spec(scenario, "cpkg/language/semantic.py"))
    assert code == 0


def test_diff_of_an_override_inside_a_package_init_override_is_against_trunk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts003_inside_init_override"
    code, out, _ = run(
        capsys, "diff", "cpkg.language.semantic", "--repo", str(CHECK / scenario), "-b", "vendor"
    )
    assert code == 0
    assert out.splitlines()[0] == f"--- {trunk(scenario, 'cpkg/language/semantic.py')}"
    assert "-    return 1" in out and "+    return 10" in out and "-def sub():" in out


# --------------------------------------------------------------------------- 4. namespace


def test_fts020_mirror_init_over_a_trunk_namespace_package_hides_its_portion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts020_namespace_shadowed"
    init = spec(scenario, "nspkg/_C/__init__.py")
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS020") == [("error", init, 1)]
    text = message(found, "FTS020", init)
    assert trunk(scenario, "nspkg/_C") in text and "native" in text and "data.txt" in text
    # Not an added module, and not reported twice.
    assert codes(found, "FTS008") == [] and codes(found, "FTS002") == []
    assert code == 1
    real = imported_files(scenario, "nspkg._C.native")
    assert real["nspkg._C.native"].startswith("ModuleNotFoundError")


# --------------------------------------------------------------------------- 5. dynamic hooks


def test_fts009_hooks_fetched_in_a_loop_over_a_module_level_list_count_as_called(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts009_dynamic_hooks"
    code, found = findings(capsys, scenario)
    warned = [f["message"] for f in found if f["code"] == "FTS009"]
    assert len(warned) == 1 and "'sortt'" in warned[0]
    assert code == 0


# --------------------------------------------------------------------------- 7. false positives


def test_fts005_skips_names_bound_only_under_main_and_module_level_loop_variables(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts005_incidental_names"
    override = spec(scenario, "incpkg/api.py")
    _, found = findings(capsys, scenario)
    assert codes(found, "FTS005") == [("warning", override, 1)]
    text = message(found, "FTS005", override)
    assert "real_api" in text
    assert "item" not in text and "main_only" not in text and "cli" not in text


def test_fts007_skips_reading_the_overrides_own_source_and_files_next_to_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts005_incidental_names"
    _, found = findings(capsys, scenario)
    # open(__file__) (line 8) reads its own source; table.json (line 11) is there.
    assert codes(found, "FTS007") == [
        ("warning", spec(scenario, "incpkg/api.py"), 10),
        ("warning", spec(scenario, "incpkg/api.py"), 12),
    ]


def test_fts010_file_with_conflict_markers_gets_no_fts004_for_names_imported_from_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts010_conflict_markers"
    code, found = findings(capsys, scenario)
    assert [f["code"] for f in found] == ["FTS010"]
    assert found[0]["path"] == spec(scenario, "confpkg/core.py")
    assert code == 1


# --------------------------------------------------------------------------- 6. silent passes


def test_fts021_whole_file_override_shadowed_by_a_higher_whole_file_override(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts021_shadowed_whole_file"
    low = spec(scenario, "shadowpkg/whole.py", backend="low")
    code, found = findings(capsys, scenario, backend="high,low")
    assert codes(found, "FTS021") == [("info", low, 1)]
    assert spec(scenario, "shadowpkg/whole.py", backend="high") in message(found, "FTS021", low)
    assert code == 0


def test_fts022_spec_or_default_is_a_warning_but_spec_func_or_default_is_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts022_spec_or_default"
    code, found = findings(capsys, scenario)
    assert codes(found, "FTS022") == [("warning", trunk(scenario, "orpkg/ops.py"), 9)]
    assert "spec_func('atomic_add')" in message(found, "FTS022", trunk(scenario, "orpkg/ops.py"))
    assert code == 0


def test_fts008_added_module_one_edit_away_from_a_trunk_module_suggests_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts008_close_to_trunk"
    _, found = findings(capsys, scenario)
    close = message(found, "FTS008", spec(scenario, "closepkg/runtime/jitt.py"))
    assert "did you mean closepkg.runtime.jit" in close
    other = message(found, "FTS008", spec(scenario, "closepkg/runtime/vendor_only.py"))
    assert "did you mean" not in other


def test_check_without_a_backend_checks_every_backend_of_the_repository_and_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "every_backend"
    code, out, err = run(capsys, "check", "--repo", str(repo), "--format", "json")
    found = json.loads(out)["findings"]
    assert [(f["code"], f["path"]) for f in found] == [
        ("FTS010", spec("every_backend", "allpkg/mod.py", backend="second"))
    ]
    assert "checking every backend of the repository: first, second" in err
    assert code == 1


def test_check_without_a_backend_and_no_spec_tree_exits_2_saying_nothing_was_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "check", "--repo", str(CHECK / "no_backend"))
    assert (code, out) == (2, "")
    assert "nothing was checked" in err and "cxx_only" in err


def test_check_from_a_subfolder_finds_the_repository_upward(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = "fts022_spec_or_default"
    monkeypatch.chdir(CHECK / scenario / "python" / "orpkg")
    code, out, _ = run(capsys, "check", "-b", "vendor", "--format", "json")
    found = json.loads(out)["findings"]
    assert [f["code"] for f in found] == ["FTS022"]
    assert code == 0
    assert os.getcwd() == str(CHECK / scenario / "python" / "orpkg")


def test_fts016_lock_and_drift_use_the_trunk_counterpart_inside_a_package_init_override(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(CHECK / "fts003_inside_init_override", repo)
    code, _, err = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0, err
    lock = json.loads((repo / "third_party/vendor/backend/spec/flagtree_spec.lock").read_text())
    assert "cpkg/language/semantic.py" in json.dumps(lock)
    semantic = repo / "python/cpkg/language/semantic.py"
    semantic.write_text(semantic.read_text() + "\n\ndef mul():\n    return 3\n")
    _, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json")
    drift = [f for f in json.loads(out)["findings"] if f["code"] == "FTS016"]
    assert [f["path"] for f in drift] == [
        str(repo / "third_party/vendor/backend/spec/cpkg/language/semantic.py")
    ]


def test_fts004_module_that_binds_names_on_itself_with_setattr_defines_every_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec_path = "from flagtree_spec import spec_path\nspec_path(__path__)\n"
    files = {
        "python/setpkg/__init__.py": spec_path,
        "python/setpkg/testing.py": (
            "import sys\n\n\ndef patch(hooks):\n    for n in hooks.names:\n"
            "        setattr(sys.modules[__name__], n, getattr(hooks, n))\n"
        ),
        "python/setpkg/plain.py": "X = 1\n",
        "third_party/vendor/backend/spec/setpkg/user.py": (
            "def f():\n    from setpkg.testing import bench_npu\n    from setpkg.plain import Y\n"
        ),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    _, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--format", "json")
    found = [f for f in json.loads(out)["findings"] if f["code"] == "FTS004"]
    assert [(f["line"], "'Y'" in f["message"]) for f in found] == [(3, True)]
