"""A checkout whose python/ holds several packages: the root package is the one a spec root
mirrors, or the one --root names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import make, run

CHECKOUT = (
    Path(__file__).resolve().parent.parent.parent / "fixtures" / "check" / "flagtree_checkout"
)


def status(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code, out, err = run(capsys, "status", "-b", "mthreads", "--format", "json", *argv)
    return code, (json.loads(out) if code == 0 else {}), err


def test_checkout_with_several_packages_takes_the_one_a_spec_root_mirrors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, data, err = status(capsys, "--repo", str(CHECKOUT))
    assert code == 0, err
    assert data["root"] == "triton"
    assert data["trunk"] == str(CHECKOUT / "python" / "triton")
    code, out, _ = run(capsys, "check", "--repo", str(CHECKOUT), "-b", "mthreads")
    assert (code, out) == (0, "")  # hooks found through fragments; fragments are no overrides


def test_root_option_is_short_for_trunk_in_the_checkout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, data, err = status(capsys, "--repo", str(CHECKOUT), "--root", "setup_tools")
    assert code == 0, err
    assert data["root"] == "setup_tools"
    monkeypatch.chdir(CHECKOUT)  # without --repo: the working directory
    for command in ("status", "list", "check"):
        code, _, err = run(capsys, command, "-b", "mthreads", "--root", "setup_tools")
        assert code == 0, (command, err)
    code, _, err = run(
        capsys, "which", "setup_tools.utils", "-b", "mthreads", "--root", "setup_tools"
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--root", "triton", "--root", "setup_tools"], "one root per run: --root given 2 times"),
        (["--root", "nothing"], "--root nothing: "),
        (["--root", "a.b"], "give a top-level package name"),
        (["--root", "triton", "--trunk", "x"], "give one of --root, --trunk and --package"),
    ],
    ids=["twice", "missing", "dotted", "with-trunk"],
)
def test_root_option_input_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "check", "--repo", str(CHECKOUT), "-b", "mthreads", *argv)
    assert code == 2 and message in err, err


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({}, "no spec root under"),
        (
            {
                "third_party/b/backend/spec/one/x.py": "",
                "third_party/b/python/two/x.py": "",
            },
            "spec roots under",
        ),
    ],
    ids=["none-mirrored", "both-mirrored"],
)
def test_checkout_with_several_packages_and_no_single_mirror_is_an_input_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, str], named: str
) -> None:
    make(
        tmp_path,
        {
            "python/one/__init__.py": "",
            "python/two/__init__.py": "",
            "third_party/b/x.txt": "",
            **files,
        },
    )
    code, _, err = run(capsys, "check", "--repo", str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'python'} holds several packages (one, two) and {named}" in err
    assert f"choose one with --root one (short for --trunk {tmp_path / 'python' / 'one'})" in err


def test_declaration_naming_the_mirror_chooses_the_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/one/__init__.py": "",
            "python/two/__init__.py": "",
            "third_party/b/backend/spec/flagtree_spec.json": '{"mirror": "two"}',
            "third_party/b/backend/spec/two/x.py": "",
            "third_party/c/backend/spec/flagtree_spec.json": "{not json",
        },
    )
    code, out, err = run(capsys, "status", "--repo", str(tmp_path), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["root"] == "two"
