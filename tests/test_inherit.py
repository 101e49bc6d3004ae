"""inherit(globals()) in an override."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, LIBRARY, NEUTRAL, clean_env, run_python, scenario

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
        "spec_origin": c.__spec__.origin, "spec_name": c.__spec__.name,
    }))
"""


def run(code: str, backend: str, *, path: Path = PY, **env: str) -> dict:
    return scenario(code, env={"FLAGTREE_BACKEND": backend, **env}, path=[path])


def test_inherit_trunk_functions_call_the_override_through_globals():
    out = run(CORE, "low")
    assert out["helper"] == "low"
    # api() is the trunk's; it calls helper() by global name and gets the override.
    assert out["api"] == "low+api"


def test_inherit_file_and_cached_are_the_lower_version_during_and_after_the_call():
    out = run(CORE, "low")
    assert out["loaded_from"] == str(TRUNK / "core.py")
    assert out["loaded_cached"] == importlib.util.cache_from_source(str(TRUNK / "core.py"))
    assert out["file"] == str(TRUNK / "core.py")
    assert out["cached"] == importlib.util.cache_from_source(str(TRUNK / "core.py"))
    # The override's own code after the call sees the lower file too.
    assert out["low_saw"] == str(TRUNK / "core.py")


def test_inherit_spec_origin_stays_the_override_file():
    out = run(CORE, "low")
    assert out["spec_origin"] == str(LOW / "core.py")
    assert out["spec_name"] == "inhpkg.core"


def test_inherit_records_lower_file_in_dunder_inherits():
    assert run(CORE, "low")["inherits"] == str(TRUNK / "core.py")


def test_inherit_trunk_function_reading_file_when_called_sees_its_own_file():
    # Trunk code that locates its data from __file__ when called keeps working.
    assert run(CORE, "low")["file_when_called"] == str(TRUNK / "core.py")


def test_inherit_override_keeps_its_own_docstring():
    assert run(CORE, "low")["doc"] == "Backend low's core."


def test_inherit_override_without_docstring_takes_lower_docstring():
    out = run("import json, inhpkg.nodoc as m; print(json.dumps([m.__doc__, m.VALUE]))", "low")
    assert out == ["Trunk docstring of nodoc.", "low"]


def test_inherit_chains_through_three_levels_of_a_stack():
    out = run(CORE, "top,mid,low")
    assert out["helper"] == "top>mid>low"
    assert out["api"] == "top>mid>low+api"
    # __file__ is the lowest version that ran; __spec__.origin the override loaded.
    assert out["file"] == str(TRUNK / "core.py")
    assert out["spec_origin"] == str(TOP / "core.py")
    assert out["inherits"] == str(MID / "core.py")  # the next lower version only
    assert out["loaded_from"] == str(TRUNK / "core.py")
    assert out["low_saw"] == str(TRUNK / "core.py")
    assert out["file_when_called"] == str(TRUNK / "core.py")
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
                          "origin": s.__spec__.origin, "leaf": leaf.__file__}))
        """,
        "low",
    )
    assert out["sub"] == "low"
    assert out["trunk_only"] is True
    assert out["doc"] == "Backend low's sub package."
    assert out["file"] == str(TRUNK / "sub" / "__init__.py")
    assert out["origin"] == str(LOW / "sub" / "__init__.py")
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
    assert out == [str(TRUNK / "core.py"), str(TRUNK / "core.py"), "trunk"]


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


def test_inherit_failing_lower_version_puts_file_back():
    out = run(
        """
        import json, inhpkg.failing as m
        print(json.dumps([m.ERROR, m.STARTED, m.__file__, m.__cached__,
                          hasattr(m, "__inherits__")]))
        """,
        "low",
    )
    cached = importlib.util.cache_from_source(str(LOW / "failing.py"))
    assert out == ["trunk failing", True, str(LOW / "failing.py"), cached, False]


def run_module(module: str, backend: str) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE`` in a fresh interpreter under *backend*."""
    env = clean_env({"FLAGTREE_BACKEND": backend})
    env["PYTHONPATH"] = os.pathsep.join([str(PY), LIBRARY])
    proc = subprocess.run(
        [sys.executable, "-m", module],
        env=env,
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_inherit_in_a_module_run_as_main_finds_versions_by_spec_name():
    proc = run_module("inhpkg.tool", "low")
    # The trunk's main block did not run; the override's ran once.
    assert "trunk main block ran" not in proc.stdout
    assert len(proc.stdout.strip().splitlines()) == 1
    out = json.loads(proc.stdout)
    assert out["ran"] == ["trunk body", "low main"]
    assert out["greet"] == "trunk greet"
    assert out["greet_module"] == "inhpkg.tool"
    assert out["names"] == ["__main__", "__main__"]
    assert out["file"] == str(TRUNK / "tool.py")
    assert out["origin"] == str(LOW / "tool.py")
    assert out["inherits"] == str(TRUNK / "tool.py")


def test_inherit_trunk_module_run_as_main_runs_its_own_main_block():
    proc = run_module("inhpkg.tool", "none")
    assert proc.stdout == "trunk main block ran\n"


def test_active_lists_an_inheriting_override_by_spec_origin():
    out = run(
        """
        import json, flagtree_spec, inhpkg.core, inhpkg.shapes
        print(json.dumps(flagtree_spec.active("inhpkg").loaded_from_mirrors))
        """,
        "low",
    )
    assert out == [["inhpkg.core", str(LOW / "core.py")], ["inhpkg.shapes", str(LOW / "shapes.py")]]


def test_debug_log_names_the_inheriting_override_it_loaded():
    proc = run_python(
        "import inhpkg.core",
        env={"FLAGTREE_BACKEND": "low", "FLAGTREE_SPEC_DEBUG": "1"},
        path=[PY],
    )
    assert f"module inhpkg.core: loading from mirror {LOW / 'core.py'}" in proc.stderr
    assert f"module inhpkg.core: {LOW / 'core.py'} inherits {TRUNK / 'core.py'}" in proc.stderr


SOURCES = """
    import inspect, json, inhpkg.shapes as s

    def source(obj):
        try:
            return inspect.getsource(obj)
        except OSError as exc:
            return f"OSError: {exc}"

    print(json.dumps({
        "square": source(s.Square), "hexagon": source(s.Hexagon), "circle": source(s.Circle),
        "perimeter": source(s.perimeter), "area": source(s.area),
        "square_line": getattr(s.Square, "__firstlineno__", None),
    }))
"""


def test_inherit_getsource_of_functions_and_lower_classes_is_right():
    out = run(SOURCES, "low")
    assert out["perimeter"] == "def perimeter(side):\n    return Square.sides * side\n"
    assert out["area"] == "def area(side):\n    return side * side\n"
    assert out["circle"] == "class Circle:\n    sides = 0\n"


def test_inherit_getsource_of_a_class_the_override_defines_reads_the_lower_file():
    # The documented limit, pinned per version so that a change is noticed.
    out = run(SOURCES, "low")
    trunk_lines = (TRUNK / "shapes.py").read_text().splitlines(keepends=True)
    if sys.version_info >= (3, 13):
        # The class's own line numbers (__firstlineno__), read in the lower file.
        first = out["square_line"]
        assert first == 7  # class Square in the override
        assert out["square"].splitlines(keepends=True)[0] == trunk_lines[first - 1]
        assert "backend" not in out["square"]
        assert out["hexagon"] == "OSError: lineno is out of bounds"
    else:
        # The lower file's class of the same name, or none.
        assert out["square"] == "class Square:\n    sides = 4\n"
        assert out["hexagon"] == "OSError: could not find class definition"


def test_inherit_under_python_m_keeps_the_module_reachable_under_its_spec_name():
    """Dataclasses, pickling and get_type_hints of lower-defined classes work under -m."""
    proc = run_module("inhpkg.records", "low")
    out = json.loads(proc.stdout)
    assert out == {
        "hints_at_import": ["tag", "x"],
        "round_trip_at_import": "Point",
        "hints": ["tag", "x"],
        "round_trip": [True, 2],
        "module": "inhpkg.records",
        "same_module": True,
    }


def test_inherit_skips_a_lower_backend_whose_declaration_excludes_the_module():
    # Backend excl's flagtree_spec.json excludes inhpkg.core: its core.py never overrides,
    # neither as the module that loads nor as the version top's core inherits.
    code = """
        import json, inhpkg.core as c
        print(json.dumps([c.helper(), c.__inherits__]))
    """
    assert run(code, "top,excl") == ["top>trunk", str(TRUNK / "core.py")]


def test_spawn_and_forkserver_children_of_an_inheriting_override_run_as_python_m_run():
    # The children run the override again as "__mp_main__": the lower version's dataclass
    # (string annotations) needs the module under its own name there too.
    proc = run_module("inhpkg.worker", "low")
    assert json.loads(proc.stdout) == {"spawn": 42, "forkserver": 42}
    env = clean_env({"FLAGTREE_BACKEND": "low"})
    env["PYTHONPATH"] = os.pathsep.join([str(PY), LIBRARY])
    under_run = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", "run", "--root", "inhpkg", "-m", "inhpkg.worker"],
        env=env,
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert under_run.returncode == 0, under_run.stderr
    assert json.loads(under_run.stdout) == {"spawn": 42, "forkserver": 42}


def test_an_inheriting_override_module_stays_a_plain_module_so_getsource_reads_the_lower_file():
    # The documented limit. A module subclass whose __file__ answered inspect with the
    # override's file would make every attribute access on the module several times slower
    # (CPython 3.11+ specialises attribute access for exact modules only).
    code = """
        import inspect, json, types, inhpkg.core as c
        print(json.dumps([type(c) is types.ModuleType, inspect.getsourcefile(c),
                          inspect.getsource(c) == open(c.__file__).read()]))
    """
    assert run(code, "top,mid,low") == [True, str(TRUNK / "core.py"), True]
