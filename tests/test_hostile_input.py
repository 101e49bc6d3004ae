"""Hostile and broken input: every case has one exact, documented outcome.

Names already covered by tests/test_selection.py at the parser level are
driven end to end here (through ``FLAGTREE_BACKEND`` in a fresh interpreter
and through ``activate()``).  Every fresh-interpreter case also checks that no
module was loaded from outside the standard library, the library, the trunk
and the spec roots it was given, and that the specialised package's
``__path__`` is complete (the trunk value, or the trunk value with the mirror
first), never half-changed.
"""

from __future__ import annotations

import os
import py_compile
import stat
import sys
import textwrap
import time
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from conftest import LIBRARY, SOURCE_PY, run_python, scenario

from flagtree_spec import SpecConfigError, SpecError
from flagtree_spec._config import quote, read_declaration, read_marker

TRUNK = SOURCE_PY / "fixpkg"
RUNTIME = str(TRUNK / "runtime")

PRELUDE = """
import json, os, sys, sysconfig

def outcome(fn):
    try:
        return ["ok", fn()]
    except BaseException as exc:
        cause = exc.__cause__
        return [type(exc).__name__, str(exc), type(cause).__name__ if cause else None]

"""
EPILOGUE = """
allowed = [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")]
allowed += [os.path.join({library!r}, "flagtree_spec"), {trunk!r}, *{roots!r}]
outside = sorted(
    [name, m.__file__] for name, m in list(sys.modules.items())
    if getattr(m, "__file__", None)
    and not any(os.path.abspath(m.__file__).startswith(os.path.join(a, "")) for a in allowed)
)
runtime = sys.modules.get("fixpkg.runtime")
print(json.dumps({{"result": result, "outside": outside,
                  "runtime": list(runtime.__path__) if runtime else None}}))
"""


def case(body: str, *, env=None, roots=(), path=(SOURCE_PY,), **kwargs) -> dict:
    """Run *body* (which sets ``result``) in a fresh interpreter and audit what it loaded."""
    code = (
        PRELUDE
        + textwrap.dedent(body)
        + EPILOGUE.format(library=LIBRARY, trunk=str(path[0]), roots=[str(r) for r in roots])
    )
    out = scenario(code, env=env, path=path, **kwargs)
    assert out["outside"] == [], "a module was loaded from outside the trunk and spec roots"
    return out


IMPORT_RUNTIME = "result = outcome(lambda: __import__('fixpkg.runtime.jit').runtime.jit.WHERE)\n"


# --------------------------------------------------------------- backend names, end to end

NAME_RULE = "is not a backend name (letters, digits, '_' and '-' only"


@pytest.mark.parametrize(
    "value",
    [
        "..",
        "alpha/../beta",
        "/etc/passwd",
        "alpha\x1b[31m",
        "al\rpha",
        "x" * 10000,
        "\uff41\uff4c\uff50\uff48\uff41",  # fullwidth 'alpha'
        "alpha\u200b",  # zero-width space: not stripped, not a name
        "alpha\u202e",  # right-to-left override
        "\udcff",  # an undecodable byte in the environment (surrogateescape)
    ],
    ids=lambda value: ascii(value)[:24],
)
def test_hostile_backend_name_in_environment_fails_the_import_naming_the_value(value):
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_BACKEND": value})
    kind, message, _ = out["result"]
    assert kind == "SpecConfigError"
    assert message.startswith(f"FLAGTREE_BACKEND={quote(value)}")
    assert NAME_RULE in message
    assert len(message) < 500  # a 10,000-character value is shortened, not echoed
    assert out["runtime"] is None  # the root package's import failed before any path changed


def test_nul_in_backend_name_cannot_reach_the_environment():
    # The operating system cannot carry NUL in an environment variable; Python refuses it.
    with pytest.raises(ValueError, match="embedded null byte"):
        run_python("pass", env={"FLAGTREE_BACKEND": "alpha\x00../x"})


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("..", "'..'"),
        ("a/b", "'a/b'"),
        ("a\x00b", "'a\\x00b'"),
        ("\x7f", "'\\x7f'"),
        ("x" * 10000, "(10000 characters)"),
        ("\uff41\uff4c\uff50\uff48\uff41", "'\uff41\uff4c\uff50\uff48\uff41'"),
        (["alpha", "../x"], "'../x'"),
        (b"alpha", "b'alpha'"),
    ],
    ids=lambda value: ascii(value)[:24],
)
def test_hostile_backend_name_in_activate_is_an_error_and_changes_nothing(
    import_state, value, shown
):
    sys.path.insert(0, str(SOURCE_PY))
    os.environ.pop("FLAGTREE_BACKEND", None)
    import fixpkg.runtime as runtime

    from flagtree_spec import _activate, _calls, activate

    path, before = runtime.__path__, list(runtime.__path__)
    state, dispatch = _activate._snapshot(), _calls.dispatch()
    with pytest.raises(SpecError) as info:
        activate(value)
    assert shown in str(info.value)
    assert str(info.value).startswith("activate(backend=")
    assert runtime.__path__ is path and path == before
    assert _activate._snapshot() == state and _calls.dispatch() == dispatch


# --------------------------------------------------------------------- FLAGTREE_SPEC_PATH


def mirror(root: Path, rel: str, text: str) -> Path:
    """Write *text* to ``<root>/fixpkg/<rel>`` (creating folders) and return the file."""
    target = root / "fixpkg" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target


def test_spec_path_of_only_separators_is_a_no_op():
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": os.pathsep * 3})
    assert out["result"] == ["ok", "trunk"] and out["runtime"] == [RUNTIME]


def test_relative_spec_path_entry_is_resolved_once_and_a_later_chdir_does_not_move_it(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for where in (first, second):
        mirror(where / "spec", "runtime/jit.py", f"WHERE = {where.name!r}\n")
    out = case(
        f"""
        import fixpkg.runtime as r
        from flagtree_spec import activate
        before = list(r.__path__)
        os.chdir({str(second)!r})
        activate(None)  # discovery runs again, in the new working directory
        import fixpkg.runtime.jit as jit
        result = [before, list(r.__path__), jit.WHERE]
        """,
        env={"FLAGTREE_SPEC_PATH": "spec"},
        cwd=first,
        roots=[first / "spec"],
    )
    expected = [str(first / "spec" / "fixpkg" / "runtime"), RUNTIME]
    assert out["result"] == [expected, expected, "first"]


def test_symlinked_mirror_folder_leaving_the_spec_root_is_followed(tmp_path):
    # Python follows symlinks; the library does not resolve them (SECURITY.md).
    outside = tmp_path / "outside"
    mirror(outside, "runtime/jit.py", "WHERE = 'outside'\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "fixpkg").symlink_to(outside / "fixpkg", target_is_directory=True)
    out = case(
        IMPORT_RUNTIME
        + "result.append(os.path.realpath(sys.modules['fixpkg.runtime.jit'].__file__))",
        env={"FLAGTREE_SPEC_PATH": str(root)},
        roots=[root],
    )
    assert out["result"] == ["ok", "outside", str(outside / "fixpkg" / "runtime" / "jit.py")]
    assert out["runtime"] == [str(root / "fixpkg" / "runtime"), RUNTIME]


def test_symlinked_override_file_leaving_the_spec_root_is_followed(tmp_path):
    evil = tmp_path / "elsewhere.py"
    evil.write_text("WHERE = 'elsewhere'\n")
    root = tmp_path / "root"
    (root / "fixpkg" / "runtime").mkdir(parents=True)
    (root / "fixpkg" / "runtime" / "jit.py").symlink_to(evil)
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": str(root)}, roots=[root])
    assert out["result"] == ["ok", "elsewhere"]


def test_spec_path_entry_that_is_a_symlink_loop_is_skipped_like_a_missing_one(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    out = case(
        IMPORT_RUNTIME,
        env={"FLAGTREE_SPEC_PATH": str(tmp_path / "a"), "FLAGTREE_SPEC_DEBUG": "1"},
    )
    assert out["result"] == ["ok", "trunk"] and out["runtime"] == [RUNTIME]


def test_symlink_loop_inside_a_mirror_tree_is_no_mirror_folder(tmp_path):
    (tmp_path / "fixpkg").mkdir()
    (tmp_path / "fixpkg" / "runtime").symlink_to(tmp_path / "fixpkg" / "runtime")
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": str(tmp_path)}, roots=[tmp_path])
    assert out["result"] == ["ok", "trunk"] and out["runtime"] == [RUNTIME]


def test_dangling_symlink_as_spec_path_entry_is_skipped(tmp_path):
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": str(tmp_path / "gone")})
    assert out["result"] == ["ok", "trunk"] and out["runtime"] == [RUNTIME]


# ------------------------------------------------------------------------------ markers


def marker(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "FLAGTREE_BACKEND"
    path.write_bytes(content)
    return path


def test_marker_of_only_whitespace_means_no_backend(tmp_path):
    marker(tmp_path, b"\n \t\r\n")
    assert read_marker(str(tmp_path)).stack == ()


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        (b"\xef\xbb\xbfalpha", "'\\ufeffalpha'"),  # a UTF-8 byte order mark
        (b"alpha\x00", "'alpha\\x00'"),
        (b"alpha\nbeta", "'alpha\\nbeta'"),
    ],
)
def test_marker_with_hidden_characters_is_config_error_quoting_them(tmp_path, content, shown):
    path = marker(tmp_path, content)
    with pytest.raises(SpecConfigError) as info:
        read_marker(str(tmp_path))
    assert str(info.value).startswith(f"backend marker {path}={shown}")


def test_marker_of_exactly_4096_bytes_is_read(tmp_path):
    marker(tmp_path, b"alpha" + b" " * 4091)
    assert read_marker(str(tmp_path)).stack == ("alpha",)


def test_huge_sparse_marker_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "FLAGTREE_BACKEND"
    with open(path, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB, read only up to the limit
    with pytest.raises(SpecConfigError, match="is larger than 4096 bytes"):
        read_marker(str(tmp_path))


def test_marker_that_is_a_fifo_is_config_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "FLAGTREE_BACKEND")
    with pytest.raises(SpecConfigError, match=r"is not a regular file \(a FIFO or a device\?\)"):
        read_marker(str(tmp_path))


def test_marker_linked_to_a_device_is_config_error(tmp_path):
    (tmp_path / "FLAGTREE_BACKEND").symlink_to("/dev/zero")
    with pytest.raises(SpecConfigError, match="is not a regular file"):
        read_marker(str(tmp_path))


def test_unreadable_marker_is_config_error_unless_the_process_can_read_anyway(tmp_path):
    path = marker(tmp_path, b"alpha\n")
    path.chmod(0)
    try:
        try:
            open(path, "rb").close()
            readable = True  # root (or a capability) reads through chmod 000
        except PermissionError:
            readable = False
        if readable:
            assert read_marker(str(tmp_path)).stack == ("alpha",)
        else:
            with pytest.raises(SpecConfigError, match=r"cannot read backend marker .*denied"):
                read_marker(str(tmp_path))
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_marker_module_nested_too_deeply_is_config_error(tmp_path):
    (tmp_path / "_flagtree_backend.py").write_text("FLAGTREE_BACKEND = " + "-" * 60000 + "1\n")
    with pytest.raises(SpecConfigError, match="it is too deeply nested to parse"):
        read_marker(str(tmp_path))


def test_marker_module_with_unknown_coding_cookie_is_config_error(tmp_path):
    (tmp_path / "_flagtree_backend.py").write_text('# coding: evil\nFLAGTREE_BACKEND = "a"\n')
    with pytest.raises(SpecConfigError, match="does not parse"):
        read_marker(str(tmp_path))


def test_marker_module_with_code_on_the_same_line_is_never_executed(tmp_path):
    site = tmp_path / "site"
    shutil_copy_package(site)
    pwned = tmp_path / "PWNED"
    (site / "fixpkg" / "_flagtree_backend.py").write_text(
        f'FLAGTREE_BACKEND = "alpha"; open({str(pwned)!r}, "w").close()\n'
    )
    out = case(IMPORT_RUNTIME, path=[site], env={"FLAGTREE_SPEC_STRICT": "1"})
    assert out["result"][0] == "SpecConfigError"
    assert "exactly one top-level FLAGTREE_BACKEND" in out["result"][1]
    assert not pwned.exists()


def shutil_copy_package(site: Path) -> None:
    import shutil

    shutil.copytree(TRUNK, site / "fixpkg", ignore=shutil.ignore_patterns("__pycache__"))


# ----------------------------------------------------------------- declarations


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"hooks": "../outside.py"}', "'hooks'='../outside.py' must stay inside the spec root"),
        ('{"mirror": "/etc"}', "'mirror'='/etc' must stay inside the spec root"),
        ('{"mirror": "a/../../b"}', "must stay inside the spec root"),
        ('{"exclude": [NaN]}', "NaN is not strict JSON"),
        ('{"mirror": "x", "mirror": "y"}', "key 'mirror' appears twice"),
        ('{"base": ["../up"]}', "'../up' is not a backend name"),
    ],
)
def test_declaration_that_reaches_out_or_is_not_strict_json_is_config_error(tmp_path, text, why):
    (tmp_path / "flagtree_spec.json").write_text(text)
    with pytest.raises(SpecConfigError) as info:
        read_declaration(str(tmp_path))
    assert why in str(info.value)


# --------------------------------------------------------------------------- hook modules


HOOK_CALL = """
import fixpkg
from flagtree_spec import spec
calls = []
for _ in range(2):
    try:
        spec("anything")
    except BaseException as exc:
        calls.append([type(exc).__name__, type(exc.__cause__).__name__ if exc.__cause__ else None])
result = [calls, len(getattr(sys, "_hook_runs", []))]
"""


@pytest.mark.parametrize(
    ("source", "calls", "runs"),
    [
        # An import error inside the hook module: SpecImportError, cached, executed once.
        ("import no_such_module_xyz\n", [["SpecImportError", "ModuleNotFoundError"]] * 2, 1),
        ("raise ImportError('no driver')\n", [["SpecImportError", "ImportError"]] * 2, 1),
        # BaseExceptions that are not Exceptions propagate unwrapped and are not cached.
        ("raise KeyboardInterrupt\n", [["KeyboardInterrupt", None]] * 2, 2),
        ("class Stop(BaseException): pass\nraise Stop\n", [["Stop", None]] * 2, 2),
    ],
)
def test_hook_module_failure_outcomes(tmp_path, source, calls, runs):
    (tmp_path / "__init__.py").write_text(
        "import sys\nsys.__dict__.setdefault('_hook_runs', []).append(1)\n" + source
    )
    out = case(HOOK_CALL, env={"FLAGTREE_SPEC_PATH": str(tmp_path)}, roots=[tmp_path])
    assert out["result"] == [calls, runs]


# ---------------------------------------------------------------------------- mirror trees


def test_stray_pyc_in_a_mirror_overrides_the_trunk_module(tmp_path):
    # Compiled files in a mirror load like source (check reports them: FTS011).
    source = tmp_path / "src.py"
    source.write_text("WHERE = 'compiled'\n")
    (tmp_path / "fixpkg" / "runtime").mkdir(parents=True)
    py_compile.compile(str(source), cfile=str(tmp_path / "fixpkg" / "runtime" / "jit.pyc"))
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": str(tmp_path)}, roots=[tmp_path])
    assert out["result"] == ["ok", "compiled"]


def test_mirror_folder_with_only_init_pyc_is_a_package(tmp_path):
    source = tmp_path / "src.py"
    source.write_text("WHERE = 'bytecode package'\n")
    package = tmp_path / "fixpkg" / "runtime" / "newpkg"
    package.mkdir(parents=True)
    py_compile.compile(str(source), cfile=str(package / "__init__.pyc"))
    out = case(
        "import fixpkg.runtime.newpkg as n\nresult = [n.WHERE, n.__path__ == [n.__path__[0]]]",
        env={"FLAGTREE_SPEC_PATH": str(tmp_path)},
        roots=[tmp_path],
    )
    assert out["result"] == ["bytecode package", True]


def test_fake_extension_module_in_a_mirror_fails_the_import_without_falling_back(tmp_path):
    fake = mirror(tmp_path, "runtime/jit" + EXTENSION_SUFFIXES[0], "not an ELF file\n")
    out = case(IMPORT_RUNTIME, env={"FLAGTREE_SPEC_PATH": str(tmp_path)}, roots=[tmp_path])
    kind, message, _ = out["result"]
    assert kind == "ImportError" and str(fake) in message
    assert out["runtime"] == [str(tmp_path / "fixpkg" / "runtime"), RUNTIME]


def test_mirror_files_with_names_that_are_not_identifiers(tmp_path):
    for name in ("my-mod.py", "1st.py", "jit.py.orig", "JIT.py"):
        mirror(tmp_path, f"runtime/{name}", f"WHERE = {name!r}\n")
    out = case(
        """
        import importlib, fixpkg.runtime.jit as jit
        result = [jit.WHERE, importlib.import_module("fixpkg.runtime.my-mod").WHERE,
                  outcome(lambda: importlib.import_module("fixpkg.runtime.jit.py")),
                  outcome(lambda: importlib.import_module("fixpkg.runtime.1st").WHERE)]
        """,
        env={"FLAGTREE_SPEC_PATH": str(tmp_path)},
        roots=[tmp_path],
    )
    # Python itself does not check names given as strings; a plain import cannot name them.
    assert out["result"][:2] == ["trunk", "my-mod.py"]
    assert out["result"][2][0] == "ModuleNotFoundError"
    assert out["result"][3] == ["ok", "1st.py"]


def test_mirror_init_of_the_root_package_never_runs(tmp_path):
    mirror(
        tmp_path, "__init__.py", "raise AssertionError('a root package init is never overridden')\n"
    )
    out = case(
        "import fixpkg\nresult = [fixpkg.WHERE, fixpkg.__file__]",
        env={"FLAGTREE_SPEC_PATH": str(tmp_path)},
        roots=[tmp_path],
    )
    assert out["result"] == ["trunk", str(TRUNK / "__init__.py")]


# ------------------------------------------------------------------ bounded input sizes


def test_declaration_nested_20000_levels_is_config_error_naming_the_file(tmp_path):
    root = tmp_path / "spec"
    root.mkdir()
    declaration = root / "flagtree_spec.json"
    declaration.write_text("[" * 20000 + "]" * 20000)  # 40,000 bytes: under the size limit
    with pytest.raises(SpecConfigError, match="nested too deeply") as info:
        read_declaration(str(root))
    assert str(declaration) in str(info.value)
    proc = run_python(
        "import fixpkg.runtime", env={"FLAGTREE_SPEC_PATH": str(root)}, expect_rc=1, timeout=30
    )
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("flagtree_spec.SpecConfigError: backend declaration ")
    assert str(declaration) in last and "RecursionError" not in proc.stderr


def test_backend_stack_of_40000_names_is_refused_at_once_with_its_limit():
    from flagtree_spec._config import MAX_STACK, parse_stack

    value = ",".join(["b"] * 40000)  # 80 KB: an environment variable holds at most 128 KiB
    start = time.perf_counter()
    with pytest.raises(
        SpecConfigError, match=f"names 40000 backends; a stack holds at most {MAX_STACK}"
    ):
        parse_stack(value, "FLAGTREE_BACKEND")
    assert time.perf_counter() - start < 0.1
    proc = run_python("import fixpkg", env={"FLAGTREE_BACKEND": value}, expect_rc=1, timeout=30)
    assert "a stack holds at most 64" in proc.stderr.strip().splitlines()[-1]


def test_backend_stack_parses_in_linear_time_up_to_its_limit():
    from flagtree_spec._config import MAX_STACK, parse_stack

    names = tuple(f"backend_{i}" for i in range(MAX_STACK))
    assert parse_stack(",".join(names), "FLAGTREE_BACKEND") == names
    with pytest.raises(SpecConfigError, match="twice"):
        parse_stack(",".join([*names[:-1], names[0]]), "FLAGTREE_BACKEND")


def test_many_backends_that_exist_nowhere_give_one_warning():
    value = ",".join(f"ghost{i}" for i in range(60))
    out = scenario(
        """
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import fixpkg.runtime
        print(json.dumps([str(w.message) for w in caught]))
        """,
        env={"FLAGTREE_BACKEND": value},
    )
    assert len(out) == 1
    assert out[0].startswith("FLAGTREE_BACKEND names 60 backends that exist nowhere for package ")
    assert "'ghost0', 'ghost1', 'ghost2', 'ghost3', 'ghost4' and 55 more" in out[0]


FINGERPRINT = """
import json, flagtree_spec, fixpkg.runtime
print(json.dumps(flagtree_spec.fingerprint("fixpkg")))
"""


def test_fingerprint_never_hashes_outside_the_spec_root_through_a_symlink(tmp_path):
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    secret = outside / "secret.py"
    secret.write_text("A = 1\n")
    (outside / "folder" / "deep.py").write_text("B = 1\n")
    root = tmp_path / "spec"
    mirror = root / "fixpkg" / "runtime"
    mirror.mkdir(parents=True)
    (mirror / "jit.py").write_text("WHERE = 'spec'\n")
    (mirror / "linked.py").symlink_to(secret)
    (mirror / "linked_folder").symlink_to(outside / "folder")
    env = {"FLAGTREE_SPEC_PATH": str(root)}
    first = scenario(FINGERPRINT, env=env)
    secret.write_text("A = 2\n")
    (outside / "folder" / "deep.py").write_text("B = 2\n")
    assert scenario(FINGERPRINT, env=env) == first  # what the links reach is never read
    (mirror / "linked.py").unlink()
    (mirror / "linked.py").symlink_to(outside / "folder" / "deep.py")
    assert scenario(FINGERPRINT, env=env) != first  # where a link points is digested
    (mirror / "jit.py").write_text("WHERE = 'changed'\n")
    assert len({first, scenario(FINGERPRINT, env=env)}) == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_entry_points_txt_that_is_a_fifo_never_hangs_discovery(tmp_path):
    site = tmp_path / "site"
    meta = site / "hostile-1.0.dist-info"
    meta.mkdir(parents=True)
    os.mkfifo(meta / "entry_points.txt")
    out = scenario(
        """
        import json, fixpkg.runtime.jit as jit
        from flagtree_spec._entrypoints import scan
        print(json.dumps([jit.WHERE, scan()]))
        """,
        env={"FLAGTREE_BACKEND": "alpha"},
        path=(SOURCE_PY, site),
        timeout=30,
    )
    assert out == ["alpha", []]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fingerprint_of_a_spec_root_holding_a_fifo_never_hangs(tmp_path):
    root = tmp_path / "spec"
    (root / "fixpkg").mkdir(parents=True)
    os.mkfifo(root / "fixpkg" / "pipe")
    out = scenario(FINGERPRINT, env={"FLAGTREE_SPEC_PATH": str(root)}, timeout=30)
    assert len(out) == 64


SPAWNED_HOOK = """
import json, multiprocessing, pickle, sys
sys.path.insert(0, {helper!r})
import spawn_init


def main():
    from flagtree_spec import activate, spec_func
    import fixpkg
    activate("alpha,beta")
    data = pickle.dumps(spec_func("init_language"))
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(1)
    bare = pool.apply(spawn_init.try_call, (data,))
    pool.close()
    pool.join()
    pool = ctx.Pool(1, initializer=spawn_init.init, initargs=("alpha,beta",))
    initialised = pool.apply(spawn_init.call, (data,))
    pool.close()
    pool.join()
    print(json.dumps([bare, initialised]))


if __name__ == "__main__":
    main()
"""


def test_hook_pickled_to_a_spawn_worker_after_activate_needs_the_state_there(tmp_path):
    """The documented limit: activate() does not reach a child; a clear error says so."""
    helper = str(Path(__file__).resolve().parent.parent / "fixtures" / "spawn_helper")
    script = tmp_path / "main.py"
    script.write_text(SPAWNED_HOOK.format(helper=helper))
    out = scenario(
        f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", timeout=120
    )
    bare, initialised = out
    assert bare[0] == "ModuleNotFoundError"
    assert "hook module of backend 'alpha'" in bare[1]
    assert "activate() does not reach child processes" in bare[1]
    assert initialised == "alpha"


def test_check_on_a_declaration_nested_20000_levels_exits_2_with_one_line(tmp_path):
    import shutil
    import subprocess

    from conftest import SOURCE, clean_env

    repo = tmp_path / "repo"
    shutil.copytree(SOURCE, repo, ignore=shutil.ignore_patterns("__pycache__"))
    declaration = repo / "third_party" / "alpha" / "backend" / "spec" / "flagtree_spec.json"
    declaration.write_text("[" * 20000 + "]" * 20000)
    env = clean_env()
    env["PYTHONPATH"] = LIBRARY
    proc = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", "check", "-b", "alpha"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    # The file is named relative to the working folder, the repository.
    assert line == (
        f"flagtree-spec check: error: backend declaration {declaration.relative_to(repo)}: "
        'nested too deeply to read; a declaration is a flat object like {"mirror": "triton"}'
    )


def test_a_chain_of_1200_base_declarations_is_a_config_error_for_the_runtime_and_status(
    tmp_path: Path,
) -> None:
    import subprocess

    from conftest import clean_env

    repo = tmp_path / "repo"
    pkg = repo / "python" / "chainpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from flagtree_spec import spec_path\nspec_path(__path__)\n")
    for i in range(1200):
        spec = repo / "third_party" / f"b{i}" / "backend" / "spec"
        spec.mkdir(parents=True)
        (spec / "flagtree_spec.json").write_text(f'{{"base": ["b{i + 1}"]}}' if i < 1199 else "{}")
    out = scenario(
        """
        import json
        try:
            import chainpkg
        except Exception as exc:
            print(json.dumps([type(exc).__name__, str(exc)]))
        """,
        path=[repo / "python"],
        env={"FLAGTREE_BACKEND": "b0"},
    )
    assert out[0] == "SpecConfigError" and "at most 64 backends, bases included" in out[1]
    env = clean_env()
    env["PYTHONPATH"] = LIBRARY
    proc = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", "status", "-b", "b0"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "at most 64 backends" in proc.stderr and "Traceback" not in proc.stderr


def test_flagtree_spec_disable_holds_at_most_64_names() -> None:
    code = """
        import json
        try:
            import fixpkg.runtime.jit as jit
            print(json.dumps(jit.WHERE))
        except Exception as exc:
            print(json.dumps(f"{type(exc).__name__}: {exc}"))
    """
    many = ",".join(f"fixpkg.m{i}" for i in range(10_000))
    out = scenario(code, env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_DISABLE": many})
    assert out.startswith("SpecConfigError: FLAGTREE_SPEC_DISABLE=") and "names 10000" in out
    assert "at most 64" in out and len(out) < 400  # the value is quoted shortened
    most = ",".join(["fixpkg.runtime.jit", *(f"fixpkg.m{i}" for i in range(63))])
    assert scenario(code, env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_DISABLE": most}) == (
        "trunk"
    )


def test_flagtree_spec_auto_holds_at_most_64_roots_and_start_up_goes_on() -> None:
    proc = run_python(
        """
        import json, sys
        from flagtree_spec._auto import start_from_environment
        print(json.dumps([start_from_environment(), "AutoFinder" in repr(sys.meta_path)]))
        """,
        env={"FLAGTREE_SPEC_AUTO": ",".join(f"r{i}" for i in range(15_000))},
    )
    assert proc.stdout.strip() == "[[], false]"
    assert "auto mode not started: FLAGTREE_SPEC_AUTO=" in proc.stderr
    assert "names 15000 modules; it holds at most 64" in proc.stderr
