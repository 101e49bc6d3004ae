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
    except ImportError:  # trunk code guarding an optional import must not swallow it
        calls.append("swallowed by except ImportError")
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
