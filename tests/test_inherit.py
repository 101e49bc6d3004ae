"""inherit(globals()) in an override."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import py_compile
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, scenario

REPO = FIXTURES / "inherit_repo"
PY = REPO / "python"
TRUNK = PY / "inhpkg"
LOW = REPO / "third_party" / "low" / "backend" / "spec" / "inhpkg"
MID = REPO / "third_party" / "mid" / "backend" / "spec" / "inhpkg"
TOP = REPO / "third_party" / "top" / "backend" / "spec" / "inhpkg"

CORE = """
    import json, inhpkg.core as c
    print(json.dumps({
        "api": c.api(), "helper": c.helper(), "file": c.__file__, "cached": c.__cached__,
        "inherits": c.__inherits__, "loaded_from": c.LOADED_FROM,
        "loaded_cached": c.LOADED_CACHED, "doc": c.__doc__, "origin": c.ORIGIN,
        "file_when_called": c.file_when_called(), "low_saw": c.LOW_SAW_FILE,
    }))
"""


def run(code: str, backend: str, *, path: Path = PY, **env: str) -> dict:
    return scenario(code, env={"FLAGTREE_BACKEND": backend, **env}, path=[path])


def test_inherit_trunk_functions_call_the_override_through_globals():
    out = run(CORE, "low")
    assert out["helper"] == "low"
    # api() is the trunk's; it calls helper() by global name and gets the override.
    assert out["api"] == "low+api"


def test_inherit_file_is_lower_during_execution_and_override_after():
    out = run(CORE, "low")
    assert out["loaded_from"] == str(TRUNK / "core.py")
    assert out["loaded_cached"] == importlib.util.cache_from_source(str(TRUNK / "core.py"))
    assert out["file"] == str(LOW / "core.py")
    assert out["cached"] == importlib.util.cache_from_source(str(LOW / "core.py"))
    # The override's own code after the call sees its own file again.
    assert out["low_saw"] == str(LOW / "core.py")


def test_inherit_records_lower_file_in_dunder_inherits():
    assert run(CORE, "low")["inherits"] == str(TRUNK / "core.py")


def test_inherit_trunk_function_reading_file_when_called_sees_override_path():
    # A documented limit (docs/inherit.md): module globals are the override's.
    assert run(CORE, "low")["file_when_called"] == str(LOW / "core.py")


def test_inherit_override_keeps_its_own_docstring():
    assert run(CORE, "low")["doc"] == "Backend low's core."


def test_inherit_override_without_docstring_takes_lower_docstring():
    out = run("import json, inhpkg.nodoc as m; print(json.dumps([m.__doc__, m.VALUE]))", "low")
    assert out == ["Trunk docstring of nodoc.", "low"]


def test_inherit_chains_through_three_levels_of_a_stack():
    out = run(CORE, "top,mid,low")
    assert out["helper"] == "top>mid>low"
    assert out["api"] == "top>mid>low+api"
    assert out["file"] == str(TOP / "core.py")
    assert out["inherits"] == str(MID / "core.py")  # the next lower version only
    assert out["loaded_from"] == str(TRUNK / "core.py")
    assert out["low_saw"] == str(LOW / "core.py")
    assert out["doc"] == "Backend top's core."


def test_inherit_takes_next_backend_in_stack_not_trunk():
    out = run(CORE, "mid,low")
    assert out["helper"] == "mid>low"
    assert out["inherits"] == str(LOW / "core.py")


def test_inherit_package_init_override_runs_trunk_init_and_its_spec_path():
    out = run(
        """
        import json, inhpkg.sub as s, inhpkg.sub.leaf as leaf
        print(json.dumps({"path": list(s.__path__), "sub": s.SUB, "trunk_only": s.TRUNK_ONLY,
                          "doc": s.__doc__, "inherits": s.__inherits__, "file": s.__file__,
                          "leaf": leaf.__file__}))
        """,
        "low",
    )
    assert out["sub"] == "low"
    assert out["trunk_only"] is True
    assert out["doc"] == "Backend low's sub package."
    assert out["file"] == str(LOW / "sub" / "__init__.py")
    assert out["inherits"] == str(TRUNK / "sub" / "__init__.py")
    # The trunk __init__'s spec_path(__path__) ran in the override's namespace.
    assert out["path"] == [str(LOW / "sub"), str(TRUNK / "sub")]
    assert out["leaf"] == str(TRUNK / "sub" / "leaf.py")


def test_inherit_getsource_of_a_trunk_function_shows_trunk_source():
    out = run(
        "import inspect, json, inhpkg.core as c; print(json.dumps(inspect.getsource(c.api)))",
        "low",
    )
    assert out == 'def api():\n    return helper() + "+api"\n'


def test_inherit_missing_lower_version_is_spec_error():
    out = run(
        """
        import json, flagtree_spec
        try:
            import inhpkg.added
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert "has no lower version" in out and str(LOW / "added.py") in out


def test_inherit_in_package_init_override_without_lower_init_explains_mirror_init_files():
    # Trunk inhpkg.nsdir is a namespace package; the mirror folder holds an __init__.py.
    out = run(
        """
        import json, flagtree_spec
        try:
            import inhpkg.nsdir
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert str(LOW / "nsdir" / "__init__.py") in out
    assert "is a package-init override (a mirror folder's __init__.py replaces" in out
    assert "A mirror folder needs no __init__.py: delete this file" in out


@pytest.mark.parametrize(
    ("module", "override", "lower"),
    [("kindmod", "package", "module"), ("kindpkg", "module", "package")],
)
def test_inherit_lower_version_of_another_kind_is_spec_error(module, override, lower):
    out = run(
        f"""
        import json, flagtree_spec
        try:
            import inhpkg.{module}
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert f"this override is a {override}" in out
    assert f"the lower version is a {lower}" in out


def _copy_repo(tmp_path: Path) -> Path:
    shutil.copytree(REPO, tmp_path / "repo", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "repo"


def test_inherit_lower_extension_module_is_spec_error(tmp_path):
    repo = _copy_repo(tmp_path)
    trunk = repo / "python" / "inhpkg"
    (trunk / "core.py").unlink()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (trunk / f"core{suffix}").write_bytes(b"not really an extension")
    out = run(
        """
        import json, flagtree_spec
        try:
            import inhpkg.core
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
        path=repo / "python",
    )
    assert "is an extension module" in out and f"core{suffix}" in out


def test_inherit_cycle_through_a_symlinked_mirror_is_spec_error(tmp_path):
    repo = _copy_repo(tmp_path)
    trunk_core = repo / "python" / "inhpkg" / "core.py"
    trunk_core.write_text("from flagtree_spec import inherit\ninherit(globals())\n")
    low_core = repo / "third_party" / "low" / "backend" / "spec" / "inhpkg" / "core.py"
    low_core.unlink()
    low_core.symlink_to(trunk_core)
    out = run(
        """
        import json, flagtree_spec
        try:
            import inhpkg.core
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
        path=repo / "python",
    )
    assert "forms a cycle" in out and str(trunk_core) in out


def test_inherit_from_trunk_module_itself_is_spec_error():
    out = run(
        """
        import json, flagtree_spec
        import inhpkg.core as c
        try:
            flagtree_spec.inherit({"__name__": "inhpkg.core", "__file__": c.__inherits__})
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert "has no lower version" in out


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        ("[]", "needs the module's namespace"),
        ("{'__name__': '__main__'}", "imported from a file"),
        ("{'__name__': 'top', '__file__': '/x/top.py'}", "not inside a package"),
        ("{'__name__': 'nowhere.mod', '__file__': '/x/mod.py'}", "is not imported"),
    ],
)
def test_inherit_outside_an_override_is_spec_error(namespace, message):
    out = run(
        f"""
        import json, flagtree_spec
        try:
            flagtree_spec.inherit({namespace})
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert message in out


def test_inherit_runs_lower_version_from_cached_bytecode(tmp_path):
    repo = _copy_repo(tmp_path)
    trunk_core = repo / "python" / "inhpkg" / "core.py"
    # Bytecode that differs from the source, marked never to be checked against it:
    # only a loader that uses __pycache__ runs it.
    variant = tmp_path / "variant.py"
    variant.write_text(trunk_core.read_text().replace('ORIGIN = "source"', 'ORIGIN = "pycache"'))
    py_compile.compile(
        str(variant),
        cfile=importlib.util.cache_from_source(str(trunk_core)),
        dfile=str(trunk_core),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    assert run(CORE, "low", path=repo / "python")["origin"] == "pycache"


def test_inherit_writes_lower_bytecode_cache_when_allowed(tmp_path):
    repo = _copy_repo(tmp_path)
    trunk_core = repo / "python" / "inhpkg" / "core.py"
    cached = Path(importlib.util.cache_from_source(str(trunk_core)))
    assert not cached.exists()
    # The environment of these tests may set PYTHONDONTWRITEBYTECODE; unset it here.
    out = scenario(
        CORE,
        env={"FLAGTREE_BACKEND": "low", "PYTHONDONTWRITEBYTECODE": ""},
        path=[repo / "python"],
    )
    assert out["origin"] == "source"
    assert cached.exists()


def test_inherit_finds_the_override_through_a_symlink_to_its_file(tmp_path):
    link = tmp_path / "core_link.py"
    link.symlink_to(LOW / "core.py")
    out = run(
        f"""
        import json, flagtree_spec, inhpkg
        ns = {{"__name__": "inhpkg.core", "__file__": {str(link)!r}}}
        lower = flagtree_spec.inherit(ns)
        print(json.dumps([lower, ns["__file__"], ns["helper"]()]))
        """,
        "low",
    )
    assert out == [str(TRUNK / "core.py"), str(link), "trunk"]


def test_inherit_from_a_file_that_is_no_version_on_the_path_is_spec_error(tmp_path):
    stray = tmp_path / "core.py"
    stray.write_text("")
    out = run(
        f"""
        import json, flagtree_spec, inhpkg
        try:
            flagtree_spec.inherit({{"__name__": "inhpkg.core", "__file__": {str(stray)!r}}})
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        "low",
    )
    assert "is not a version of inhpkg.core on inhpkg.__path__" in out
