"""Auto mode, install(root) and uninstall(root).

The package ``unmodpkg`` (fixtures/unmodified) never calls ``spec_path``;
backend ``zeta`` lives in a source-layout tree found via FLAGTREE_SOURCE_ROOT.
Each scenario runs in a fresh interpreter.
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import FIXTURES, scenario

SRC = FIXTURES / "unmodified"
TRUNK = SRC / "unmodpkg"
BACKENDS = FIXTURES / "unmodified_backends"
ZETA = BACKENDS / "third_party" / "zeta" / "backend" / "spec" / "unmodpkg"
ENV = {"FLAGTREE_SOURCE_ROOT": str(BACKENDS), "FLAGTREE_BACKEND": "zeta"}


def auto(code: str, *, env=None, path=(SRC,)) -> object:
    return scenario(
        "import json, sys, importlib, flagtree_spec\n" + textwrap.dedent(code),
        env={**ENV, **(env or {})},
        path=list(path),
    )


def test_auto_install_specialises_an_unmodified_package_with_zero_edits():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg, unmodpkg.runtime, unmodpkg.runtime.jit as jit, unmodpkg.added as added
        import unmodpkg.ns.item as item
        print(json.dumps({"jit": jit.WHERE, "added": added.WHERE, "item": item.WHERE,
                          "root": list(unmodpkg.__path__),
                          "runtime": list(unmodpkg.runtime.__path__),
                          "spec": unmodpkg.runtime.__spec__.submodule_search_locations
                                  is unmodpkg.runtime.__path__}))
        """
    )
    assert out == {
        "jit": "zeta",
        "added": "zeta",
        "item": "zeta",  # a namespace sub-package follows its specialised parent
        "root": [str(ZETA), str(TRUNK)],
        "runtime": [str(ZETA / "runtime"), str(TRUNK / "runtime")],
        "spec": True,
    }


def test_auto_without_install_the_unmodified_package_stays_trunk():
    out = auto("import unmodpkg.runtime.jit as j; print(json.dumps(j.WHERE))")
    assert out == "trunk"


def test_auto_path_is_specialised_before_the_package_init_runs(tmp_path):
    pkg = tmp_path / "earlypkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import json\nPATH_AT_INIT = list(__path__)\n")
    (pkg / "sub" / "__init__.py").write_text("PATH_AT_INIT = list(__path__)\n")
    spec_root = tmp_path / "spec"
    (spec_root / "earlypkg" / "sub").mkdir(parents=True)
    out = auto(
        f"""
        flagtree_spec.activate(spec_roots=[{str(spec_root)!r}])
        flagtree_spec.install("earlypkg")
        import earlypkg.sub
        print(json.dumps([earlypkg.PATH_AT_INIT, earlypkg.sub.PATH_AT_INIT]))
        """,
        path=[tmp_path],
    )
    assert out == [
        [str(spec_root / "earlypkg"), str(pkg)],
        [str(spec_root / "earlypkg" / "sub"), str(pkg / "sub")],
    ]


def test_auto_inherit_and_trunk_path_work_in_an_unmodified_package():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg.core as core, unmodpkg.reader as reader
        print(json.dumps([core.describe(), core.__inherits__, reader.INFO,
                          flagtree_spec.trunk_path("unmodpkg.runtime")]))
        """
    )
    assert out == ["core:zeta", str(TRUNK / "core.py"), "trunk data", str(TRUNK / "runtime")]


def test_auto_hooks_of_the_backend_are_called():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg
        print(json.dumps(flagtree_spec.for_root("unmodpkg").spec("backend_name")))
        """
    )
    assert out == "zeta"


def test_auto_activate_rewrites_packages_auto_mode_specialised():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime as r
        paths = [list(r.__path__)]
        flagtree_spec.activate(None)
        paths.append(list(r.__path__))
        flagtree_spec.activate("zeta")
        paths.append(list(r.__path__))
        print(json.dumps(paths))
        """
    )
    special = [str(ZETA / "runtime"), str(TRUNK / "runtime")]
    assert out == [special, [str(TRUNK / "runtime")], special]


def test_auto_tracks_the_imported_module_not_a_probe_spec_made_before_import():
    out = auto(
        """
        import importlib.util
        flagtree_spec.install("unmodpkg")
        import unmodpkg
        probe = importlib.util.find_spec("unmodpkg.runtime")   # a throwaway spec
        import unmodpkg.runtime as r
        flagtree_spec.activate(None)
        print(json.dumps([list(r.__path__), r.__path__ is probe.submodule_search_locations]))
        """
    )
    assert out == [[str(TRUNK / "runtime")], False]


def test_auto_tracks_the_imported_module_not_a_probe_spec_made_after_import():
    out = auto(
        """
        from flagtree_spec._auto import AutoFinder
        flagtree_spec.install("unmodpkg")
        import unmodpkg, unmodpkg.runtime as r
        probe = AutoFinder.find_spec("unmodpkg.runtime", unmodpkg.__path__)
        flagtree_spec.activate(None)
        print(json.dumps([list(r.__path__), list(probe.submodule_search_locations)]))
        """
    )
    # The live module's path was rewritten; the probe's list was left alone.
    assert out == [[str(TRUNK / "runtime")], [str(ZETA / "runtime"), str(TRUNK / "runtime")]]


def test_auto_reload_applies_the_overlay_to_the_new_path_list():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime as r
        old = r.__path__
        importlib.reload(r)
        flagtree_spec.activate(None)
        print(json.dumps([r.__path__ is old, list(r.__path__)]))
        """
    )
    assert out == [False, [str(TRUNK / "runtime")]]


def test_auto_asks_the_rest_of_meta_path_so_editable_finders_keep_working():
    # Like setuptools' editable finder: the package is not on sys.path at all.
    out = auto(
        f"""
        import importlib.util
        class EditableFinder:
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name != "unmodpkg":
                    return None
                return importlib.util.spec_from_file_location(
                    name, {str(TRUNK / "__init__.py")!r},
                    submodule_search_locations=[{str(TRUNK)!r}])
        sys.meta_path.append(EditableFinder)
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime.jit as jit
        print(json.dumps([jit.WHERE, list(sys.modules["unmodpkg"].__path__)]))
        """,
        path=[],
    )
    assert out == ["zeta", [str(ZETA), str(TRUNK)]]


def test_auto_install_specialises_packages_imported_before_it():
    out = auto(
        """
        import unmodpkg.runtime as r
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime.jit as jit
        print(json.dumps([jit.WHERE, list(r.__path__)]))
        """
    )
    assert out == ["zeta", [str(ZETA / "runtime"), str(TRUNK / "runtime")]]


def test_auto_install_twice_adds_one_finder():
    out = auto(
        """
        from flagtree_spec._auto import AutoFinder
        flagtree_spec.install("unmodpkg")
        flagtree_spec.install("unmodpkg")
        print(json.dumps(sys.meta_path.count(AutoFinder)))
        """
    )
    assert out == 1


def test_auto_uninstall_restores_finders_and_removes_added_path_entries():
    out = auto(
        """
        before = list(sys.meta_path)
        flagtree_spec.install("unmodpkg")
        import unmodpkg, unmodpkg.runtime as r, unmodpkg.runtime.jit as jit
        flagtree_spec.uninstall("unmodpkg")
        import unmodpkg.runtime.autotuner as at
        print(json.dumps({"finders": sys.meta_path == before,
                          "root": list(unmodpkg.__path__), "runtime": list(r.__path__),
                          "kept": sys.modules["unmodpkg.runtime.jit"].WHERE,
                          "later": at.WHERE}))
        """
    )
    assert out == {
        "finders": True,
        "root": [str(TRUNK)],
        "runtime": [str(TRUNK / "runtime")],
        "kept": "zeta",  # modules already imported stay
        "later": "trunk",
    }


def test_auto_uninstall_keeps_packages_that_call_spec_path_themselves():
    out = auto(
        """
        flagtree_spec.install("fixpkg")
        import fixpkg.runtime as r
        flagtree_spec.uninstall("fixpkg")
        print(json.dumps(len(r.__path__)))
        """,
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SOURCE_ROOT": ""},
        path=[FIXTURES / "source_repo" / "python"],
    )
    assert out == 2


def test_auto_uninstall_of_one_root_keeps_the_finder_for_the_others():
    out = auto(
        """
        from flagtree_spec._auto import AutoFinder, installed
        flagtree_spec.install("unmodpkg")
        flagtree_spec.install("otherpkg")
        flagtree_spec.uninstall("otherpkg")
        print(json.dumps([AutoFinder in sys.meta_path, installed()]))
        """
    )
    assert out == [True, ["unmodpkg"]]


def test_auto_disable_and_exclusions_still_load_from_trunk():
    out = auto(
        """
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime.jit as jit, unmodpkg.runtime.autotuner as at
        print(json.dumps([jit.WHERE, at.WHERE]))
        """,
        env={"FLAGTREE_SPEC_DISABLE": "unmodpkg.runtime.jit"},
    )
    assert out == ["trunk", "zeta"]


def test_auto_top_level_namespace_package_is_spec_error():
    out = auto(
        """
        flagtree_spec.install("nspkg")
        try:
            import nspkg.mod
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        path=[FIXTURES / "namespace_root"],
    )
    assert "namespace package" in out and "not supported" in out


@pytest.mark.parametrize("bad", ["'a.b'", "''", "3", "'1x'"])
def test_auto_install_of_a_name_that_is_not_a_root_package_is_spec_error(bad):
    out = auto(
        f"""
        try:
            flagtree_spec.install({bad})
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """
    )
    assert "give a top-level package name" in out


def test_auto_start_from_environment_reports_a_bad_value_and_starts_nothing():
    proc_out = auto(
        """
        from flagtree_spec._auto import start_from_environment
        print(json.dumps([start_from_environment(), "AutoFinder" in repr(sys.meta_path)]))
        """,
        env={"FLAGTREE_SPEC_AUTO": "unmodpkg.runtime"},
    )
    assert proc_out == [[], False]


def test_auto_install_that_fails_leaves_nothing_installed():
    out = auto(
        """
        import os, unmodpkg
        os.environ["FLAGTREE_BACKEND"] = "../x"
        try:
            flagtree_spec.install("unmodpkg")
        except flagtree_spec.SpecConfigError as exc:
            error = str(exc)
        from flagtree_spec import _auto, _path
        print(json.dumps([error.startswith("FLAGTREE_BACKEND="), _auto.installed(),
                          "AutoFinder" in repr(sys.meta_path), sorted(_path.packages())]))
        """,
        env={"FLAGTREE_BACKEND": ""},
    )
    assert out == [True, [], False, []]


LAZY = FIXTURES / "lazy_module"
STRESS_SITE = FIXTURES / "stress_repo" / "site"


def test_install_reads_only_the_root_packages_modules_never_a_lazy_module():
    """install() must not execute an unrelated module made by importlib.util.LazyLoader."""
    out = scenario(
        """
        import importlib.util, json, sys
        spec = importlib.util.find_spec("lazy_victim")
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules["lazy_victim"] = module
        spec.loader.exec_module(module)
        import autopkg.p0
        from flagtree_spec import activate, active, install, spec_path
        install("autopkg")
        active("autopkg")
        activate("one")
        import autopkg.p1.m
        print(json.dumps([getattr(sys, "_lazy_runs", []), autopkg.p1.m.WHERE]))
        """,
        path=[LAZY, STRESS_SITE],
    )
    assert out == [[], "one"]


def test_install_under_warnings_as_errors_leaves_the_misspelled_backend_error_to_the_import():
    """install() resolves the root's state early; a SpecWarning raised there as an error
    (-W error) is not swallowed: the root's import raises it, once, as without install()."""
    out = auto(
        """
        import warnings
        warnings.simplefilter("error")
        flagtree_spec.install("unmodpkg")
        try:
            import unmodpkg
        except flagtree_spec.SpecWarning as exc:
            caught = str(exc)
        else:
            caught = None
        import unmodpkg  # one warning per process: the second import goes on
        print(json.dumps([caught, flagtree_spec.active("unmodpkg").backends]))
        """,
        env={"FLAGTREE_BACKEND": "zetaa"},
    )
    assert out[0] is not None and "did you mean 'zeta'?" in out[0], out
    assert out[1] == ["zetaa"]


LAZY_SUBPACKAGE = """
import importlib.util, json, sys
import lazypkg


def lazy(name):
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sub, mod = lazy("lazypkg.sub"), lazy("lazypkg.lazymod")
import flagtree_spec
from flagtree_spec._child import loaded_files
flagtree_spec.install("lazypkg")
runs = [list(getattr(sys, "_lazy_runs", []))]
flagtree_spec.active("lazypkg")
loaded_files(["lazypkg"])
runs.append(list(getattr(sys, "_lazy_runs", [])))
print(json.dumps([runs, sub.LEAF, sys._lazy_runs]))
"""


def test_install_does_not_execute_a_lazy_sub_package_before_its_path_is_extended():
    out = scenario(
        LAZY_SUBPACKAGE,
        path=[FIXTURES / "lazy_subpackage" / "site"],
        env={"FLAGTREE_BACKEND": "b"},
    )
    # Neither install() nor the read-only active() and loaded-files scan ran either module;
    # the sub-package ran on first use, with the mirror first on its path.
    assert out == [[[], []], "b", ["lazypkg.sub"]]
