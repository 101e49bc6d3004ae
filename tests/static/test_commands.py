"""status, which, list and diff; bad input reported as exit code 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from cli_support import make, run

from flagtree_spec._cli import main
from flagtree_spec._tools.model.source import Source

# The commands print absolute paths from there (text shows paths below the working folder
# relative to it: tests/static/test_output.py).
pytestmark = pytest.mark.usefixtures("outside_the_trees")

CHECK = Path(__file__).resolve().parent.parent.parent / "fixtures" / "check"
LIBRARY = str(Path(__import__("flagtree_spec").__file__).resolve().parent.parent)
SPEC = "from flagtree_spec import spec_path\nspec_path(__path__)\n"


def test_which_json_gives_file_and_candidates_highest_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts003_identical"
    code, out, _ = run(
        capsys,
        "which",
        "samepkg.util",
        "samepkg",
        "samepkg.nothing",
        "--repo",
        str(repo),
        "-b",
        "vendor",
        "--format",
        "json",
    )
    assert code == 1  # samepkg.nothing would not import
    mirror = repo / "third_party/vendor/backend/spec/samepkg"
    assert json.loads(out) == [
        {
            "module": "samepkg.util",
            "file": str(mirror / "util.py"),
            "candidates": [str(repo / "python/samepkg/util.py")],
        },
        {"module": "samepkg", "file": str(repo / "python/samepkg/__init__.py"), "candidates": []},
        {"module": "samepkg.nothing", "file": None, "candidates": []},
    ]


def test_which_without_backend_loads_trunk(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts003_identical"
    code, out, _ = run(capsys, "which", "samepkg.util", "--repo", str(repo), "--format", "json")
    assert json.loads(out)[0]["file"] == str(repo / "python/samepkg/util.py")
    assert code == 0


def test_which_rejects_name_outside_root_package(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "which", "os.path", "--repo", str(CHECK / "clean"))
    assert code == 2 and "not inside root package 'cleanpkg'" in err


def test_list_states_of_every_mirror_file(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts006_excluded"
    code, out, _ = run(capsys, "list", "--repo", str(repo), "-b", "vendor", "--format", "json")
    states = {row["module"]: row["state"] for row in json.loads(out)}
    assert states == {"exclpkg._C": "excluded", "exclpkg.kernels": "excluded"}
    assert code == 0
    code, out, _ = run(
        capsys, "list", "--repo", str(CHECK / "fts001_dead_override"), "-b", "vendor"
    )
    assert out.startswith("dead      deadpkg.plain.mod")


def test_status_json_names_stack_source_and_spec_roots(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts009_hooks"
    code, out, _ = run(capsys, "status", "--repo", str(repo), "-b", "vendor", "--format", "json")
    data = json.loads(out)
    assert (data["root"], data["stack"], data["stack_source"]) == (
        "hookpkg",
        ["vendor"],
        "--backend",
    )
    assert data["spec_roots"][0]["hooks"] == str(
        repo / "third_party/vendor/backend/spec/__init__.py"
    )
    assert code == 0


def test_diff_shows_override_against_shadowed_version(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts005_api_drift"
    code, out, _ = run(capsys, "diff", "driftpkg.api", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    assert out.startswith(f"--- {repo / 'python/driftpkg/api.py'}\n+++ ")
    assert "-def compile_kernel():" in out and "+    return 'vendor'" in out


def test_spec_root_option_adds_an_explicit_spec_root(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts008_added"
    root = repo / "third_party/vendor/backend/spec"
    code, out, _ = run(
        capsys,
        "which",
        "addpkg.vendor_only",
        "--trunk",
        str(repo / "python/addpkg"),
        "--spec-root",
        str(root),
        "--format",
        "json",
    )
    assert json.loads(out)[0]["file"] == str(root / "addpkg/vendor_only.py")
    assert code == 0


def test_bad_input_nonexistent_trunk_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "check", "--trunk", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


def test_bad_input_trunk_not_a_package_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "loose").mkdir()
    code, _, err = run(capsys, "which", "loose", "--trunk", str(tmp_path / "loose"))
    assert code == 2 and "is not a package: it has no __init__.py" in err


def test_bad_input_no_trunk_and_not_a_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "status", "--repo", str(tmp_path))
    assert code == 2 and "give the checkout's top folder, or --trunk DIR" in err
    assert "no trunk given" not in err  # --repo was given
    make(tmp_path, {"python/README.md": "", "third_party/vendor/README.md": ""})
    code, _, err = run(capsys, "status", "--repo", str(tmp_path))
    assert code == 2 and "is not a FlagTree-style repository: it has no package in python/" in err


def test_bad_input_invalid_declaration_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/declpkg/__init__.py": SPEC,
            "third_party/vendor/backend/spec/flagtree_spec.json": '{"mirrors": "declpkg"}',
        },
    )
    code, _, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 2 and "unknown key 'mirrors'" in err and "Traceback" not in err


def test_bad_input_undecodable_trunk_init_is_exit_2_with_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/encpkg/__init__.py": b"# coding: utf-8\n" + SPEC.encode() + b"X = '\xff'\n",
            "third_party/vendor/backend/spec/encpkg/mod.py": "X = 1\n",
        },
    )
    code, _, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    init = tmp_path / "python/encpkg/__init__.py"
    assert code == 2
    assert f"{init}:4:6: input error: its bytes do not decode as utf-8" in err
    # which answers too, and exits 2 like every command that met an input error
    code, out, err = run(capsys, "which", "encpkg.mod", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 2 and "encpkg.mod:" in out
    assert f"{init}:4:6: input error" in err


def test_bad_input_symlink_loop_in_spec_tree_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/looppkg/__init__.py": SPEC,
            "third_party/vendor/backend/spec/looppkg/sub/mod.py": "X = 1\n",
        },
    )
    sub = tmp_path / "third_party/vendor/backend/spec/looppkg/sub"
    os.symlink("..", sub / "again")
    os.symlink("self.py", sub / "self.py")
    code, _, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 2
    assert f"{sub / 'again'}:1:1: input error: symlink loop" in err
    assert f"{sub / 'self.py'}:1:1: input error: symlink loop" in err


def test_bad_input_unreadable_file_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "mod.py"
    folder.mkdir()  # reading a folder fails even for root
    source = Source(str(folder))
    assert source.tree is None and source.error is not None
    assert "cannot be read" in source.error.message


def test_bad_input_dangling_symlink_named_like_a_module_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/linkpkg/__init__.py": SPEC,
            "python/linkpkg/mod.py": "X = 1\n",
        },
    )
    mirror = tmp_path / "third_party/vendor/backend/spec/linkpkg"
    mirror.mkdir(parents=True)
    os.symlink("moved_away.py", mirror / "mod.py")  # the path finder skips it
    os.symlink("root@host.42", mirror / ".#editor-lock.py")  # not a module name: ignored
    code, out, _ = run(
        capsys, "which", "linkpkg.mod", "--repo", str(tmp_path), "-b", "vendor", "--format", "json"
    )
    assert json.loads(out)[0]["file"] == str(tmp_path / "python/linkpkg/mod.py")
    code, out, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert err.splitlines()[0] == (
        f"{mirror / 'mod.py'}:1:1: input error: dangling symlink: {mirror / 'mod.py'} points to "
        "moved_away.py, which does not exist, so Python skips it; fix or remove the link"
    )
    assert (code, out) == (2, "")
    code, _, err = run(capsys, "list", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 2 and "dangling symlink" in err


def test_nothing_of_trunk_or_backend_is_executed(tmp_path: Path) -> None:
    bomb = "import pathlib\npathlib.Path(__file__).with_name('EXECUTED').write_text('x')\n"
    make(
        tmp_path,
        {
            "python/bombpkg/__init__.py": SPEC + bomb,
            "python/bombpkg/mod.py": bomb,
            "third_party/vendor/backend/spec/__init__.py": bomb,
            "third_party/vendor/backend/spec/bombpkg/mod.py": bomb,
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env["PYTHONPATH"] = LIBRARY
    for command in ("status", "which", "list", "check"):
        args = [
            sys.executable,
            "-m",
            "flagtree_spec",
            command,
            "--repo",
            str(tmp_path),
            "-b",
            "vendor",
        ]
        if command == "which":
            args.append("bombpkg.mod")
        result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode in (0, 1), result.stderr
    assert not list(tmp_path.rglob("EXECUTED"))


def test_package_option_finds_installed_package_without_importing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(tmp_path, {"site/instpkg/__init__.py": "raise SystemExit('imported!')\n"})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    code, out, _ = run(capsys, "which", "instpkg", "--package", "instpkg", "--format", "json")
    assert code == 0
    assert json.loads(out)[0]["file"] == str(tmp_path / "site/instpkg/__init__.py")
    assert "instpkg" not in sys.modules


def test_help_of_every_command_names_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("status", "which", "list", "check", "diff"):
        with pytest.raises(SystemExit) as exc:
            main([command, "--help"])
        out = capsys.readouterr().out
        assert exc.value.code == 0 and "--trunk DIR" in out and "--format" in out
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "FTS014  [warning]" in capsys.readouterr().out


def test_status_text_shows_auto_mode_exclusions_and_declaration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts006_excluded"
    root = repo / "third_party/vendor/backend/spec"
    code, out, _ = run(capsys, "status", "--repo", str(repo), "-b", "vendor", "--auto")
    assert out.splitlines() == [
        f"root package  exclpkg  ({repo / 'python/exclpkg'})",
        "backend stack vendor  (--backend)",
        "mode          auto (every package is specialised)",
        f"spec root 1   {root}  [vendor, source]",
        f"  mirror      {root / 'exclpkg'}  (the spec root's exclpkg/ folder)",
        "  hooks       none  (no __init__.py in the spec root or in its exclpkg/ folder)",
        "  exclude     exclpkg._C",
        f"  declaration {root / 'flagtree_spec.json'}",
    ]
    assert code == 0


def test_status_without_backend_says_nothing_is_specialised(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "status", "--repo", str(CHECK / "clean"))
    assert out.splitlines()[1:] == [
        "backend stack none  (no backend set)",
        "spec roots    none: nothing is specialised",
    ]
    assert code == 0


def test_backend_stack_comes_from_flagtree_backend_when_no_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAGTREE_BACKEND", "vendor")
    code, out, _ = run(capsys, "status", "--repo", str(CHECK / "clean"), "--format", "json")
    data = json.loads(out)
    assert (data["stack"], data["stack_source"]) == (["vendor"], "FLAGTREE_BACKEND")
    assert code == 0


def test_which_text_names_origin_shadowed_files_and_package_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts003_identical"
    trunk = repo / "python/samepkg"
    mirror = repo / "third_party/vendor/backend/spec/samepkg"
    code, out, _ = run(
        capsys,
        "which",
        "samepkg.util",
        "samepkg",
        "samepkg.nothing",
        "samepkg.util.sub",
        "--repo",
        str(repo),
        "-b",
        "vendor",
    )
    assert out.splitlines() == [
        f"samepkg.util: {mirror / 'util.py'}  [backend vendor]",
        f"  shadows {trunk / 'util.py'}",
        f"samepkg: {trunk / '__init__.py'}  [trunk]",
        f"  package, specialised; __path__: {mirror}, {trunk}",
        "samepkg.nothing: does not import (no folder on its parent's __path__ has it)",
        "samepkg.util.sub: does not import (its parent samepkg.util is a module, not a package)",
    ]
    assert code == 1  # samepkg.nothing would not import


def test_which_text_of_package_that_never_calls_spec_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts001_dead_override"
    code, out, _ = run(capsys, "which", "deadpkg.plain", "--repo", str(repo), "-b", "vendor")
    plain = repo / "python/deadpkg/plain"
    assert out.splitlines()[1] == (
        f"  package, not specialised (no spec_path call); __path__: {plain}"
    )
    assert code == 0


def test_which_rejects_a_name_that_is_not_a_dotted_module_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "which", "cleanpkg..x", "--repo", str(CHECK / "clean"))
    assert code == 2 and "'cleanpkg..x' is not a dotted module name" in err


def test_list_without_a_mirror_tree_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--repo", str(CHECK / "clean"))
    assert out == "no overrides: no spec root with a mirror tree (see flagtree-spec status)\n"
    assert code == 0


def test_diff_of_module_that_does_not_import_is_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(
        capsys, "diff", "cleanpkg.nothing", "--repo", str(CHECK / "clean"), "-b", "vendor"
    )
    assert code == 2
    assert "cleanpkg.nothing does not import (no folder on its parent's __path__ has it)" in err


def test_diff_of_trunk_module_says_nothing_overrides_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "clean"
    code, out, _ = run(capsys, "diff", "cleanpkg.user", "--repo", str(repo), "-b", "vendor")
    user = repo / "python/cleanpkg/user.py"
    assert out == f"cleanpkg.user loads from trunk ({user}); nothing overrides it\n"
    assert code == 0


def test_diff_of_added_module_is_against_dev_null(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts008_added"
    code, out, _ = run(
        capsys,
        "diff",
        "addpkg.vendor_only",
        "--repo",
        str(repo),
        "-b",
        "vendor",
        "--format",
        "json",
    )
    added = repo / "third_party/vendor/backend/spec/addpkg/vendor_only.py"
    data = json.loads(out)
    assert (data["file"], data["shadows"]) == (str(added), None)
    assert data["diff"].startswith(f"--- /dev/null\n+++ {added}\n@@ -0,0 +1")
    assert code == 0


def test_diff_of_byte_identical_override_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/samepkg/__init__.py": SPEC,
            "python/samepkg/util.py": "X = 1\n",
            "third_party/vendor/backend/spec/samepkg/util.py": "X = 1\n",
        },
    )
    code, out, _ = run(capsys, "diff", "samepkg.util", "--repo", str(tmp_path), "-b", "vendor")
    trunk = tmp_path / "python/samepkg/util.py"
    assert out == f"samepkg.util: the override is identical to {trunk}\n"
    assert code == 0


def test_diff_of_compiled_override_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    repo = CHECK / "fts011_compiled"
    code, _, err = run(capsys, "diff", "binpkg.helper", "--repo", str(repo), "-b", "vendor")
    assert code == 2 and "is not a source file; cannot diff" in err


def test_diff_decodes_files_per_their_coding_declaration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/encpkg/__init__.py": SPEC,
            "python/encpkg/text.py": "NAME = 'e'\n",
            "third_party/vendor/backend/spec/encpkg/text.py": (
                "# -*- coding: latin-1 -*-\nNAME = '\xe9'\n".encode("latin-1")
            ),
        },
    )
    code, out, _ = run(capsys, "diff", "encpkg.text", "--repo", str(tmp_path), "-b", "vendor")
    assert "+NAME = '\xe9'\n" in out and "\ufffd" not in out
    assert code == 0


def test_diff_of_undecodable_override_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/encpkg/__init__.py": SPEC,
            "python/encpkg/text.py": "NAME = 'e'\n",
            "third_party/vendor/backend/spec/encpkg/text.py": b"X = 1\nY = 2\nNAME = '\xff'\n",
        },
    )
    code, _, err = run(capsys, "diff", "encpkg.text", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 2
    assert "cannot diff" in err and "its bytes do not decode as utf-8" in err


def test_bad_input_repo_that_is_not_a_directory_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "status", "--repo", str(tmp_path / "nope"))
    assert code == 2 and "is not a directory" in err


def test_bad_input_repo_with_several_packages_none_mirrored_asks_for_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {"python/apkg/__init__.py": "", "python/bpkg/__init__.py": "", "third_party/x/y": ""},
    )
    code, _, err = run(capsys, "status", "--repo", str(tmp_path))
    assert code == 2
    assert "holds several packages (apkg, bpkg) and no spec root under" in err
    assert f"choose one with --root apkg (short for --trunk {tmp_path}" in err


def test_bad_input_trunk_that_is_a_file_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(tmp_path, {"pkg": ""})
    code, _, err = run(capsys, "status", "--trunk", str(tmp_path / "pkg"))
    assert code == 2 and "is not a directory; give the root package's folder" in err


def test_bad_input_trunk_folder_not_named_like_a_package_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(tmp_path, {"my-pkg/__init__.py": ""})
    code, _, err = run(capsys, "status", "--trunk", str(tmp_path / "my-pkg"))
    assert code == 2 and "trunk folder name 'my-pkg' is not a top-level package name" in err


def test_bad_input_spec_root_that_does_not_exist_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "status", "--repo", str(CHECK / "clean"), "--spec-root", str(tmp_path / "nope")
    )
    assert code == 2 and f"--spec-root {str(tmp_path / 'nope')!r} does not exist" in err


@pytest.mark.parametrize(
    ("package", "message"),
    [
        ("a.b", "--package 'a.b': give a top-level package name"),
        ("no_such_pkg_xyz", "--package 'no_such_pkg_xyz' is not installed in this Python"),
        ("textwrap", "--package 'textwrap' is not a regular package"),
    ],
)
def test_bad_input_package_option_is_exit_2(
    capsys: pytest.CaptureFixture[str], package: str, message: str
) -> None:
    code, _, err = run(capsys, "status", "--package", package)
    assert code == 2 and message in err


def test_bad_input_package_already_imported_without_spec_is_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "specless_pkg", types.ModuleType("specless_pkg"))
    code, _, err = run(capsys, "status", "--package", "specless_pkg")
    assert code == 2 and "--package 'specless_pkg': specless_pkg.__spec__ is None" in err
