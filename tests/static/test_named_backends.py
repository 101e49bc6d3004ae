"""Backends named with -b or FLAGTREE_BACKEND: the static commands say what they could not check.

Fixture: fixtures/named_backends, a repository with package ``layoutpkg`` and
three backends: ``vendor`` (a spec root in the expected place), ``cxxonly``
(exists, changes only C++ code) and ``misplaced`` (its spec root is
``third_party/misplaced/spec``, one level too high).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

# The commands print absolute paths from there (text shows paths below the working folder
# relative to it: tests/static/test_output.py).
pytestmark = pytest.mark.usefixtures("outside_the_trees")

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
REPO = FIXTURES / "named_backends"
THIRD = REPO / "third_party"

COMMANDS = [
    ["which", "layoutpkg.mod"],
    ["list"],
    ["check"],
    ["diff", "layoutpkg.mod"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_backend_named_with_option_that_exists_nowhere_is_exit_2_with_did_you_mean(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, err = run(capsys, *command, "--repo", str(REPO), "-b", "vendr")
    assert code == 2 and out == ""
    assert f"flagtree-spec {command[0]}: error: backend 'vendr' (--backend) exists nowhere" in err
    assert "did you mean 'vendor'?" in err
    assert "The backends found: cxxonly, misplaced, vendor." in err
    # The folders looked in, in the layout actually expected.
    assert str(THIRD / "vendr" / "backend" / "spec") in err
    assert str(REPO / "python" / "layoutpkg" / "backends" / "vendr" / "spec") in err


def test_backend_with_no_close_match_lists_the_backends_found_in_sentences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "check", "--repo", str(REPO), "-b", "zzz")
    assert code == 2
    assert (
        "backend 'zzz' (--backend) exists nowhere: no backend of a close name exists. "
        "The backends found: cxxonly, misplaced, vendor. Looked in:"
    ) in err


def test_backend_named_in_environment_that_exists_nowhere_is_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAGTREE_BACKEND", "Vendor")
    code, _, err = run(capsys, "check", "--repo", str(REPO))
    assert code == 2
    assert "backend 'Vendor' (FLAGTREE_BACKEND) exists nowhere: did you mean 'vendor'?" in err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_spec_root_in_a_wrong_place_is_named_and_exit_2(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, _, err = run(capsys, *command, "--repo", str(REPO), "-b", "misplaced")
    assert code == 2
    assert (
        f"{THIRD / 'misplaced' / 'spec'} looks like a spec root in the wrong place: move it to "
        f"{THIRD / 'misplaced' / 'backend' / 'spec'}"
    ) in err


def test_backend_without_python_spec_tree_is_a_notice_and_exit_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "check", "--repo", str(REPO), "-b", "cxxonly")
    assert code == 0 and out == ""
    assert "flagtree-spec check: notice: backend 'cxxonly' (--backend) has no spec root" in err
    assert f"it exists ({THIRD / 'cxxonly'}) but has no Python spec tree" in err
    assert err.splitlines()[-1] == "0 findings in 0 files"


def test_backend_without_python_spec_tree_in_a_stack_leaves_the_others_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "which", "layoutpkg.mod", "--repo", str(REPO), "-b", "cxxonly,vendor"
    )
    assert code == 0
    assert out.startswith(f"layoutpkg.mod: {THIRD / 'vendor/backend/spec/layoutpkg/mod.py'}")
    assert "notice: backend 'cxxonly'" in err


@pytest.mark.parametrize(
    ("backend", "said"),
    [
        ("vendr", "exists nowhere: did you mean 'vendor'?"),
        ("cxxonly", "but has no Python spec tree"),
        ("misplaced", "looks like a spec root in the wrong place"),
    ],
)
def test_status_describes_a_backend_without_spec_root_and_exits_0(
    capsys: pytest.CaptureFixture[str], backend: str, said: str
) -> None:
    code, out, _ = run(capsys, "status", "--repo", str(REPO), "-b", backend)
    assert code == 0
    assert f"note          backend {backend!r} (--backend)" in out and said in out
    code, out, _ = run(capsys, "status", "--repo", str(REPO), "-b", backend, "--format", "json")
    [absent] = json.loads(out)["absent"]
    assert code == 0 and absent["backend"] == backend
    assert absent["exists"] is (backend != "vendr")


def test_backend_named_by_a_build_marker_is_not_judged_by_the_static_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trunk = FIXTURES / "marker_misspelled" / "site-packages" / "ghostpkg"
    code, out, _ = run(capsys, "status", "--trunk", str(trunk))
    assert code == 0 and "note" not in out
    code, _, err = run(capsys, "check", "--trunk", str(trunk))
    assert code == 0 and "exists nowhere" not in err


def test_which_exits_1_when_a_named_module_would_not_import(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys, "which", "layoutpkg.mod", "layoutpkg.nothing", "--repo", str(REPO), "-b", "vendor"
    )
    assert code == 1
    assert "layoutpkg.nothing: does not import" in out
    code, _, _ = run(capsys, "which", "layoutpkg.mod", "--repo", str(REPO), "-b", "vendor")
    assert code == 0


def test_check_ends_with_a_summary_line_on_stderr_also_when_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "check", "--repo", str(REPO), "-b", "vendor")
    assert code == 0 and out == ""
    assert err.splitlines()[-1] == "0 findings in 1 file"
    code, out, err = run(capsys, "check", "--repo", str(REPO), "-b", "vendor", "--format", "json")
    assert json.loads(out) == {"findings": []}
    assert err.splitlines()[-1] == "0 findings in 1 file"
