"""FTS016: the counterpart of an override changed since ``flagtree-spec lock``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run
from upgrade_support import LOCK, MIRROR, TRUNK, V2, upgrade_repo, upgrade_trunk


def _locked(tmp_path: Path, capsys: pytest.CaptureFixture[str], in_git: bool = False) -> Path:
    repo = upgrade_repo(tmp_path, in_git=in_git)
    assert run(capsys, "lock", "--repo", str(repo), "-b", "vendor")[0] == 0
    return repo


def _fts016(
    capsys: pytest.CaptureFixture[str], repo: Path, *more: str
) -> tuple[int, list[dict[str, object]]]:
    code, out, _ = run(
        capsys,
        "check",
        "--repo",
        str(repo),
        "-b",
        "vendor",
        "--select",
        "FTS016",
        "--format",
        "json",
        *more,
    )
    return code, json.loads(out)["findings"]


def _line(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def test_fts016_nothing_without_a_lock_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    upgrade_trunk(repo, in_git=False)
    assert _fts016(capsys, repo) == (0, [])


def test_fts016_nothing_when_the_trunk_is_unchanged_since_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    assert _fts016(capsys, repo) == (0, [])


@pytest.mark.parametrize("in_git", [False, True], ids=["outside-git", "in-git"])
def test_fts016_after_a_trunk_upgrade_per_file_and_per_replaced_definition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], in_git: bool
) -> None:
    # In git, whole-file overrides whose counterpart keeps the locked blob id
    # are not digested again; the findings are the same.
    repo = _locked(tmp_path, capsys, in_git)
    upgrade_trunk(repo, in_git=in_git)
    code, findings = _fts016(capsys, repo)
    assert code == 0  # warnings only: the default --fail-on is error
    ops, fmt = repo / MIRROR / "ops.py", repo / MIRROR / "fmt.py"
    assert [(f["path"], f["line"], f["severity"]) for f in findings] == [
        (str(fmt), 1, "warning"),
        (str(ops), _line(ops, "def mul"), "warning"),
    ]
    assert findings[0]["message"].startswith(f"trunk changed {repo / TRUNK / 'fmt.py'} since")
    assert "rebase -b vendor" in findings[0]["message"]
    # mul is replaced and changed; add changed but is wrapped; sub and square
    # changed but are not replaced; util.py changed comments and blank lines only.
    assert findings[1]["message"].startswith("trunk changed 'mul' since this override replaced it")


def test_fts016_a_dropped_or_renamed_replaced_definition_makes_the_replacement_dead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    ops = (repo / TRUNK / "ops.py").read_text(encoding="utf-8")
    upgrade_trunk(repo, {"ops.py": ops.replace("def div(", "def floor_div(")}, in_git=False)
    _, findings = _fts016(capsys, repo)
    override = repo / MIRROR / "ops.py"
    assert [(f["path"], f["line"]) for f in findings] == [
        (str(override), _line(override, "def div"))
    ]
    assert (
        "trunk dropped or renamed 'div' since this override replaced it" in findings[0]["message"]
    )
    assert "the replacement is dead" in findings[0]["message"]


def test_fts016_a_dropped_wrapped_definition_breaks_the_wrapper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    ops = (repo / TRUNK / "ops.py").read_text(encoding="utf-8")
    upgrade_trunk(repo, {"ops.py": ops.replace("def add(", "def plus(")}, in_git=False)
    _, findings = _fts016(capsys, repo)
    assert len(findings) == 1
    assert "reading 'add' before replacing it now fails" in findings[0]["message"]


def test_fts016_comment_only_changes_drift_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    upgrade_trunk(repo, {"util.py": V2["util.py"]}, in_git=False)
    assert _fts016(capsys, repo) == (0, [])


def test_fts016_fail_on_warning_makes_drift_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    upgrade_trunk(repo, in_git=False)
    code, findings = _fts016(capsys, repo, "--fail-on", "warning")
    assert code == 1 and len(findings) == 2
    with pytest.raises(SystemExit) as exc:
        run(capsys, "check", "--repo", str(repo), "--fail-on", "info")
    assert exc.value.code == 2 and "--fail-on" in capsys.readouterr().err


def test_fts016_override_missing_from_the_lock_or_lock_entry_without_override_is_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    (repo / TRUNK / "extra.py").write_text("X = 1\n")
    (repo / MIRROR / "extra.py").write_text("X = 2\n")
    (repo / MIRROR / "util.py").unlink()
    code, findings = _fts016(capsys, repo, "--fail-on", "warning")
    assert code == 0
    lock = repo / LOCK
    assert [(f["path"], f["line"], f["severity"]) for f in findings] == [
        (str(lock), _line(lock, '    "mathpkg/util.py"'), "info"),
        (str(repo / MIRROR / "extra.py"), 1, "info"),
    ]
    assert "mathpkg/util.py is locked, but the override is gone" in findings[0]["message"]
    assert "mathpkg/extra.py is not in" in findings[1]["message"]
    assert "flagtree-spec lock -b vendor" in findings[1]["message"]


@pytest.mark.parametrize("in_git", [False, True], ids=["outside-git", "in-git"])
def test_fts016_a_replacement_added_since_the_lock_is_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], in_git: bool
) -> None:
    repo = _locked(tmp_path, capsys, in_git)
    override = repo / MIRROR / "ops.py"
    override.write_text(override.read_text() + "\n\ndef sub(a, b):\n    return a - b\n")
    _, findings = _fts016(capsys, repo)
    assert [(f["line"], f["severity"]) for f in findings] == [(_line(override, "def sub"), "info")]
    assert "replaces 'sub', which the lock does not record" in findings[0]["message"]


def test_fts016_a_trunk_file_deleted_since_the_lock_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    (repo / TRUNK / "fmt.py").unlink()
    _, findings = _fts016(capsys, repo)
    assert [(f["path"], f["severity"]) for f in findings] == [
        (str(repo / MIRROR / "fmt.py"), "warning")
    ]
    assert "the trunk file this override was made against is gone" in findings[0]["message"]


@pytest.mark.parametrize("in_git", [False, True], ids=["outside-git", "in-git"])
def test_fts016_an_override_that_now_inherits_asks_for_a_new_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], in_git: bool
) -> None:
    repo = _locked(tmp_path, capsys, in_git)
    (repo / MIRROR / "util.py").write_text(
        "from flagtree_spec import inherit\ninherit(globals())\n\n\ndef clamp(x):\n    return x\n"
    )
    _, findings = _fts016(capsys, repo)
    assert [f["severity"] for f in findings] == ["info"]
    assert (
        "records mathpkg/util.py as a whole-file override, but it inherits now"
        in (findings[0]["message"])
    )


def test_fts016_a_broken_lock_file_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    (repo / LOCK).write_text("[]")
    code, _, err = run(capsys, "check", "--repo", str(repo), "-b", "vendor")
    assert code == 2 and "is not a lock file of format 1" in err


def test_check_ignores_the_lock_file_as_spec_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json")
    assert code == 0
    assert [f for f in json.loads(out)["findings"] if "flagtree_spec.lock" in f["path"]] == []


def test_fts016_fixture_reports_a_changed_replaced_definition_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = Path(__file__).resolve().parent.parent.parent / "fixtures/check/fts016_drift"
    code, findings = _fts016(capsys, repo)
    override = repo / "third_party/vendor/backend/spec/driftpkg/ops.py"
    # ops.add changed but is not replaced; fmt.py changed a comment only.
    assert code == 0
    assert [(f["severity"], f["path"], f["line"]) for f in findings] == [
        ("warning", str(override), _line(override, "def mul"))
    ]


def test_fts016_quiet_for_added_modules_dropped_replacements_and_unparsable_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked(tmp_path, capsys)
    upgrade_trunk(repo, in_git=False)
    (repo / MIRROR / "added.py").write_text("NEW = 1\n")  # no trunk counterpart
    ops = repo / MIRROR / "ops.py"
    # The override stops replacing mul: trunk's new mul flows in through inherit.
    ops.write_text(ops.read_text().replace("def mul(", "def _old_mul("))
    (repo / MIRROR / "fmt.py").write_text("def show(:\n")  # FTS010's business
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json")
    found = [(f["code"], f["path"]) for f in json.loads(out)["findings"]]
    assert code == 1  # FTS010 is an error
    assert ("FTS010", str(repo / MIRROR / "fmt.py")) in found
    assert [f for f in found if f[0] == "FTS016"] == []


def test_fts016_of_a_spec_root_given_by_folder_names_it_in_the_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    spec_root = repo / "third_party/vendor/backend/spec"
    where = ("--trunk", str(repo / TRUNK), "--spec-root", str(spec_root))
    assert run(capsys, "lock", *where)[0] == 0
    upgrade_trunk(repo, in_git=False)
    code, out, _ = run(capsys, "check", *where, "--select", "FTS016")
    assert code == 0
    # Outside git, rebase needs the old trunk: the advice says so.
    assert f"'flagtree-spec rebase --spec-root {spec_root} --old-trunk DIR'" in out
