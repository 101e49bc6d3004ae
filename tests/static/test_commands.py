"""status, which, list and diff; bad input reported as exit code 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flagtree_spec._cli import main
from flagtree_spec._model import Source

CHECK = Path(__file__).resolve().parent.parent.parent / "fixtures" / "check"
LIBRARY = str(Path(__import__("flagtree_spec").__file__).resolve().parent.parent)
SPEC = "from flagtree_spec import spec_path\nspec_path(__path__)\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def make(base: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


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
    assert code == 0
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
    assert code == 2 and "pass --trunk DIR" in err


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


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads every file")
def test_bad_input_unreadable_override_is_fts010(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/permpkg/__init__.py": SPEC,
            "python/permpkg/mod.py": "X = 1\n",
            "third_party/vendor/backend/spec/permpkg/mod.py": "X = 2\n",
        },
    )
    override = tmp_path / "third_party/vendor/backend/spec/permpkg/mod.py"
    override.chmod(0)
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert code == 1 and f"{override}:1:1: FTS010 cannot be read" in out


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
