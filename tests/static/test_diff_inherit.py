"""``flagtree-spec diff`` of an override that inherits: per definition, not per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run
from upgrade_support import MIRROR, TRUNK, upgrade_repo


def test_diff_of_an_inheriting_override_compares_each_definition_it_replaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    code, out, _ = run(capsys, "diff", "mathpkg.ops", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    trunk, override = repo / TRUNK / "ops.py", repo / MIRROR / "ops.py"
    assert out.splitlines()[:6] == [
        f"mathpkg.ops inherits {trunk} and changes 4 definitions:",
        "  added     _lower_add",
        "  wrapped   add (reads the lower version first)",
        "  replaced  mul",
        "  replaced  div",
        "",
    ]
    assert f"--- {trunk}:mul\n+++ {override}:mul\n" in out
    assert "-    return result\n+    return result  # the vendor's fast path goes here\n" in out
    # Definitions the override does not replace are not shown as removed.
    assert "def sub" not in out and "def square" not in out


def test_diff_json_of_an_inheriting_override_lists_definitions_with_state_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    override = repo / MIRROR / "ops.py"
    override.write_text(override.read_text() + "\n\ndel square\n")
    code, out, _ = run(
        capsys, "diff", "mathpkg.ops", "--repo", str(repo), "-b", "vendor", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["module"] == "mathpkg.ops" and data["shadows"] == str(repo / TRUNK / "ops.py")
    states = [(d["name"], d["state"]) for d in data["definitions"]]
    assert states == [
        ("_lower_add", "added"),
        ("add", "wrapped"),
        ("mul", "replaced"),
        ("div", "replaced"),
        ("square", "deleted"),
    ]
    deleted = data["definitions"][-1]["diff"]
    assert deleted.endswith("-def square(a):\n-    return mul(a, a)\n")
    assert data["diff"] == "".join(d["diff"] for d in data["definitions"])


def test_diff_of_a_whole_file_override_is_still_a_file_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    code, out, _ = run(
        capsys, "diff", "mathpkg.fmt", "--repo", str(repo), "-b", "vendor", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert "definitions" not in data
    assert '-    return "value: " + str(x)\n+    return "vendor value: " + str(x)\n' in data["diff"]


def test_diff_of_an_override_that_only_mentions_inherit_is_a_file_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    (repo / MIRROR / "util.py").write_text("def clamp(x):  # no inherit here\n    return x\n")
    code, out, _ = run(capsys, "diff", "mathpkg.util", "--repo", str(repo), "-b", "vendor")
    assert code == 0 and out.startswith(f"--- {repo / TRUNK / 'util.py'}\n")


def test_diff_shows_a_statement_that_binds_several_names_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    (repo / MIRROR / "util.py").write_text(
        "from flagtree_spec import inherit\ninherit(globals())\nLOW = HIGH = 1\n"
    )
    code, out, _ = run(
        capsys, "diff", "mathpkg.util", "--repo", str(repo), "-b", "vendor", "--format", "json"
    )
    assert code == 0
    rows = json.loads(out)["definitions"]
    assert [(d["name"], d["state"]) for d in rows] == [("HIGH", "added"), ("LOW", "added")]
    assert rows[0]["diff"].endswith("+LOW = HIGH = 1\n") and rows[1]["diff"] == ""
