"""spec_path(path, *, name=None, exclude=())."""

from __future__ import annotations

import textwrap

import pytest
from conftest import FIXTURES, SOURCE, SOURCE_PY, run_python, scenario

ALPHA = str(SOURCE / "third_party" / "alpha" / "backend" / "spec" / "fixpkg")
BETA = str(SOURCE / "third_party" / "beta" / "backend" / "spec" / "fixpkg")
TRUNK = str(SOURCE_PY / "fixpkg")

REPORT = """
    import json, fixpkg.runtime.jit as jit, fixpkg.runtime as runtime
    print(json.dumps({"where": jit.WHERE, "file": jit.__file__, "path": list(runtime.__path__)}))
"""


def test_mirror_directory_first_then_trunk():
    out = scenario(REPORT, env={"FLAGTREE_BACKEND": "alpha"})
    assert out["where"] == "alpha"
    assert out["file"] == f"{ALPHA}/runtime/jit.py"
    assert out["path"] == [f"{ALPHA}/runtime", f"{TRUNK}/runtime"]


def test_stack_a_overrides_b_overrides_trunk():
    out = scenario(
        """
        import json, fixpkg.runtime as r, fixpkg.runtime.jit as jit
        import fixpkg.runtime.autotuner as at, fixpkg.runtime.driver.cpu as cpu
        print(json.dumps([jit.WHERE, at.WHERE, cpu.WHERE, list(r.__path__)]))
        """,
        env={"FLAGTREE_BACKEND": "beta,alpha"},
    )
    assert out[:3] == ["beta", "beta", "trunk"]
    assert out[3] == [f"{BETA}/runtime", f"{ALPHA}/runtime", f"{TRUNK}/runtime"]
    out = scenario(REPORT, env={"FLAGTREE_BACKEND": "alpha,beta"})
    assert out["where"] == "alpha"


def test_no_backend_leaves_path_unchanged():
    out = scenario(REPORT)
    assert out == {
        "where": "trunk",
        "file": f"{TRUNK}/runtime/jit.py",
        "path": [f"{TRUNK}/runtime"],
    }


# After watch(), records [call, file name] in ``calls`` for each file-system
# call that the library itself makes (not a coverage tracer); scenarios append
# their own code.
SPY = """
import builtins, json, os, sys
calls = []
def spy(name, real):
    def wrapper(*a, **k):
        files, frame = [], sys._getframe(1)
        while frame is not None:
            files.append(frame.f_code.co_filename)
            frame = frame.f_back
        if any("/flagtree_spec/" in f for f in files) and not any(
            "/coverage/" in f for f in files
        ):
            calls.append([name, os.path.basename(str(a[0])) if a else ""])
        return real(*a, **k)
    return wrapper
def watch():
    for name in ("stat", "lstat", "listdir", "scandir"):
        setattr(os, name, spy(name, getattr(os, name)))
    builtins.open = spy("open", builtins.open)
"""


@pytest.mark.parametrize("backend", ["", "alpha"])
def test_no_backend_spec_path_touches_no_file_system(backend):
    out = scenario(
        SPY
        + textwrap.dedent(
            """
        import fixpkg
        from flagtree_spec import spec_path
        watch()
        path = [os.path.join(fixpkg.__path__[0], "runtime")]
        added = spec_path(path, name="fixpkg.runtime")
        print(json.dumps({"calls": calls, "added": added}))
        """
        ),
        env={"FLAGTREE_BACKEND": backend},
    )
    if backend:  # the spy does see the library's stat calls when there is work to do
        assert "stat" in [c[0] for c in out["calls"]] and out["added"] == [f"{ALPHA}/runtime"]
    else:
        assert out == {"calls": [], "added": []}


def test_spec_path_is_idempotent_per_list_object():
    out = scenario(
        """
        import json, fixpkg.runtime as r
        from flagtree_spec import spec_path
        before = list(r.__path__)
        again = spec_path(r.__path__)
        print(json.dumps([before, list(r.__path__), again]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out[0] == out[1] == [f"{ALPHA}/runtime", f"{TRUNK}/runtime"]
    assert out[2] == [f"{ALPHA}/runtime"]


def test_reload_creates_new_list_and_overlay_is_applied_again():
    out = scenario(
        """
        import importlib, json, fixpkg.runtime as r
        old = r.__path__
        importlib.reload(r)
        import fixpkg.runtime.autotuner as at
        print(json.dumps([r.__path__ is old, list(r.__path__), at.WHERE]))
        """,
        env={"FLAGTREE_BACKEND": "beta"},
    )
    assert out == [False, [f"{BETA}/runtime", f"{TRUNK}/runtime"], "beta"]


def test_spec_submodule_search_locations_updated_when_another_object():
    out = scenario(
        """
        import json, fixpkg.runtime as r
        print(json.dumps([r.__spec__.submodule_search_locations is r.__path__,
                          list(r.__spec__.submodule_search_locations)]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    # CPython shares the list; either way the spec must show the overlay.
    assert out[1] == [f"{ALPHA}/runtime", f"{TRUNK}/runtime"]


def test_package_name_found_through_forwarding_wrapper():
    out = scenario(
        """
        import json, fwpkg, fwpkg.mod as mod
        print(json.dumps([mod.WHERE, list(fwpkg.__path__)]))
        """,
        path=[FIXTURES / "forwarding"],
        env={"FLAGTREE_SPEC_PATH": str(FIXTURES / "forwarding" / "spec")},
    )
    assert out == [
        "mirror",
        [str(FIXTURES / "forwarding/spec/fwpkg"), str(FIXTURES / "forwarding/fwpkg")],
    ]


def test_package_name_that_cannot_be_found_is_spec_error():
    out = scenario(
        """
        import json
        from flagtree_spec import spec_path, SpecError
        try:
            spec_path(["/nowhere"])
        except SpecError as exc:
            print(json.dumps(str(exc)))
        """
    )
    assert "pass name='package.name'" in out


def test_namespace_subpackage_gets_mirror_first_without_a_call():
    out = scenario(
        """
        import json, fixpkg.tools.disasm as d, fixpkg.tools as t
        print(json.dumps([d.WHERE, list(t.__path__)]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == ["alpha", [f"{ALPHA}/tools", f"{TRUNK}/tools"]]


def test_package_that_does_not_call_spec_path_is_not_specialised():
    out = scenario(
        "import json, fixpkg.plain.mod as m; print(json.dumps(m.WHERE))",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == "trunk"


def test_package_init_override_keeps_trunk_modules_importable():
    out = scenario(
        """
        import json, fixpkg.compiler as c, fixpkg.compiler.passes as p
        import fixpkg.compiler.code_generator as g
        print(json.dumps([c.WHERE, c.__file__, p.WHERE, g.WHERE, list(c.__path__)]))
        """,
        env={"FLAGTREE_BACKEND": "beta"},
    )
    assert out == [
        "beta",
        f"{BETA}/compiler/__init__.py",
        "trunk",
        "trunk",
        [f"{BETA}/compiler", f"{TRUNK}/compiler"],
    ]


def test_added_module_without_trunk_counterpart_loads():
    out = scenario(
        "import json, fixpkg.language.extra as e; print(json.dumps(e.WHERE))",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == "alpha"
    run_python(
        """
        try:
            import fixpkg.language.extra
        except ModuleNotFoundError:
            pass
        else:
            raise SystemExit("an added module must not load without its backend")
        """
    )


def test_top_level_namespace_package_is_spec_error():
    out = scenario(
        """
        import json, nspkg
        from flagtree_spec import spec_path, SpecError
        try:
            spec_path(nspkg.__path__, name="nspkg")
        except SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        path=[FIXTURES / "namespace_root"],
    )
    assert "namespace package" in out and "add an __init__.py" in out


@pytest.mark.parametrize("bad", ["a-b", "1x", "pkg..sub", ""])
def test_invalid_name_argument_is_spec_error(bad):
    from flagtree_spec import SpecError, spec_path

    with pytest.raises(SpecError, match="dotted package name"):
        spec_path([], name=bad)


def test_exclude_as_single_string_is_spec_error():
    from flagtree_spec import SpecError, spec_path

    with pytest.raises(SpecError, match="give a list of names"):
        spec_path([], name="fixpkg", exclude="runtime")


def test_first_resolution_without_backend_only_looks_for_markers():
    out = scenario(
        SPY
        + textwrap.dedent(
            """
        import flagtree_spec
        watch()
        import fixpkg
        print(json.dumps(calls))
        """
        )
    )
    assert out == [["stat", "FLAGTREE_BACKEND"], ["stat", "_flagtree_backend.py"]]
