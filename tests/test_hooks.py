"""Hook modules, spec(), spec_func(), for_root()."""

from __future__ import annotations

import os

import pytest
from conftest import FIXTURES, INSTALLED, SOURCE, SOURCE_PY, run_python, scenario

import flagtree_spec
from flagtree_spec import SpecError, SpecImportError

LIBRARY = os.path.dirname(flagtree_spec.__file__) + os.sep

ALPHA_HOOKS = str(SOURCE / "third_party" / "alpha" / "backend" / "spec" / "__init__.py")


def test_spec_calls_first_backend_that_defines_hook():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec
        print(json.dumps([spec("init_language"), spec("only_beta"), spec("add_one", 41),
                          spec("add_one", x=1), spec("missing")]))
        """,
        env={"FLAGTREE_BACKEND": "beta,alpha"},
    )
    assert out == ["beta", "beta", 42, 2, None]


def test_spec_returns_falsy_results_and_spec_func_gives_callable():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec, spec_func
        zero = spec_func("zero")
        print(json.dumps([spec("zero"), zero.__name__, spec_func("missing"),
                          (spec_func("zero") or (lambda: "default"))()]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [0, "zero", None, 0]


def test_spec_with_no_backend_returns_none():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec, spec_func
        print(json.dumps([spec("init_language"), spec_func("init_language")]))
        """
    )
    assert out == [None, None]


def test_exception_from_hook_propagates_unchanged():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec
        try:
            spec("fail")
        except ValueError as exc:
            print(json.dumps(str(exc)))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == "hook failed"


def test_hook_module_loaded_lazily_at_first_spec_call_not_by_spec_path():
    out = scenario(
        """
        import json, sys, fixpkg.runtime.jit
        from flagtree_spec import spec, active
        before = active("fixpkg").hooks_loaded
        names = [n for n in sys.modules if n.startswith("flagtree_spec._hooks.")]
        spec("init_language")
        print(json.dumps([before, names, active("fixpkg").hooks_loaded]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [False, [], True]


BROKEN = """
    import json, sys, fixpkg
    from flagtree_spec import spec, spec_func, SpecImportError
    seen = []
    for call in (lambda: spec("init_language"), lambda: spec_func("x"), lambda: spec("y")):
        try:
            call()
        except SpecImportError as exc:
            seen.append([str(exc), type(exc.__cause__).__name__, str(exc.__cause__)])
    try:  # trunk code that guards a hook call with "except ImportError", as FlagTree's does
        spec("z")
    except ImportError as exc:
        guarded = [type(exc).__name__, exc.name]
    print(json.dumps([seen, len(getattr(sys, "_broken_runs", [])), guarded]))
"""


def test_hook_module_that_raises_is_spec_import_error_every_call_executed_once():
    out = scenario(BROKEN, env={"FLAGTREE_BACKEND": "broken"})
    seen, runs, guarded = out
    assert runs == 1
    assert guarded[0] == "SpecImportError" and guarded[1].startswith("flagtree_spec._hooks.")
    assert len(seen) == 3
    for message, cause, text in seen:
        assert "backend 'broken'" in message
        assert "third_party/broken/backend/spec/__init__.py" in message
        assert cause == "RuntimeError" and text == "backend broken cannot start"


def test_hook_module_with_syntax_error_is_spec_import_error():
    out = scenario(BROKEN, env={"FLAGTREE_BACKEND": "syntaxerr"})
    assert out[0][0][1] == "SyntaxError"
    assert "backend 'syntaxerr'" in out[0][0][0]


CHAIN = """
    import json, traceback, fixpkg
    from flagtree_spec import spec, spec_func, SpecImportError
    seen = []
    for call in (lambda: spec("first"), lambda: spec_func("again")):
        try:
            call()
        except SpecImportError as exc:
            cause = exc.__cause__
            seen.append({
                "context": type(exc.__context__).__name__,
                "cause": type(cause).__name__,
                "cause_context": type(cause.__context__).__name__,
                "text": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            })
    print(json.dumps(seen))
"""


@pytest.mark.parametrize("backend", ["broken", "syntaxerr"])
def test_hook_module_import_failure_traceback_shows_the_hook_modules_error_not_internals(
    backend,
):
    first, again = scenario(CHAIN, env={"FLAGTREE_BACKEND": backend})
    hooks = str(SOURCE / "third_party" / backend / "backend" / "spec" / "__init__.py")
    for seen in (first, again):
        # No KeyError of the hook-table lookup anywhere in the chain.
        assert seen["cause"] in ("RuntimeError", "SyntaxError")
        assert seen["cause_context"] == "NoneType"
        assert seen["context"] in (seen["cause"], "NoneType")
        assert "KeyError" not in seen["text"]
        assert "During handling of the above exception" not in seen["text"]
        # The hook module's own error comes first, naming its file and line,
        # with no import-system frames before it.
        cause_part = seen["text"].split("The above exception was the direct cause")[0]
        assert f'File "{hooks}", line ' in cause_part
        # The library's own folder, not its name: a checkout may be named flagtree_spec too.
        assert "importlib" not in cause_part and LIBRARY not in cause_part


def test_system_exit_from_hook_module_propagates_unwrapped():
    proc = run_python(
        "import fixpkg\nfrom flagtree_spec import spec\nspec('x')",
        env={"FLAGTREE_BACKEND": "exits"},
        expect_rc=3,
    )
    assert "SpecImportError" not in proc.stderr


def test_spec_import_error_is_an_import_error_and_a_spec_error():
    # FlagTree's trunk guards hook calls with "except ImportError".
    assert issubclass(SpecImportError, ImportError)
    assert issubclass(SpecImportError, SpecError)


def test_activate_clears_cached_hook_failure():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec, activate, SpecImportError
        try:
            spec("x")
        except SpecImportError:
            pass
        activate("alpha")
        print(json.dumps(spec("init_language")))
        """,
        env={"FLAGTREE_BACKEND": "broken"},
    )
    assert out == "alpha"


def test_several_specialised_roots_use_callers_root():
    out = scenario(
        """
        import json, fixpkg, instpkg
        from fixpkg.language.core import call_hook as fix_call
        from instpkg.language.core import call_hook as inst_call
        from flagtree_spec import spec, for_root, SpecError
        try:
            spec("init_language")
        except SpecError as exc:
            outside = str(exc)
        print(json.dumps([fix_call("init_language"), inst_call("init_language"),
                          for_root("instpkg").spec("init_language"),
                          for_root("fixpkg").spec_func("init_language").__module__.split(".")[1],
                          outside]))
        """,
        path=[SOURCE_PY, INSTALLED],
        env={"FLAGTREE_SPEC_PATH": "", "FLAGTREE_BACKEND": "alpha,gamma"},
    )
    assert out[:4] == ["alpha", "gamma", "gamma", "_hooks"]
    assert "outside every root package" in out[4] and "for_root" in out[4]


def test_single_specialised_root_serves_every_caller_without_lookup():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec
        print(json.dumps(spec("init_language")))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == "alpha"


def test_first_call_from_outside_any_root_is_spec_error():
    out = scenario(
        """
        import json
        from flagtree_spec import spec, SpecError
        try:
            spec("x")
        except SpecError as exc:
            print(json.dumps(str(exc)))
        """
    )
    assert "no root package has called spec_path() yet" in out


def test_first_call_from_inside_a_root_resolves_that_root(tmp_path):
    package = tmp_path / "caller_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from flagtree_spec import spec\nVALUE = spec('init_language')\n"
    )
    out = scenario(
        "import json, caller_pkg; print(json.dumps(caller_pkg.VALUE))",
        path=[tmp_path],
        env={"FLAGTREE_SPEC_PATH": str(FIXTURES / "spec_path_root")},
    )
    assert out == "spec-path"


def test_for_root_validates_name():
    from flagtree_spec import for_root

    with pytest.raises(SpecError, match="top-level package name"):
        for_root("a.b")
    assert repr(for_root("fixpkg")) == "for_root('fixpkg')"


def test_hook_name_must_be_a_string():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec, SpecError
        try:
            spec(3)
        except SpecError as exc:
            print(json.dumps(str(exc)))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == "a hook name must be a str, not int 3"


def test_spec_path_hook_module_serves_every_root():
    out = scenario(
        """
        import json, fixpkg, instpkg
        from flagtree_spec import for_root
        a = for_root("fixpkg").spec_func("path_only")
        b = for_root("instpkg").spec_func("path_only")
        print(json.dumps([a is b, a()]))
        """,
        path=[SOURCE_PY, INSTALLED],
        env={"FLAGTREE_SPEC_PATH": str(FIXTURES / "spec_path_root")},
    )
    assert out[0] is True and out[1].startswith("flagtree_spec._hooks.path_")


def test_objects_from_private_hook_module_pickle_into_child_process():
    child = run_python(
        """
        import json, pickle, subprocess, sys, fixpkg
        from flagtree_spec import spec
        blob = pickle.dumps(spec("make_payload", 7))
        code = ("import pickle, sys, fixpkg; obj = pickle.loads(sys.stdin.buffer.read());"
                " print(type(obj).__module__, obj.value)")
        out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                             check=True)
        print(out.stdout.decode().strip())
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    module, value = child.stdout.split()
    assert module.startswith("flagtree_spec._hooks.alpha_") and value == "7"


def test_hook_module_calling_spec_while_importing_decides_nothing_early():
    out = scenario(
        """
        import json, fixpkg
        from flagtree_spec import spec, spec_func
        first = spec("late")
        module = spec_func("late").__module__
        import sys
        print(json.dumps([first, spec("early"), sys.modules[module].EARLY]))
        """,
        env={"FLAGTREE_BACKEND": "selfcall"},
    )
    # During its import neither name is defined yet; afterwards both are found.
    assert out == ["late", "early", [None, None]]


def test_shadowed_hook_module_of_a_spec_path_root_names_the_spec_root(tmp_path):
    # A FLAGTREE_SPEC_PATH root inside the root package: its hook module is
    # imported as shpkg.extra, which the spec root's own mirror shadows.
    extra = tmp_path / "shpkg" / "extra"
    (extra / "shpkg" / "extra").mkdir(parents=True)
    (tmp_path / "shpkg" / "__init__.py").write_text(
        "from flagtree_spec import spec_path\nspec_path(__path__)\n"
    )
    (extra / "__init__.py").write_text("def hook():\n    return 'hook'\n")
    (extra / "shpkg" / "extra" / "__init__.py").write_text("")
    out = scenario(
        """
        import json, shpkg
        from flagtree_spec import SpecImportError, spec
        try:
            spec("hook")
        except SpecImportError as exc:
            print(json.dumps(str(exc)))
        """,
        path=[tmp_path],
        env={"FLAGTREE_SPEC_PATH": str(extra)},
    )
    assert out.startswith(f"the hook module of spec root {extra} is {extra}/__init__.py, but ")
    assert "backend None" not in out


def test_shadowed_hook_module_that_inherits_it_is_still_detected_by_spec_origin(tmp_path):
    # As above, but the shadowing override calls inherit(globals()) and so runs the
    # real hook module: its __file__ names the hook file, its __spec__.origin does not.
    extra = tmp_path / "shpkg" / "extra"
    shadow = extra / "shpkg" / "extra" / "__init__.py"
    shadow.parent.mkdir(parents=True)
    (tmp_path / "shpkg" / "__init__.py").write_text(
        "from flagtree_spec import spec_path\nspec_path(__path__)\n"
    )
    (extra / "__init__.py").write_text("def hook():\n    return 'hook'\n")
    shadow.write_text("from flagtree_spec import inherit\ninherit(globals())\n")
    out = scenario(
        """
        import json, sys, shpkg
        from flagtree_spec import SpecImportError, spec
        try:
            spec("hook")
        except SpecImportError as exc:
            print(json.dumps([str(exc), sys.modules["shpkg.extra"].__file__]))
        """,
        path=[tmp_path],
        env={"FLAGTREE_SPEC_PATH": str(extra)},
    )
    assert out[1] == str(extra / "__init__.py")  # what a check of __file__ would have trusted
    assert f"importing it as 'shpkg.extra' loaded {str(shadow)!r}" in out[0]


SHARED = FIXTURES / "shared_hooks"


def test_bare_spec_in_a_shared_hook_module_answers_for_the_root_whose_code_called_the_hook():
    """Also after an unrelated root package is specialised later (dispatch by caller)."""
    out = scenario(
        f"""
        import json
        from flagtree_spec import activate, spec_func
        import rone
        alone = rone.call()
        activate(root="rtwo", spec_roots=[{str(SHARED / "extra")!r}, {str(SHARED / "shared")!r}])
        import rtwo
        print(json.dumps([alone, rone.call(), rtwo.call(), rone.call()]))
        """,
        path=[SHARED / "python"],
        env={"FLAGTREE_SPEC_PATH": str(SHARED / "shared")},
    )
    assert out == ["shared", "shared", "two", "shared"]
