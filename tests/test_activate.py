"""activate() and active(): the state set and read in code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, INSTALLED, SOURCE, SOURCE_PY, scenario

ALPHA = str(SOURCE / "third_party" / "alpha" / "backend" / "spec" / "fixpkg")
BETA = str(SOURCE / "third_party" / "beta" / "backend" / "spec" / "fixpkg")
TRUNK = str(SOURCE_PY / "fixpkg")


def test_activate_rewrites_imported_paths_and_switches_hooks_loaded_modules_stay():
    out = scenario(
        """
        import json, fixpkg.runtime as r, fixpkg.runtime.jit as jit
        from flagtree_spec import activate, spec
        first = [list(r.__path__), spec("init_language")]
        activate("beta")
        import fixpkg.runtime.autotuner as at
        print(json.dumps([first, list(r.__path__), spec("init_language"), jit.WHERE, at.WHERE]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [
        [[f"{ALPHA}/runtime", f"{TRUNK}/runtime"], "alpha"],
        [f"{BETA}/runtime", f"{TRUNK}/runtime"],
        "beta",
        "alpha",
        "beta",
    ]


def test_activate_as_context_manager_restores_previous_state_exactly():
    out = scenario(
        """
        import json, fixpkg.runtime as r, fixpkg.compiler as c, fixpkg.tools as t
        from flagtree_spec import activate, active, spec, spec_func, _calls
        before = [list(r.__path__), list(c.__path__), spec_func("init_language"), active("fixpkg"),
                  _calls.dispatch()]
        try:
            with activate("beta,alpha"):
                inside = [list(r.__path__), spec("init_language")]
                raise KeyError("body raised")
        except KeyError:
            pass
        after = [list(r.__path__), list(c.__path__), spec_func("init_language"), active("fixpkg"),
                 _calls.dispatch()]
        same_dispatch = before[4][0] is after[4][0] and before[4][1] == after[4][1]
        print(json.dumps([inside, before[:2] == after[:2], before[2] is after[2],
                          before[3] == after[3], same_dispatch]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out[0] == [[f"{BETA}/runtime", f"{ALPHA}/runtime", f"{TRUNK}/runtime"], "beta"]
    assert out[1:] == [True, True, True, True]


def test_activate_none_keeps_spec_path_roots_and_empty_spec_roots_turn_everything_off():
    out = scenario(
        """
        import json, fixpkg.runtime as r
        from flagtree_spec import activate, spec
        activate(None)
        a = [len(r.__path__), spec("init_language")]
        activate(spec_roots=[])
        b = [len(r.__path__), spec("init_language")]
        print(json.dumps([a, b]))
        """,
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_PATH": str(FIXTURES / "spec_path_root")},
    )
    assert out == [[2, "spec-path"], [1, None]]


def test_activate_explicit_spec_roots_replace_discovery():
    root = SOURCE / "third_party" / "beta" / "backend" / "spec"
    out = scenario(
        f"""
        import json, fixpkg.runtime.jit as j0
        from flagtree_spec import activate, spec, active
        activate(spec_roots=[{str(root)!r}])
        import fixpkg.runtime.autotuner as at
        a = active("fixpkg")
        print(json.dumps([at.WHERE, spec("only_beta"), a.source, a.backends]))
        """
    )
    assert out == ["beta", "beta", "activate(spec_roots=...)", []]


def test_activate_for_one_root_leaves_others():
    out = scenario(
        """
        import json, fixpkg, instpkg
        from flagtree_spec import activate, for_root
        activate("gamma", root="instpkg")
        print(json.dumps([for_root("fixpkg").spec("init_language"),
                          for_root("instpkg").spec("init_language")]))
        """,
        path=[SOURCE_PY, INSTALLED],
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == ["alpha", "gamma"]


def test_activate_invalidates_import_caches_for_new_mirror_folders(tmp_path):
    shutil.copytree(SOURCE, tmp_path / "repo", symlinks=True)
    spec_root = tmp_path / "late"
    (spec_root / "fixpkg").mkdir(parents=True)
    out = scenario(
        f"""
        import json, os, fixpkg.runtime as r
        from flagtree_spec import activate
        activate(spec_roots=[{str(spec_root)!r}])
        os.makedirs({str(spec_root / "fixpkg" / "runtime")!r})
        with open({str(spec_root / "fixpkg" / "runtime" / "jit.py")!r}, "w") as f:
            f.write("WHERE = 'late'\\n")
        activate(spec_roots=[{str(spec_root)!r}])
        import fixpkg.runtime.jit as j
        print(json.dumps(j.WHERE))
        """,
        path=[tmp_path / "repo" / "python"],
    )
    assert out == "late"


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("activate('../x')", "SpecConfigError"),
        ("activate('cycle_a')", "SpecConfigError"),
        ("activate(3)", "SpecError"),
        ("activate(['alpha,beta'])", "SpecConfigError"),
        ("activate(['alpha', 'alpha'])", "SpecConfigError"),
        ("activate('alpha', spec_roots=['/x'])", "SpecError"),
        ("activate(spec_roots='/x')", "SpecError"),
        ("activate(spec_roots=['/nonexistent/dir'])", "SpecConfigError"),
        ("activate(root='a.b')", "SpecError"),
    ],
)
def test_activate_with_bad_input_raises_and_changes_nothing(call, error):
    out = scenario(
        f"""
        import json, fixpkg.runtime as r
        from flagtree_spec import activate, active, spec
        before = [list(r.__path__), active("fixpkg")]
        try:
            {call}
        except Exception as exc:
            name = type(exc).__name__
        print(json.dumps([name, before == [list(r.__path__), active("fixpkg")],
                          spec("init_language")]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [error, True, "alpha"]


def test_active_describes_state():
    out = scenario(
        """
        import json, fixpkg.runtime.jit, fixpkg.compiler.passes
        from flagtree_spec import active
        a = active("fixpkg")
        print(json.dumps([a.root, a.backends, a.source, [s.backend for s in a.spec_roots],
                          a.packages, a.loaded_from_mirrors]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [
        "fixpkg",
        ["alpha"],
        "FLAGTREE_BACKEND",
        ["alpha"],
        ["fixpkg", "fixpkg.runtime"],
        [["fixpkg.runtime.jit", f"{ALPHA}/runtime/jit.py"]],
    ]


def test_activate_with_a_spec_root_that_is_no_directory_raises_before_any_root_is_known():
    out = scenario(
        """
        import json, sys
        from flagtree_spec import SpecConfigError, activate
        try:
            activate(spec_roots=["/nonexistent/dir"])
        except SpecConfigError as exc:
            print(json.dumps([str(exc), "fixpkg" in sys.modules]))
        """
    )
    assert out == ["spec root '/nonexistent/dir' is not a directory", False]


def test_activate_contexts_restore_as_a_stack_and_one_exited_out_of_order_is_an_error():
    out = scenario(
        """
        import json
        from flagtree_spec import SpecError, activate, spec
        import fixpkg.runtime
        seen = []
        with activate("beta"):
            with activate(None):
                seen.append(spec("init_language"))
            seen.append(spec("init_language"))
        seen.append(spec("init_language"))
        # By hand, out of order: the first exits while the second is still open.
        first = activate("beta")
        first.__enter__()
        second = activate(None)
        second.__enter__()
        try:
            first.__exit__(None, None, None)
        except SpecError as exc:
            error = str(exc)
        else:
            error = None
        seen.append(spec("init_language"))  # unchanged: still the second's state
        second.__exit__(None, None, None)
        seen.append(spec("init_language"))  # the state before the second: "beta"
        try:
            second.__exit__(None, None, None)
        except SpecError as exc:
            twice = str(exc)
        print(json.dumps([seen, error, twice]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    seen, error, twice = out
    assert seen == [None, "beta", "alpha", None, "beta"]
    assert error.startswith("an activate() context was exited out of order: 1 activate()")
    assert "restore as a stack" in error
    assert "exited already, or never entered" in twice


def test_activate_contexts_exited_out_of_order_by_two_threads_raise_not_stick():
    out = scenario(
        """
        import json, threading
        from flagtree_spec import SpecError, activate, spec
        import fixpkg.runtime
        entered, release, errors = threading.Event(), threading.Event(), []

        def hold():
            with activate(None):
                entered.set()
                release.wait(10)

        t = threading.Thread(target=hold)
        outer = activate("beta")
        outer.__enter__()
        t.start()
        entered.wait(10)
        try:
            outer.__exit__(None, None, None)   # the thread's context is still open
        except SpecError as exc:
            errors.append(type(exc).__name__)
        release.set()
        t.join(10)
        print(json.dumps([errors, spec("init_language")]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
        timeout=30,
    )
    # The thread's context restored the state before it ("beta"); the refused exit
    # left that alone.
    assert out == [["SpecError"], "beta"]


SPAWN_CHILD = """
import json, multiprocessing
from concurrent.futures import ProcessPoolExecutor
import flagtree_spec


def name_of(obj):
    return type(obj).__qualname__


if __name__ == "__main__":
    flagtree_spec.activate("low")  # in code only: a child process does not inherit it
    import inhpkg.shapes as shapes
    out = []
    spawn = multiprocessing.get_context("spawn")
    for options in ({{}}, {{"initializer": flagtree_spec.activate, "initargs": ("low",)}}):
        with ProcessPoolExecutor(1, mp_context=spawn, **options) as pool:
            try:
                out.append(pool.submit(name_of, shapes.Hexagon()).result(timeout=30))
            except Exception as exc:
                out.append(type(exc).__name__)
    print(json.dumps(out))
"""


def test_a_spawn_child_unpickles_a_class_of_an_override_only_with_the_backend_active_there(
    tmp_path,
):
    # The documented limit of activate() in child processes: the child imports the class's
    # module under its own state; a Pool initializer that activates the backend runs first.
    script = tmp_path / "prog.py"
    script.write_text(SPAWN_CHILD.format())
    repo = FIXTURES / "inherit_repo"
    out = scenario(
        f"import runpy, sys; sys.argv = [{str(script)!r}]; "
        f"runpy.run_path({str(script)!r}, run_name='__main__')",
        path=[repo / "python"],
        env={"FLAGTREE_SOURCE_ROOT": str(repo)},
    )
    assert out == ["BrokenProcessPool", "Hexagon"]
    reference = (Path(__file__).resolve().parent.parent / "docs" / "reference.md").read_text()
    assert "a class defined in an override" in reference
