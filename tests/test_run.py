"""``flagtree-spec run`` and ``flagtree-spec autostart``.

Every scenario runs the command line in a fresh interpreter,
``python -m flagtree_spec ...``, with the unmodified fixture package on
PYTHONPATH and backend ``zeta`` found through FLAGTREE_SOURCE_ROOT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest
from conftest import FIXTURES, LIBRARY, NEUTRAL, ScenarioError, clean_env

from flagtree_spec._run import AUTOSTART_FILE, AUTOSTART_LINE

SRC = FIXTURES / "unmodified"
BACKENDS = FIXTURES / "unmodified_backends"
ENV = {"FLAGTREE_SOURCE_ROOT": str(BACKENDS)}

CHILDREN = """
import json, multiprocessing, os, subprocess, sys


def where():
    import unmodpkg.runtime.jit as jit
    return jit.WHERE


def main():
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(1)
    spawned = pool.apply(where)
    # close() and join(), not terminate() (what "with Pool()" does on exit): a worker
    # killed while its atexit handlers run (the coverage of the test run writing its
    # data file) leaves a broken file behind.
    pool.close()
    pool.join()
    sub = subprocess.run(
        [sys.executable, "-c", "import unmodpkg.runtime.jit as j; "
         "print(j.WHERE, os.environ.get('CHAINED'))".replace("os.", "__import__('os')."),
        ],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    print(json.dumps({"main": where(), "spawn": spawned, "subprocess": sub[0],
                      "chained": sub[1], "argv": sys.argv,
                      "path0": sys.path[0], "name": __name__}))


if __name__ == "__main__":
    main()
"""


def cli(
    *args: str,
    env: Optional[dict] = None,
    cwd: Optional[Path] = None,
    expect_rc: int = 0,
    pythonpath: tuple = (),
) -> subprocess.CompletedProcess:
    full_env = clean_env({**ENV, **(env or {})})
    full_env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), str(SRC), LIBRARY])
    proc = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", *args],
        env=full_env,
        cwd=NEUTRAL if cwd is None else cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != expect_rc:
        raise ScenarioError(
            f"exit code {proc.returncode}, expected {expect_rc}\n--- stdout\n{proc.stdout}"
            f"\n--- stderr\n{proc.stderr}"
        )
    return proc


def last_json(proc: subprocess.CompletedProcess) -> object:
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def children_script(tmp_path: Path) -> Path:
    script = tmp_path / "prog.py"
    script.write_text(CHILDREN)
    return script


def test_run_script_with_root_and_backend_specialises_it_and_its_children(children_script):
    out = last_json(cli("run", "-b", "zeta", "--root", "unmodpkg", str(children_script), "a", "-x"))
    assert out["main"] == "zeta"
    assert out["spawn"] == "zeta"  # multiprocessing, spawn start method
    assert out["subprocess"] == "zeta"  # subprocess running Python
    assert out["argv"] == [str(children_script), "a", "-x"]
    assert out["path0"] == str(children_script.parent)
    assert out["name"] == "__main__"


def test_run_without_it_the_same_program_sees_trunk(children_script):
    proc = subprocess.run(
        [sys.executable, str(children_script)],
        env={
            **clean_env({**ENV, "FLAGTREE_BACKEND": "zeta"}),
            "PYTHONPATH": os.pathsep.join([str(SRC), LIBRARY]),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    out = last_json(proc)
    assert (out["main"], out["spawn"], out["subprocess"]) == ("trunk", "trunk", "trunk")


def test_run_roots_from_flagtree_spec_auto(children_script):
    out = last_json(
        cli(
            "run",
            str(children_script),
            env={"FLAGTREE_SPEC_AUTO": "unmodpkg", "FLAGTREE_BACKEND": "zeta"},
        )
    )
    assert (out["main"], out["spawn"], out["subprocess"]) == ("zeta", "zeta", "zeta")


def test_run_children_still_run_the_environments_own_sitecustomize(tmp_path, children_script):
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    out = last_json(
        cli("run", "-b", "zeta", "--root", "unmodpkg", str(children_script), pythonpath=(custom,))
    )
    assert (out["subprocess"], out["chained"]) == ("zeta", "yes")


def test_run_module_with_arguments_that_look_like_options(tmp_path):
    (tmp_path / "tool.py").write_text(
        textwrap.dedent(
            """
            import json, sys
            import unmodpkg.runtime.jit as jit
            print(json.dumps([jit.WHERE, sys.argv[1:], __name__, sys.path[0]]))
            """
        )
    )
    out = last_json(
        cli(
            "run",
            "--root",
            "unmodpkg",
            "-b",
            "zeta",
            "-m",
            "tool",
            "-x",
            "--root",
            "y",
            cwd=tmp_path,
        )
    )
    assert out == ["zeta", ["-x", "--root", "y"], "__main__", str(tmp_path)]


def test_run_exit_code_of_the_program_is_the_exit_code(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(3)\n")
    cli("run", "--root", "unmodpkg", str(script), expect_rc=3)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["run", "prog.py"], {}, "--root R (repeatable) or FLAGTREE_SPEC_AUTO"),
        (["run", "--root", "unmodpkg"], {}, "give the program to run"),
        (["run", "--root", "unmodpkg", "-m"], {}, "-m needs a module name"),
        (["run", "--root", "unmodpkg", "-b", "../x", "prog.py"], {}, "not a backend name"),
        (["run", "--root", "unmodpkg.runtime", "prog.py"], {}, "not a top-level package"),
        (["run", "prog.py"], {"FLAGTREE_SPEC_AUTO": "a/b"}, "FLAGTREE_SPEC_AUTO="),
        (["run", "--root", "unmodpkg", "missing.py"], {}, "no such script 'missing.py'"),
        (["run", "--root", "unmodpkg", "-m", "no_such_module"], {}, "no module named"),
    ],
)
def test_run_usage_errors_exit_2(tmp_path, args, env, message):
    proc = cli(*args, env=env, cwd=tmp_path, expect_rc=2)
    assert message in proc.stderr


def test_autostart_enable_writes_one_pth_line_and_disable_removes_it(tmp_path):
    proc = cli("autostart", "enable", "--site-dir", str(tmp_path))
    pth = tmp_path / AUTOSTART_FILE
    assert pth.read_text() == AUTOSTART_LINE
    assert str(pth) in proc.stdout
    assert AUTOSTART_LINE.startswith("import ") and AUTOSTART_LINE.count("\n") == 1
    cli("autostart", "disable", "--site-dir", str(tmp_path))
    assert not pth.exists()
    proc = cli("autostart", "disable", "--site-dir", str(tmp_path))
    assert "was not enabled" in proc.stdout


def test_autostart_missing_site_dir_exits_2(tmp_path):
    proc = cli("autostart", "enable", "--site-dir", str(tmp_path / "nope"), expect_rc=2)
    assert "is not a directory" in proc.stderr


SITE_PROBE = """
import json, site, sys
site.addsitedir(%r)
import unmodpkg.runtime.jit as jit
print(json.dumps([jit.WHERE, "flagtree_spec" in sys.modules]))
"""


@pytest.mark.parametrize(
    ("auto", "expected"), [("unmodpkg", ["zeta", True]), ("", ["trunk", False])]
)
def test_autostart_line_starts_auto_mode_only_when_flagtree_spec_auto_is_set(
    tmp_path, auto, expected
):
    cli("autostart", "enable", "--site-dir", str(tmp_path))
    env = clean_env({**ENV, "FLAGTREE_BACKEND": "zeta", "FLAGTREE_SPEC_AUTO": auto})
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), LIBRARY])
    proc = subprocess.run(
        [sys.executable, "-c", SITE_PROBE % str(tmp_path)],
        env=env,
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout) == expected
    assert proc.stderr == ""


def test_autostart_line_is_harmless_when_the_library_is_not_installed(tmp_path):
    cli("autostart", "enable", "--site-dir", str(tmp_path))
    env = clean_env({"FLAGTREE_SPEC_AUTO": "unmodpkg"})
    env["PYTHONPATH"] = str(SRC)  # no library, and -S: no site-packages either
    proc = subprocess.run(
        [sys.executable, "-S", "-c", SITE_PROBE % str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout) == ["trunk", False]
    assert proc.stderr == ""


def test_run_children_that_cannot_import_the_library_get_it_from_the_startup_folder(tmp_path):
    from flagtree_spec._run import STARTUP_DIR

    env = clean_env({**ENV, "FLAGTREE_BACKEND": "zeta", "FLAGTREE_SPEC_AUTO": "unmodpkg"})
    env["PYTHONPATH"] = os.pathsep.join([STARTUP_DIR, str(SRC)])  # as run exports it
    proc = subprocess.run(
        [sys.executable, "-c", "import unmodpkg.runtime.jit as j, sys; print(j.WHERE)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (proc.stdout.strip(), proc.stderr) == ("zeta", "")


# ------------------------------------------------------------------ what children inherit

SPEC_ZETA = BACKENDS / "third_party" / "zeta" / "backend" / "spec"

CHILD_ELSEWHERE = """
import json, subprocess, sys
code = "import unmodpkg.runtime.jit as j; print(j.WHERE)"
out = subprocess.run([sys.executable, "-c", code], cwd={cwd!r}, capture_output=True, text=True,
                     check=True).stdout.strip()
print(json.dumps(out))
"""


def test_run_exports_a_relative_flagtree_spec_path_as_an_absolute_one(tmp_path: Path) -> None:
    """A child started in another folder must find the same spec roots."""
    script = tmp_path / "prog.py"
    script.write_text(CHILD_ELSEWHERE.format(cwd=str(tmp_path)))
    relative = os.path.relpath(SPEC_ZETA, NEUTRAL)
    out = last_json(
        cli("run", "--root", "unmodpkg", str(script), env={"FLAGTREE_SPEC_PATH": relative})
    )
    assert out == "zeta"


SHOW_PATHS = """
import json, subprocess, sys
child = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
                       capture_output=True, text=True, check=True).stdout
print(json.dumps({"main": sys.path, "child": json.loads(child)}))
"""

SAFE_PATH = sys.version_info >= (3, 11)


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        pytest.param((), {}, id="plain"),
        pytest.param(("-I",), {}, id="-I"),
        pytest.param(
            ("-P",),
            {},
            id="-P",
            marks=pytest.mark.skipif(not SAFE_PATH, reason="-P is new in CPython 3.11"),
        ),
        pytest.param(
            (),
            {"PYTHONSAFEPATH": "1"},
            id="PYTHONSAFEPATH",
            marks=pytest.mark.skipif(not SAFE_PATH, reason="PYTHONSAFEPATH is new in 3.11"),
        ),
        pytest.param((), {"EMPTY_ENTRIES": "1"}, id="empty-PYTHONPATH-entries"),
    ],
)
def test_run_leaves_sys_path_of_the_program_and_its_children_as_without_run(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str]
) -> None:
    script = tmp_path / "prog.py"
    script.write_text(SHOW_PATHS)
    full_env = clean_env(ENV)
    entries = [str(SRC), LIBRARY]
    if env.pop("EMPTY_ENTRIES", None):
        entries = ["", str(SRC), "", LIBRARY, ""]
    full_env["PYTHONPATH"] = os.pathsep.join(entries)
    full_env.update(env)

    def paths(*args: str) -> object:
        proc = subprocess.run(
            [sys.executable, *flags, *args],
            env=full_env,
            cwd=NEUTRAL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return last_json(proc)

    plain = paths(str(script))
    under_run = paths("-m", "flagtree_spec", "run", "--root", "unmodpkg", str(script))
    assert under_run == plain


@pytest.mark.parametrize("flags", [(), ("-W", "error")])
def test_run_m_pytest_under_warnings_as_errors_runs_the_suite(flags):
    # run imports the library before pytest starts, so pytest cannot rewrite the asserts of
    # the package its pytest11 plugin lives in; the PYTEST_DONT_REWRITE marker keeps it from
    # warning about that, which filterwarnings = error would make fatal.
    project = FIXTURES / "run_pytest_strict"
    proc = cli(
        "run",
        "-b",
        "zeta",
        "--root",
        "unmodpkg",
        "-m",
        "pytest",
        "-q",
        *flags,
        str(project),
        cwd=project,
    )
    assert "1 passed" in proc.stdout, proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout + proc.stderr


SHADOW = FIXTURES / "checkout_shadow"


def test_run_resolves_the_root_package_the_program_imports_not_a_checkout_in_the_working_folder(
    tmp_path: Path,
) -> None:
    script = tmp_path / "prog.py"
    script.write_text("import json, apkg.mod as m\nprint(json.dumps([m.WHERE, m.__file__]))\n")
    out = last_json(
        cli(
            "run", "--root", "apkg", str(script), cwd=SHADOW / "work", pythonpath=(SHADOW / "site",)
        )
    )
    assert out == [
        "m",
        str(SHADOW / "site" / "apkg" / "backends" / "m" / "spec" / "apkg" / "mod.py"),
    ]


SYS_PATH_CHANGED = """
import json, sys
import flagtree_spec
sys.path.insert(0, {work!r})
flagtree_spec.install("apkg")          # resolves apkg's state: the checkout's, for now
flagtree_spec.active("mkpkg")          # a read-only look, for a spec_path root
sys.path.remove({work!r})
import apkg.mod, mkpkg.runtime.jit
print(json.dumps([apkg.mod.WHERE, mkpkg.runtime.jit.WHERE,
                  flagtree_spec.active("apkg").backends, flagtree_spec.active("mkpkg").backends]))
"""


def test_install_then_a_sys_path_change_resolves_the_state_of_the_package_imported() -> None:
    from conftest import scenario

    out = scenario(
        SYS_PATH_CHANGED.format(work=str(SHADOW / "work")),
        path=[SHADOW / "site", FIXTURES / "marker_file" / "site-packages"],
    )
    assert out == ["m", "gamma", ["m"], ["gamma"]]


APP_MAIN = """
import json, os, sys
os.chdir({away!r})
import helper  # a module of the app itself, found through sys.path[0] after the chdir
import unmodpkg.runtime.jit as jit
print(json.dumps([sys.path[0], sys.argv, __file__, helper.WHERE, jit.WHERE]))
"""


@pytest.mark.parametrize("kind", ["folder", "zip"])
def test_run_of_a_folder_or_zip_app_puts_its_absolute_path_first_as_python_does(
    tmp_path: Path, kind: str
) -> None:
    import zipfile

    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text(APP_MAIN.format(away=str(NEUTRAL)))
    (app / "helper.py").write_text("WHERE = 'app'\n")
    name = "app"
    if kind == "zip":
        name = "app.pyz"
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            for f in app.iterdir():
                z.write(f, f.name)
    plain = subprocess.run(
        [sys.executable, name, "x"],
        env={**clean_env(ENV), "PYTHONPATH": os.pathsep.join([str(SRC), LIBRARY])},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.returncode == 0, plain.stderr
    out = last_json(cli("run", "-b", "zeta", "--root", "unmodpkg", name, "x", cwd=tmp_path))
    absolute = str(tmp_path / name)
    assert out == [absolute, [name, "x"], os.path.join(absolute, "__main__.py"), "app", "zeta"]
    assert out[:4] == last_json(plain)[:4]  # plain: the same, with trunk


def _old_python(version: str) -> Optional[str]:
    import glob

    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    return found[-1] if found else None


@pytest.mark.parametrize("version", ["2.7", "3.7", "3.8"])
def test_run_children_on_an_interpreter_the_library_does_not_support_start_quietly(
    tmp_path: Path, version: str
) -> None:
    python = _old_python(version)
    if python is None:
        pytest.skip(f"no CPython {version} installed under ~/.pyenv")
    from flagtree_spec._run import STARTUP_DIR

    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    env = clean_env({**ENV, "FLAGTREE_BACKEND": "zeta", "FLAGTREE_SPEC_AUTO": "unmodpkg"})
    # As run exports it: the start-up folder first, then the program's own entries.
    env["PYTHONPATH"] = os.pathsep.join([STARTUP_DIR, str(custom), str(SRC), LIBRARY])
    proc = subprocess.run(
        [python, "-c", "import os, sys; print(os.environ.get('CHAINED'))"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, "yes", "")
