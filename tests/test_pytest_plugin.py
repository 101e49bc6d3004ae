"""The pytest plugin: --flagtree-backend, the override report, and the flagtree_run fixture.

Sessions run with pytester in a fresh interpreter, against a copy of
fixtures/pytest_project: a root package ``plugpkg`` with backends ``fast``
and ``slow``, a conftest that imports the root package, and tests that check
the backend through the environment variables ``EXPECT_KIND`` and
``EXPECT_LAYERS``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import pytest
from conftest import FIXTURES, run_python

from flagtree_spec.pytest_plugin import ChildError

PROJECT = FIXTURES / "pytest_project"
USAGE_ERROR = 4


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    shutil.copytree(PROJECT, pytester.path, dirs_exist_ok=True)
    for name in list(os.environ):
        if name.startswith("FLAGTREE_"):
            monkeypatch.delenv(name)
    return pytester


def run(
    pytester: pytest.Pytester, *args: str, kind: str = "trunk", layers: str = "layers trunk"
) -> pytest.RunResult:
    os.environ["EXPECT_KIND"] = kind
    os.environ["EXPECT_LAYERS"] = layers
    try:
        return pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest", *args
        )
    finally:
        del os.environ["EXPECT_KIND"], os.environ["EXPECT_LAYERS"]


def fast_root(pytester: pytest.Pytester) -> str:
    return str(pytester.path / "third_party" / "fast" / "backend" / "spec")


def test_backend_option_applies_before_any_conftest_imports_the_root_package(project):
    result = run(project, "--flagtree-backend=fast", kind="fast", layers="layers fast")
    result.assert_outcomes(passed=2)


def test_header_names_backend_stack_and_spec_roots(project):
    result = run(project, "--flagtree-backend=slow,fast", kind="slow", layers="slow fast")
    result.assert_outcomes(passed=2)
    slow = str(project.path / "third_party" / "slow" / "backend" / "spec")
    result.stdout.fnmatch_lines(
        [
            "flagtree_spec: backend stack slow,fast (--flagtree-backend)",
            f"flagtree_spec: plugpkg: spec roots {slow} [slow], {fast_root(project)} [fast]",
        ]
    )


def test_no_header_and_no_change_when_the_plugin_is_not_asked(project):
    result = run(project)
    result.assert_outcomes(passed=2)
    assert "flagtree_spec" not in result.stdout.str()


def test_ini_option_selects_the_backend(project):
    (project.path / "pytest.ini").write_text(
        "[pytest]\npythonpath = python\nflagtree_backend = fast\n"
    )
    result = run(project, kind="fast", layers="layers fast")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["flagtree_spec: backend stack fast (flagtree_backend in pytest.ini)"]
    )


def test_option_beats_environment_beats_ini(project, monkeypatch):
    (project.path / "pytest.ini").write_text(
        "[pytest]\npythonpath = python\nflagtree_backend = fast\n"
    )
    monkeypatch.setenv("FLAGTREE_BACKEND", "slow")
    run(project, kind="slow", layers="slow trunk").assert_outcomes(passed=2)
    run(project, "--flagtree-backend=none").assert_outcomes(passed=2)


def test_option_none_means_no_backend_even_when_the_environment_names_one(project, monkeypatch):
    monkeypatch.setenv("FLAGTREE_BACKEND", "fast")
    result = run(project, "--flagtree-backend=none")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["flagtree_spec: backend stack none (--flagtree-backend)"])


def test_bad_backend_name_is_a_usage_error(project):
    result = run(project, "--flagtree-backend=../x")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: flagtree_spec: --flagtree-backend='../x': '../x' is not a backend name*"]
    )


def test_backend_that_exists_nowhere_is_a_usage_error_naming_the_close_matches(project):
    # The conftest imports plugpkg: the session stops before collecting, as check -b does.
    result = run(project, "--flagtree-backend=fsat,slow")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: flagtree_spec: --flagtree-backend='fsat,slow' names backend 'fsat', which "
            "exists nowhere for package 'plugpkg' (looked in "
            f"{project.path}/python/plugpkg/backends/fsat/spec, *entry point 'fsat' in group "
            "flagtree_spec.backends); did you mean 'fast'?"
        ]
    )
    assert "collected" not in result.stdout.str()
    (project.path / "pytest.ini").write_text(
        "[pytest]\npythonpath = python\nflagtree_backend = mybakend\n"
    )
    result = run(project)
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: flagtree_spec: flagtree_backend in pytest.ini='mybakend' names backend "
            "'mybakend', which exists nowhere *; the backends that exist are fast, slow."
        ]
    )


def test_backend_that_exists_nowhere_is_found_when_a_test_module_imports_the_root(project):
    # No conftest: the root package is first imported while the test modules are collected.
    result = run(project, "--noconftest", "tests", "--flagtree-backend=slwo")
    assert result.ret == USAGE_ERROR
    output = pytest.LineMatcher(result.outlines + result.errlines)
    output.fnmatch_lines(["ERROR: flagtree_spec: *backend 'slwo'*did you mean 'slow'?"])
    output.no_fnmatch_line("*passed*")


def test_backend_that_exists_nowhere_fails_the_session_when_only_a_test_imports_the_root(
    project,
):
    project.makepyfile(test_late="def test_late():\n    import plugpkg.ops\n")
    result = run(project, "--noconftest", "test_late.py", "--flagtree-backend=fsat")
    assert result.ret == USAGE_ERROR
    result.stdout.fnmatch_lines(
        [
            "test_late.py .*",
            "ERROR: flagtree_spec: --flagtree-backend='fsat' names backend 'fsat'*",
            "*1 passed*",
        ]
    )
    # Said once, as the plugin's error: not again as the runtime's SpecWarning.
    everything = result.stdout.str() + result.stderr.str()
    assert everything.count("names backend 'fsat'") == 1, everything
    assert "SpecWarning" not in everything
    # Without the terminal reporter the error still reaches the user, on stderr.
    result = run(
        project, "-p", "no:terminal", "--noconftest", "test_late.py", "--flagtree-backend=fsat"
    )
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: flagtree_spec: --flagtree-backend='fsat' names*"])


def test_backend_of_the_option_exists_by_a_folder_without_spec_tree_or_by_another_root(project):
    # third_party/cpponly has no Python spec tree: a backend of C++ changes, not a typo.
    (project.path / "third_party" / "cpponly").mkdir()
    run(project, "--flagtree-backend=cpponly").assert_outcomes(passed=2)
    # fast exists for plugpkg; that otherpkg has no such backend is no usage error.
    # otherpkg lies outside the repository: fast does not exist for it.
    project.makepyfile(**{"elsewhere/otherpkg/__init__": ""})
    (project.path / "pytest.ini").write_text("[pytest]\npythonpath = python elsewhere\n")
    result = run(
        project,
        "--flagtree-backend=fast",
        "--flagtree-root=otherpkg",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=2)
    # A root package that cannot be found is the header's to report, not a reason to stop.
    result = run(
        project,
        "--flagtree-backend=fast",
        "--flagtree-root=nosuchpkg",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["flagtree_spec: nosuchpkg: root package 'nosuchpkg' is not*"])
    result = run(project, "--flagtree-backend=fsat", "--flagtree-root=otherpkg")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*'fsat', which exists nowhere for package 'otherpkg' (*; no backend exists for this "
            "package. Nor does it exist for the other root packages ('plugpkg')."
        ]
    )


def test_warning_for_a_root_named_by_the_option_points_at_the_option(project, monkeypatch):
    # FLAGTREE_BACKEND is the runtime's to judge; the header resolves plugpkg because
    # --flagtree-root names it, and the runtime's warning must not point at pluggy.
    monkeypatch.setenv("FLAGTREE_BACKEND", "fsat")
    result = run(project, "--noconftest", "tests", "--flagtree-root=plugpkg")
    result.assert_outcomes(passed=2)
    result.stderr.fnmatch_lines(
        [
            "--flagtree-root:0: SpecWarning: FLAGTREE_BACKEND names backend 'fsat', which "
            "exists nowhere for package 'plugpkg' (*did you mean 'fast'? The program runs on "
            "without it."
        ]
    )
    assert "pluggy" not in result.stderr.str()
    (project.path / "pytest.ini").write_text(
        "[pytest]\npythonpath = python\n# the report's roots\nflagtree_root = plugpkg\n"
    )
    result = run(project, "--noconftest", "tests")
    result.assert_outcomes(passed=2)
    result.stderr.fnmatch_lines([f"{project.path}/pytest.ini:4: SpecWarning: FLAGTREE_BACKEND*"])
    assert "pluggy" not in result.stderr.str()
    (project.path / "pytest.ini").write_text("[pytest]\npythonpath = python\n")
    result = run(project, "--noconftest", "tests", "-o", "flagtree_root=plugpkg")
    result.stderr.fnmatch_lines(["flagtree_root:0: SpecWarning: FLAGTREE_BACKEND*"])


def test_root_imported_earlier_under_another_backend_is_a_usage_error_naming_the_importer(
    project,
):
    result = run(project, "-p", "early_importer", "--flagtree-backend=fast")
    assert result.ret == USAGE_ERROR
    err = result.stderr.str()
    assert "--flagtree-backend='fast' cannot apply: root package 'plugpkg' was imported" in err
    assert "under backend stack 'none' (no backend set)" in err
    assert f"pytest plugin 'early_importer' ({project.path / 'early_importer.py'})" in err
    assert "FLAGTREE_BACKEND=fast in the environment" in err


def test_root_imported_earlier_under_the_same_backend_is_fine(project, monkeypatch):
    monkeypatch.setenv("FLAGTREE_BACKEND", "fast")
    result = run(
        project,
        "-p",
        "early_importer",
        "--flagtree-backend=fast",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=2)


def test_unknown_importer_is_named_as_a_start_up_file(project):
    # sitecustomize runs at interpreter start-up and keeps no reference to the package.
    project.makepyfile(sitecustomize="import plugpkg.ops\ndel plugpkg\n")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(project.path / "python"), str(project.path)])
    try:
        result = run(project, "--flagtree-backend=fast")
    finally:
        del os.environ["PYTHONPATH"]
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*a start-up file (a .pth file, sitecustomize*importtime*"])


def test_report_lists_loaded_never_loaded_inherited_and_dead_files(project):
    result = run(
        project,
        "--flagtree-backend=slow,fast",
        "--flagtree-report",
        kind="slow",
        layers="slow fast",
    )
    result.assert_outcomes(passed=2)
    fast, slow = (
        fast_root(project) + "/plugpkg",
        str(project.path / "third_party/slow/backend/spec"),
    )
    slow += "/plugpkg"
    result.stdout.fnmatch_lines(
        [
            "*flagtree_spec override report*",
            "root package plugpkg, backend stack slow,fast (--flagtree-backend): "
            "2 of 4 overrides and added modules loaded",
            "  loaded:",
            f"    override  plugpkg.layers  {slow}/layers.py",
            f"    override  plugpkg.ops  {slow}/ops.py",
            "  never loaded:",
            f"    added     plugpkg.extra  {fast}/extra.py",
            f"    override  plugpkg.unused  {fast}/unused.py",
            "  ran only through inherit():",
            f"    shadowed  plugpkg.layers  {fast}/layers.py",
            "  cannot load (flagtree-spec check says why):",
            f"    shadowed  plugpkg.ops  {fast}/ops.py",
            f"    dead      plugpkg.plain.mod  {fast}/plain/mod.py",
        ]
    )


def test_json_report(project):
    result = run(
        project,
        "--flagtree-backend=fast",
        "--flagtree-report=json:out/report.json",
        kind="fast",
        layers="layers fast",
    )
    assert result.ret == USAGE_ERROR  # the folder does not exist
    result.stderr.fnmatch_lines(
        ["*--flagtree-report=json:out/report.json: folder * does not exist"]
    )
    (project.path / "out").mkdir()
    result = run(
        project,
        "--flagtree-backend=fast",
        "--flagtree-report=json:out/report.json",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=2)
    assert "override report" not in result.stdout.str()
    report = json.loads((project.path / "out" / "report.json").read_text())
    (entry,) = report["roots"]
    assert entry["root"] == "plugpkg"
    assert entry["backends"] == ["fast"]
    assert entry["source"] == "--flagtree-backend"
    assert entry["spec_roots"] == [fast_root(project)]
    rows = {r["module"]: r for r in entry["modules"]}
    assert sorted(rows) == [
        "plugpkg.extra",
        "plugpkg.layers",
        "plugpkg.ops",
        "plugpkg.plain.mod",
        "plugpkg.unused",
    ]
    assert rows["plugpkg.ops"] == {
        "module": "plugpkg.ops",
        "file": fast_root(project) + "/plugpkg/ops.py",
        "backend": "fast",
        "state": "override",
        "shadows": str(project.path / "python" / "plugpkg" / "ops.py"),
        "loaded": True,
        "inherited": False,
    }
    assert [m for m, r in rows.items() if r["loaded"]] == ["plugpkg.layers", "plugpkg.ops"]
    assert rows["plugpkg.plain.mod"]["state"] == "dead"


def test_report_counts_an_inheriting_override_by_its_spec_origin(project):
    # layers.py of "fast" inherits the trunk: __file__ may name the trunk file, the
    # report must still count the override (by __spec__.origin) and not the trunk.
    project.makepyfile(
        test_file="""
        import plugpkg.layers

        def test_it():
            plugpkg.layers.__file__ = plugpkg.layers.__inherits__
        """
    )
    result = run(
        project, "test_file.py", "--flagtree-backend=fast", "--flagtree-report=json:r.json"
    )
    result.assert_outcomes(passed=1)
    (entry,) = json.loads((project.path / "r.json").read_text())["roots"]
    rows = {r["module"]: r for r in entry["modules"]}
    assert rows["plugpkg.layers"]["loaded"] is True


def test_report_of_a_root_never_imported_needs_flagtree_root(project):
    project.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run(project, "test_nothing.py", "--noconftest", "--flagtree-report")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["no root package was imported (name one with --flagtree-root=R*"])
    result = run(
        project,
        "test_nothing.py",
        "--noconftest",
        "--flagtree-backend=fast",
        "--flagtree-root=plugpkg",
        "--flagtree-report",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            f"flagtree_spec: plugpkg: spec roots {fast_root(project)} [fast]",
            "*0 of 4 overrides and added modules loaded",
            "  never loaded:",
        ]
    )


def test_bad_report_value_and_root_name_are_usage_errors(project):
    result = run(project, "--flagtree-report", "tests")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*--flagtree-report='tests': give no value*"])
    result = run(project, "--flagtree-root=plugpkg.ops")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*'plugpkg.ops' is not a top-level package name*"])


def test_header_reports_a_root_that_cannot_be_found(project):
    result = run(project, "--flagtree-root=nosuchpkg")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["flagtree_spec: nosuchpkg: root package 'nosuchpkg' is not*"])


@pytest.mark.slow
def test_xdist_workers_get_the_backend_and_their_reports_merge(project):
    project.makepyfile(
        test_more="""
        import os
        import plugpkg.ops

        def test_a():
            assert plugpkg.ops.kind() == "fast"

        def test_b():
            assert os.environ["FLAGTREE_BACKEND"] == "fast"
        """
    )
    result = run(
        project,
        "-n",
        "2",
        "--flagtree-backend=fast",
        "--flagtree-report=json:r.json",
        "--flagtree-report",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=4)
    (entry,) = json.loads((project.path / "r.json").read_text())["roots"]
    rows = {r["module"]: r for r in entry["modules"]}
    # The controller only loads the conftest (plugpkg.layers); plugpkg.ops loads in workers.
    assert rows["plugpkg.ops"]["loaded"] is True
    assert rows["plugpkg.unused"]["loaded"] is False
    result.stdout.fnmatch_lines(["*2 of 4 overrides and added modules loaded"])


def test_flagtree_run_children_count_in_the_report(project):
    project.makepyfile(
        test_child="""
        def test_child(flagtree_run):
            assert flagtree_run("plugpkg.probe:kinds", "unused") == ("fast", ["fast"])
        """
    )
    result = run(
        project, "test_child.py", "--flagtree-backend=fast", "--flagtree-report=json:r.json"
    )
    result.assert_outcomes(passed=1)
    (entry,) = json.loads((project.path / "r.json").read_text())["roots"]
    rows = {r["module"]: r for r in entry["modules"]}
    assert rows["plugpkg.unused"]["loaded"] is True
    assert rows["plugpkg.extra"]["loaded"] is False


def test_plugin_module_imports_only_the_runtime():
    proc = run_python(
        """
        import sys, json
        import pytest  # what the plugin gets from pytest itself
        before = set(sys.modules)
        import flagtree_spec.pytest_plugin
        new = sorted(set(sys.modules) - before)
        print(json.dumps(new))
        """
    )
    new = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [m for m in new if not m.startswith("flagtree_spec")] == []
    assert not any(m.startswith(("flagtree_spec._static", "flagtree_spec._model")) for m in new)
    assert "flagtree_spec._child" not in new


# --------------------------------------------------------------------------- flagtree_run


@pytest.fixture
def plugpkg_path(monkeypatch: pytest.MonkeyPatch, import_state: None) -> None:
    for name in list(os.environ):
        if name.startswith("FLAGTREE_"):
            monkeypatch.delenv(name)
    monkeypatch.syspath_prepend(str(PROJECT / "python"))


def test_flagtree_run_calls_a_named_function_under_each_backend(flagtree_run, plugpkg_path):
    assert flagtree_run("plugpkg.probe:kinds", "unused", backend=None) == ("trunk", ["trunk"])
    assert flagtree_run("plugpkg.probe:kinds", "unused", backend="fast") == ("fast", ["fast"])
    assert flagtree_run("plugpkg.probe:kinds", backend="slow,fast") == ("slow", [])
    assert flagtree_run("plugpkg.probe:kinds", backend=["slow"]) == ("slow", [])
    assert "plugpkg.ops" not in sys.modules  # nothing ran here


def test_flagtree_run_default_backend_is_the_sessions(flagtree_run, plugpkg_path, monkeypatch):
    monkeypatch.setenv("FLAGTREE_BACKEND", "fast")
    assert flagtree_run("plugpkg.probe:kinds") == ("fast", [])
    assert flagtree_run("plugpkg.probe:environment", "FLAGTREE_BACKEND") == "fast"
    assert flagtree_run("plugpkg.probe:environment", "EXTRA", env={"EXTRA": "1"}) == "1"


def test_flagtree_run_takes_an_importable_callable(flagtree_run, plugpkg_path):
    from plugpkg import probe

    assert flagtree_run(probe.environment, name="FLAGTREE_BACKEND", backend="fast") == "fast"


def test_flagtree_run_code_returns_the_last_expression(flagtree_run, plugpkg_path):
    code = "import plugpkg.ops\nkind = plugpkg.ops.kind()\nkind.upper()"
    assert flagtree_run.code(code, backend="fast") == "FAST"
    assert flagtree_run.code("import plugpkg.ops\nx = plugpkg.ops.kind()", backend="fast") is None


def test_flagtree_run_shows_the_childs_traceback(flagtree_run, plugpkg_path):
    with pytest.raises(ChildError) as info:
        flagtree_run("plugpkg.probe:fail", "no good", backend="fast")
    error = info.value
    assert error.type_name == "ValueError"
    assert error.child_message == "no good"
    text = str(error)
    assert text.startswith(
        "plugpkg.probe:fail raised ValueError: no good (in a fresh interpreter, "
        "FLAGTREE_BACKEND=fast)"
    )
    assert "--- traceback in the child interpreter" in text
    assert 'probe.py", line' in text and "in fail" in text
    with pytest.raises(ChildError, match="ModuleNotFoundError: No module named 'nosuch'"):
        flagtree_run("nosuch:f")
    with pytest.raises(ChildError, match="SyntaxError"):
        flagtree_run.code("def (")


def test_flagtree_run_reports_a_child_that_dies(flagtree_run, plugpkg_path):
    with pytest.raises(
        ChildError, match=r"\(FLAGTREE_BACKEND unset\) exited with code 3 before reporting"
    ) as info:
        flagtree_run("plugpkg.probe:die", 3)
    assert "dying on purpose" in info.value.stderr
    with pytest.raises(ChildError, match=r"did not finish within 0.5 s"):
        flagtree_run.code("import time\ntime.sleep(30)", timeout=0.5)


def test_flagtree_run_results_and_arguments_must_pickle(flagtree_run, plugpkg_path):
    with pytest.raises(ChildError, match=r"the result <function .* cannot be pickled"):
        flagtree_run("plugpkg.probe:unpicklable")
    with pytest.raises(TypeError, match="cannot be sent to another interpreter"):
        flagtree_run(lambda: 1)
    with pytest.raises(ChildError, match="cannot be unpickled here"):
        # A class that exists only in the child interpreter.
        flagtree_run.code(
            "import sys, types\n"
            "m = sys.modules['onlyhere'] = types.ModuleType('onlyhere')\n"
            "exec('class C:\\n    pass', m.__dict__)\n"
            "m.C()"
        )


def test_flagtree_run_rejects_bad_input(flagtree_run):
    with pytest.raises(TypeError, match="'module:function'"):
        flagtree_run("plugpkg.probe.kinds")
    with pytest.raises(TypeError, match="give 'module:function' or an importable function"):
        flagtree_run(3)
    with pytest.raises(TypeError, match="backend"):
        flagtree_run("m:f", backend=3)
    with pytest.raises(TypeError, match="source code"):
        flagtree_run.code(b"x")
    from flagtree_spec import SpecConfigError

    with pytest.raises(SpecConfigError, match=r"flagtree_run\(backend=...\)='a,,b'"):
        flagtree_run("m:f", backend="a,,b")
    with pytest.raises(ChildError, match="is not 'module:function'"):
        flagtree_run(":f")


# --------------------------------------------------------------------------- in-process pieces


def test_environment_backend_with_a_bad_value_is_left_to_the_runtime(project, monkeypatch):
    # The plugin is not asked: FLAGTREE_BACKEND is the runtime's to judge, where it is used.
    monkeypatch.setenv("FLAGTREE_BACKEND", "../x")
    project.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run(project, "test_nothing.py", "--noconftest")
    result.assert_outcomes(passed=1)
    assert "flagtree_spec" not in result.stdout.str()


def _requested(backend: str) -> Any:
    from flagtree_spec.pytest_plugin._settings import Settings

    settings = Settings()
    settings.backend, settings.source = backend, "--flagtree-backend"
    settings.stack = tuple(backend.split(","))
    return settings


def test_activate_before_the_session_is_a_usage_error(request, plugpkg_path):
    from flagtree_spec import activate
    from flagtree_spec.pytest_plugin._session import _check_imported

    activate("slow")
    with pytest.raises(pytest.UsageError, match=r"activate\(\) was called before pytest"):
        _check_imported(request.config, _requested("fast"))


def test_backend_that_contradicts_the_marker_of_an_imported_root_is_a_usage_error(
    request, plugpkg_path, monkeypatch
):
    from flagtree_spec.pytest_plugin._session import _check_imported

    monkeypatch.syspath_prepend(str(FIXTURES / "marker_file" / "site-packages"))
    import mkpkg  # noqa: F401  (its build-time marker names gamma)

    monkeypatch.setenv("FLAGTREE_BACKEND", "fast")
    with pytest.raises(pytest.UsageError, match="contradicts the build-time marker"):
        _check_imported(request.config, _requested("fast"))


def test_importer_is_named_by_the_module_that_refers_to_the_root_package(
    request, plugpkg_path, monkeypatch
):
    import types

    import plugpkg.ops

    from flagtree_spec import install
    from flagtree_spec.pytest_plugin._session import _importers

    class Opaque:
        @property
        def __module__(self):  # type: ignore[override]
            raise RuntimeError("no")

    holder = types.ModuleType("holder")
    holder.kind = plugpkg.ops.kind  # type: ignore[attr-defined]
    holder.opaque = Opaque()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "holder", holder)
    assert "module holder (no file)" in _importers("plugpkg", request.config)
    request.config.pluginmanager.register(holder, "someplugin")
    try:
        text = _importers("plugpkg", request.config)
    finally:
        request.config.pluginmanager.unregister(holder)
    assert "pytest plugin 'someplugin' (module holder, no file)" in text
    monkeypatch.delitem(sys.modules, "holder")
    monkeypatch.setenv("FLAGTREE_SPEC_AUTO", "plugpkg")
    install("plugpkg")
    assert "auto mode from FLAGTREE_SPEC_AUTO" in _importers("plugpkg", request.config)


def test_report_names_a_root_it_cannot_resolve_and_a_root_without_mirror(plugpkg_path):
    from flagtree_spec._tools.cli.report import build_report, format_report

    report = build_report(["nosuchpkg", "plugpkg"], (), set(), set())
    assert report["roots"][0]["root"] == "nosuchpkg"
    assert "is not importable" in report["roots"][0]["error"]
    assert report["roots"][1]["modules"] == []  # no backend: no mirror tree
    lines = format_report(report)
    assert lines[0].startswith("root package nosuchpkg: root package 'nosuchpkg' is not")
    assert lines[-1] == "  no mirror tree: nothing to load"


MANY_TESTS = '''
import sys, types

import pytest


class Counting(types.ModuleType):
    """A module of the root package that counts how often its namespace is read."""

    reads = 0

    def __getattribute__(self, name):
        if name == "__dict__":
            type(self).reads += 1
        return super().__getattribute__(name)


sys.modules["plugpkg.sentinel"] = Counting("plugpkg.sentinel")


@pytest.mark.parametrize("i", range(40))
def test_many(i):
    import plugpkg.ops  # noqa: F401


def test_zz_reads():
    # The scan after each of the 40 tests looked only at what the test imported.
    assert Counting.reads <= 2, Counting.reads
'''


def test_report_scan_after_each_test_costs_what_the_test_imported_not_all_of_sys_modules(
    project,
):
    project.makepyfile(test_many=MANY_TESTS)
    result = run(
        project,
        "-p",
        "no:randomly",
        "test_many.py",
        "--flagtree-backend=fast",
        "--flagtree-report",
        kind="fast",
        layers="layers fast",
    )
    result.assert_outcomes(passed=41)
    result.stdout.fnmatch_lines(["*flagtree_spec override report*"])
