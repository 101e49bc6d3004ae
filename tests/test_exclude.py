"""spec_path(exclude=...), declaration excludes and FLAGTREE_SPEC_DISABLE.

Excluded modules, and whole sub-packages with everything below them, always
load from trunk, even when the mirror tree has a file or folder of that name.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES, SOURCE_PY, scenario

PY = FIXTURES / "exclude_repo" / "python"
TRUNK = PY / "expkg"
MIRROR = FIXTURES / "exclude_repo" / "third_party" / "mir" / "backend" / "spec" / "expkg"

WHERE = """
    import importlib, json
    out = {}
    for name in %r:
        try:
            out[name] = importlib.import_module(name).WHERE
        except ImportError as exc:
            out[name] = "ImportError: " + str(exc)
    print(json.dumps(out))
"""


def where(*names: str, path=PY, **env: str) -> dict:
    return scenario(WHERE % (list(names),), env={"FLAGTREE_BACKEND": "mir", **env}, path=[path])


def test_exclude_module_loads_from_trunk_although_mirror_has_the_file():
    out = where("expkg.skipped", "expkg.kept")
    assert out == {"expkg.skipped": "trunk", "expkg.kept": "mirror"}


def test_exclude_subpackage_loads_from_trunk_with_everything_below_it():
    out = where("expkg.subpkg", "expkg.subpkg.inner")
    assert out == {"expkg.subpkg": "trunk", "expkg.subpkg.inner": "trunk"}
    out = scenario(
        "import json, expkg.subpkg as s; print(json.dumps(list(s.__path__)))",
        env={"FLAGTREE_BACKEND": "mir"},
        path=[PY],
    )
    assert out == [str(TRUNK / "subpkg")]


def test_exclude_added_by_a_later_spec_path_call_on_the_same_list():
    out = where("expkg.later.late", "expkg.later.other")
    assert out == {"expkg.later.late": "trunk", "expkg.later.other": "mirror"}
    out = scenario(
        "import json, expkg.later as l; print(json.dumps([l.FIRST, l.SECOND]))",
        env={"FLAGTREE_BACKEND": "mir"},
        path=[PY],
    )
    # The second call adds nothing to the path, only the exclusion.
    assert out == [[str(MIRROR / "later")], [str(MIRROR / "later")]]


def test_exclude_module_that_exists_only_in_the_mirror_fails_to_import():
    (out,) = where("expkg.onlymirror").values()
    assert out.startswith("ImportError: ") and "loads from trunk only" in out


def test_exclude_namespace_subpackage_keeps_mirror_portion_out_even_after_cache_invalidation():
    out = scenario(
        """
        import importlib, json
        import expkg.nsdir.common as first
        importlib.invalidate_caches()   # recomputes the namespace path from the parent's
        try:
            import expkg.nsdir.mirror_only
            only = "imported"
        except ImportError:
            only = "ImportError"
        print(json.dumps([first.WHERE, only]))
        """,
        env={"FLAGTREE_BACKEND": "mir"},
        path=[PY],
    )
    assert out == ["trunk", "ImportError"]


def test_disable_names_a_module_and_it_loads_from_trunk():
    out = where("expkg.kept", "expkg.later.other", FLAGTREE_SPEC_DISABLE="expkg.kept")
    assert out == {"expkg.kept": "trunk", "expkg.later.other": "mirror"}


def test_disable_names_a_subpackage_and_everything_below_loads_from_trunk():
    out = where("expkg.pkg2", "expkg.pkg2.mod", FLAGTREE_SPEC_DISABLE="expkg.pkg2")
    assert out == {"expkg.pkg2": "trunk", "expkg.pkg2.mod": "trunk"}
    out = where("expkg.pkg2", "expkg.pkg2.mod")
    assert out == {"expkg.pkg2": "mirror", "expkg.pkg2.mod": "mirror"}


def test_disable_several_names_separated_by_commas():
    out = where(
        "expkg.kept", "expkg.later.other", FLAGTREE_SPEC_DISABLE=" expkg.kept , expkg.later "
    )
    assert out == {"expkg.kept": "trunk", "expkg.later.other": "trunk"}


def test_disable_in_a_package_that_excludes_nothing_itself():
    # fixpkg's spec_path calls pass no exclude=: the variable alone installs the finder.
    out = scenario(
        "import json, fixpkg.runtime.jit as j, fixpkg.tools.disasm as d; "
        "print(json.dumps([j.WHERE, '/third_party/alpha/' in d.__file__]))",
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_DISABLE": "fixpkg.runtime.jit"},
        path=[SOURCE_PY],
    )
    assert out == ["trunk", True]


def test_declaration_exclude_loads_module_and_subpackage_from_trunk():
    out = scenario(
        WHERE
        % (
            [
                "fixpkg.runtime.jit",
                "fixpkg.runtime.driver.cpu",
                "fixpkg.runtime.autotuner",
            ],
        ),
        env={"FLAGTREE_BACKEND": "excl"},
        path=[SOURCE_PY],
    )
    assert out == {
        "fixpkg.runtime.jit": "trunk",
        "fixpkg.runtime.driver.cpu": "trunk",
        "fixpkg.runtime.autotuner": "excl",
    }


@pytest.mark.parametrize("value", ["expkg..kept", "expkg/kept", "1expkg"])
def test_disable_with_an_invalid_name_is_config_error(value):
    out = scenario(
        """
        import json, flagtree_spec
        try:
            import expkg
        except flagtree_spec.SpecConfigError as exc:
            print(json.dumps(str(exc)))
        """,
        env={"FLAGTREE_BACKEND": "mir", "FLAGTREE_SPEC_DISABLE": value},
        path=[PY],
    )
    assert out.startswith("FLAGTREE_SPEC_DISABLE=") and "is not a dotted module name" in out


@pytest.mark.parametrize("bad", [["a-b"], ["../x"], [""], [3]])
def test_exclude_with_an_invalid_name_is_spec_error(bad):
    out = scenario(
        f"""
        import json, flagtree_spec
        try:
            flagtree_spec.spec_path([], name="expkg", exclude={bad!r})
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        env={"FLAGTREE_BACKEND": "mir"},
        path=[PY],
    )
    assert "is not a module name relative to 'expkg'" in out


@pytest.mark.parametrize("bad", [3, None])
def test_exclude_that_is_not_a_list_is_spec_error(import_state, bad):
    import flagtree_spec

    with pytest.raises(flagtree_spec.SpecError, match=r"give a list of names"):
        flagtree_spec.spec_path([], name="expkg", exclude=bad)


def test_disable_is_read_once_with_the_state_until_activate():
    out = scenario(
        """
        import importlib, json, os, expkg
        from flagtree_spec import activate
        os.environ["FLAGTREE_SPEC_DISABLE"] = "expkg.kept"
        late = importlib.import_module("expkg.kept").WHERE
        os.environ["FLAGTREE_SPEC_DISABLE"] = "bad..name"
        other = importlib.import_module("expkg.later.other").WHERE
        os.environ["FLAGTREE_SPEC_DISABLE"] = "expkg.pkg2"
        activate("mir")
        print(json.dumps([late, other, importlib.import_module("expkg.pkg2.mod").WHERE]))
        """,
        env={"FLAGTREE_BACKEND": "mir"},
        path=[PY],
    )
    assert out == ["mirror", "mirror", "trunk"]


def test_exclude_finder_sits_behind_auto_mode_so_auto_mode_records_excluded_packages():
    out = scenario(
        """
        import json, sys
        import flagtree_spec
        from flagtree_spec import _auto, _path
        flagtree_spec.install("fixpkg")
        _path.ExcludeFinder.disable()
        _path.ExcludeFinder.enable()          # an exclusion appears after install()
        order = [getattr(f, "__name__", type(f).__name__) for f in sys.meta_path][:2]
        import fixpkg.runtime.driver.cpu as cpu
        print(json.dumps([order, cpu.WHERE, "fixpkg.runtime.driver" in _path.packages()]))
        """,
        env={"FLAGTREE_BACKEND": "excl"},
    )
    assert out == [["AutoFinder", "ExcludeFinder"], "trunk", True]


PROBE = """
import importlib, importlib.util, json, flagtree_spec
if {auto}:
    flagtree_spec.install("{root}")
import {root}
probe = importlib.util.find_spec("{root}.{name}")
try:
    importlib.import_module("{root}.{name}")
except ModuleNotFoundError as exc:
    error = str(exc)
print(json.dumps([probe, error]))
"""
UNMODIFIED = FIXTURES / "unmodified_backends"


@pytest.mark.parametrize(
    ("root", "name", "auto", "env", "path"),
    [
        ("expkg", "onlymirror", False, {"FLAGTREE_BACKEND": "mir"}, PY),
        (
            "unmodpkg",
            "added",
            True,
            {
                "FLAGTREE_BACKEND": "zeta",
                "FLAGTREE_SOURCE_ROOT": str(UNMODIFIED),
                "FLAGTREE_SPEC_DISABLE": "unmodpkg.added",
            },
            FIXTURES / "unmodified",
        ),
    ],
    ids=["spec_path-exclude", "auto-disable"],
)
def test_find_spec_of_an_excluded_module_that_only_the_mirror_has_is_none(
    root, name, auto, env, path
):
    out = scenario(PROBE.format(root=root, name=name, auto=auto), env=env, path=[path])
    # A probe finds nothing, as for any module that does not exist; an import says why.
    assert out[0] is None
    assert "excluded from the backend's mirror tree" in out[1]
