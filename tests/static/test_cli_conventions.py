"""What every command shares: argparse's behaviour, one error line, declared formats,
one configuration; and the wording of the first mistakes."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_support import make, run
from conftest import FIXTURES, run_python

from flagtree_spec._cli import build_parser
from flagtree_spec._usage import FORMATS

CHECK = FIXTURES / "check"
SPEC = "from flagtree_spec import spec_path\n\nspec_path(__path__)\n"
STATIC = ("status", "which", "list", "check", "diff", "lock", "rebase")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


# --------------------------------------------------------------------------- argparse


def test_no_command_accepts_an_abbreviated_option_and_each_names_the_full_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands = _commands()
    assert set(commands) >= {*STATIC, "migrate", "rule", "run", "autostart"}
    for name, parser in commands.items():
        assert parser.allow_abbrev is False, name
        longs = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
        option = next(o for o in longs if len(o) > 6 and o != "--help")
        positional = {"which": ["x.y"], "diff": ["x.y"], "autostart": ["enable"]}.get(name, [])
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args([name, *positional, option[:5]])
        assert exit_info.value.code == 2, name
        err = capsys.readouterr().err
        # The command's own usage, and its error line, not the top level's.
        assert err.startswith(f"usage: flagtree-spec {name} "), (name, err)
        assert f"flagtree-spec {name}: error: " in err, (name, err)
        if name not in ("run",):  # run passes unknown words to the program it runs
            assert f"{option[:5]} abbreviates " in err, (name, err)
    assert build_parser().allow_abbrev is False


def test_an_unknown_option_prints_the_commands_usage_and_a_close_match(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = None
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["check", "--backnd", "x"])
    code = exit_info.value.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("usage: flagtree-spec check [-h]")
    assert err.rstrip().endswith(
        "flagtree-spec check: error: unrecognized arguments: --backnd x (did you mean --backend?)"
    )


def test_every_command_reports_an_input_error_on_one_line_with_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    nowhere = str(tmp_path / "nowhere")
    for argv in (
        ["status", "--trunk", nowhere],
        ["which", "x.y", "--trunk", nowhere],
        ["list", "--trunk", nowhere],
        ["check", "--trunk", nowhere],
        ["diff", "x.y", "--trunk", nowhere],
        ["lock", "--trunk", nowhere],
        ["rebase", "--trunk", nowhere],
        ["migrate", "--repo", nowhere],
        ["rule", "FTS999"],
        ["run", "--root", "x", nowhere],
        ["autostart", "enable", "--site-dir", nowhere],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"flagtree-spec {argv[0]}: error: "), (
            argv,
            err,
        )


# --------------------------------------------------------------------------- formats


def test_each_command_takes_its_formats_and_refuses_the_others_naming_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = str(CHECK / "fts003_identical")
    for name in ("status", "which", "list", "diff", "lock", "rebase", "migrate", "rule"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([name, "--format", "github"])
        err = capsys.readouterr().err.splitlines()[-1]
        assert err == (
            f"flagtree-spec {name}: error: --format github (GitHub Actions workflow annotations) "
            f"is not a format of {name}, which writes text, json; check writes github"
        ), err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["list", "--format", "xml"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "flagtree-spec list: error: --format 'xml' is not an output format; list writes text, json"
    )
    for fmt in FORMATS:
        code, out, err = run(capsys, "check", "--repo", repo, "-b", "vendor", "--format", fmt)
        assert code == 0 and out, (fmt, err)
    for name, argv in (("which", ["samepkg.util"]), ("list", []), ("status", [])):
        code, out, _ = run(capsys, name, *argv, "--repo", repo, "-b", "vendor", "--format", "json")
        assert code == 0 and json.loads(out), name


# --------------------------------------------------------------------------- configuration


def _configured(tmp_path: Path, table: str) -> Path:
    make(
        tmp_path,
        {
            "pyproject.toml": table,
            "python/cfgpkg/__init__.py": SPEC,
            "python/cfgpkg/ops.py": "def f():\n    return 'trunk'\n",
            "third_party/acme/backend/spec/cfgpkg/ops.py": "def f():\n    return 'acme'\n",
        },
    )
    return tmp_path


def test_every_command_reads_the_backend_of_tool_flagtree_spec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLAGTREE_BACKEND", raising=False)
    repo = _configured(tmp_path / "repo", '[tool.flagtree-spec]\nbackend = "acme"\n')
    monkeypatch.chdir(repo)
    override = "third_party/acme/backend/spec/cfgpkg/ops.py"
    code, out, _ = run(capsys, "status")
    assert code == 0 and "backend stack acme  ([tool.flagtree-spec] in pyproject.toml)" in out
    code, out, _ = run(capsys, "which", "cfgpkg.ops")
    assert out.splitlines()[0] == f"cfgpkg.ops: {override}  [backend acme]"
    code, out, _ = run(capsys, "list")
    assert out.startswith(f"override  cfgpkg.ops  {override}")
    code, out, _ = run(capsys, "diff", "cfgpkg.ops")
    assert out.startswith(f"--- python/cfgpkg/ops.py\n+++ {override}\n")
    code, out, _ = run(capsys, "lock")
    assert code == 0 and out.startswith(
        "wrote third_party/acme/backend/spec/flagtree_spec.lock: 1 override"
    )
    if shutil.which("git") is not None:
        code, _, err = run(capsys, "rebase", "--old-trunk", str(repo / "python/cfgpkg"))
        assert code == 0 and "0 clean, 0 conflict, 1 unchanged" in err
    # The options win over the table.
    code, out, _ = run(capsys, "which", "cfgpkg.ops", "-b", "none")
    assert out.startswith("cfgpkg.ops: python/cfgpkg/ops.py  [trunk]")


def test_migrate_reads_the_backend_of_tool_flagtree_spec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    make(
        repo,
        {
            "pyproject.toml": '[tool.flagtree-spec]\nbackend = "acme"\n',
            "python/migpkg/__init__.py": "",
            "python/migpkg/ops.py": "X = 1\n",
            "third_party/acme/python/migpkg/__init__.py": "",
            "third_party/acme/python/migpkg/ops.py": "X = 2\n",
        },
    )
    code, out, err = run(capsys, "migrate", "--repo", str(repo), "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["into"] == str(repo / "third_party/acme/backend/spec/migpkg")
    (repo / "pyproject.toml").write_text('[tool.flagtree-spec]\nbackend = "a,b"\n')
    code, _, err = run(capsys, "migrate", "--repo", str(repo))
    assert code == 2 and "backend names a stack (a,b); migrate moves one backend's copy" in err


@pytest.mark.parametrize(
    "header",
    ["tool.flagtree_spec", "tool.FlagTree-Spec", "tool.flagtree-specs", "tool.flagtreespec"],
)
def test_a_table_that_almost_matches_is_an_error_naming_the_right_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, header: str
) -> None:
    repo = _configured(tmp_path, f'[{header}]\nbackend = "acme"\n')
    name = header.split(".", 1)[1]
    for argv in (["status"], ["which", "cfgpkg.ops"], ["check"], ["migrate"]):
        code, _, err = run(capsys, *argv, "--repo", str(repo))
        assert code == 2, argv
        assert (
            f"{repo}/pyproject.toml: [tool.{name}] is not read by flagtree-spec: its table is "
            "[tool.flagtree-spec] (with a hyphen); rename the table"
        ) in err, err


def test_a_value_of_the_wrong_type_says_what_is_expected_for_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = _configured(tmp_path, "[tool.flagtree-spec]\nbackend = 3\n")
    for name in STATIC:
        argv = [name, "cfgpkg.ops"] if name in ("which", "diff") else [name]
        code, _, err = run(capsys, *argv, "--repo", str(repo))
        assert (
            code == 2
            and ("[tool.flagtree-spec]: backend = 3: a string or a list of strings is expected")
            in err
        ), (name, err)


def test_other_tables_and_a_mention_in_a_dependency_are_left_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = _configured(
        tmp_path,
        '[project]\nname = "x"\ndependencies = ["flagtree_spec", "flagtree-spec"]\n'
        "[tool.ruff]\nline-length = 100\n[tool.spec-tools]\nx = 1\n",
    )
    code, out, err = run(capsys, "which", "cfgpkg.ops", "--repo", str(repo))
    assert code == 0 and "[trunk]" in out, err


# --------------------------------------------------------------------------- wording


def test_spec_path_of_a_value_that_is_no_path_list_says_a_path_list_is_expected() -> None:
    proc = run_python(
        """
        from flagtree_spec import SpecError, spec_path
        for value in ("str", [], ("a",)):
            try:
                spec_path(value)
            except SpecError as exc:
                print(exc)
        """
    )
    lines = proc.stdout.splitlines()
    assert lines == [
        "spec_path() expects a package's __path__ (the list of its folders), not a str "
        "('str'); call it as spec_path(__path__) in the package's __init__.py",
        "spec_path() expects a package's __path__ list, and [] is the __path__ of no package; "
        "call it as spec_path(__path__) from the package's __init__.py, or pass "
        "name='package.name'",
        "spec_path() expects a package's __path__ (the list of its folders), not a tuple "
        "(('a',)); call it as spec_path(__path__) in the package's __init__.py",
    ]


def test_a_folder_that_is_no_repository_is_told_what_it_lacks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "python").mkdir()
    code, _, err = run(capsys, "check", "--repo", str(tmp_path))
    assert code == 2
    assert err == (
        f"flagtree-spec check: error: --repo {tmp_path} is not a FlagTree-style repository: it "
        "has no package in python/ (python/R/__init__.py) and no third_party/ folder (the "
        "backends' folders); give the checkout's top folder, or --trunk DIR\n"
    )
    assert "no trunk given" not in err
    (tmp_path / "third_party").mkdir()
    (tmp_path / "python").rmdir()
    empty = tmp_path / "third_party"
    monkeypatch.chdir(empty)
    code, _, err = run(capsys, "status")
    assert code == 2 and re.search(
        r"no trunk given, and \S+third_party is not a FlagTree-style repository \(it has no "
        r"python/ folder \(the root package is python/R/__init__.py\) and no third_party/ folder",
        err,
    ), err


def test_drift_outside_git_gives_rebase_its_old_trunk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The lock of this fixture has no blob ids: its trunk was not in a git work tree.
    lock = json.loads(
        (CHECK / "fts016_drift/third_party/vendor/backend/spec/flagtree_spec.lock").read_text()
    )
    assert {e["blob"] for e in lock["overrides"].values()} == {None}
    _, out, _ = run(capsys, "check", "--repo", str(CHECK / "fts016_drift"), "-b", "vendor")
    assert "merge the change with 'flagtree-spec rebase -b vendor --old-trunk DIR'" in out
    assert "DIR is the trunk's root package as it was at the lock" in out


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly_with_141() -> None:
    """``flagtree-spec rule FTS012 | head -1``: no traceback, no second error at exit;
    the status is the shell's for a command ended by SIGPIPE (the runtime's ``run``
    leaves a closed pipe to the program it runs)."""
    proc = run_python(
        """
        import os, subprocess, sys
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the command writes a line
        child = subprocess.run(
            [sys.executable, "-m", "flagtree_spec", "rule", "FTS012"],
            stdout=write, stderr=subprocess.PIPE, text=True,
        )
        print(child.returncode)
        print(child.stderr, end="")
        """
    )
    code, _, err = proc.stdout.partition("\n")
    assert (code, err) == ("141", "")
