"""``flagtree-spec lock``: what each override was made against, stable and diff-friendly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import make, run
from upgrade_support import LOCK, MIRROR, TRUNK, UPGRADE, git, upgrade_repo

from flagtree_spec._tools.upgrade import lock


def test_lock_records_counterpart_digest_blob_trunk_version_and_replaced_definitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path)
    code, out, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    assert out.startswith(f"wrote {repo / LOCK}: 3 overrides (2 whole-file, 1 inheriting")
    data = json.loads((repo / LOCK).read_text(encoding="utf-8"))
    assert data["backend"] == "vendor" and data["root"] == "mathpkg"
    assert data["trunk_version"] == "1.0"
    entries = data["overrides"]
    assert sorted(entries) == ["mathpkg/fmt.py", "mathpkg/ops.py", "mathpkg/util.py"]
    for key, entry in entries.items():
        committed = git(repo, "rev-parse", f"HEAD:python/{key}").strip()
        assert entry["blob"] == committed
        assert lock.blob_id((repo / "python" / key).read_bytes()) == committed
        assert entry["counterpart"] == "trunk"
    # The inheriting override replaces add (a wrapper), mul and div; sub and
    # square are not replaced, so the lock does not record them.
    assert sorted(entries["mathpkg/ops.py"]["definitions"]) == ["add", "div", "mul"]
    assert "definitions" not in entries["mathpkg/fmt.py"]


def test_lock_file_is_sorted_indented_json_ending_in_a_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path)
    run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    text = (repo / LOCK).read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


def test_lock_again_on_an_unchanged_tree_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path)
    run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    before = (repo / LOCK).stat()
    first = (repo / LOCK).read_bytes()
    code, out, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor", "--format", "json")
    assert code == 0 and json.loads(out)["changed"] is False
    assert (repo / LOCK).read_bytes() == first
    assert (repo / LOCK).stat().st_mtime_ns == before.st_mtime_ns


def test_lock_of_a_comment_or_layout_change_to_trunk_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    first = (repo / LOCK).read_bytes()
    util = repo / TRUNK / "util.py"
    util.write_text("# Clamp values.\ndef clamp(x):  # to zero\n\n    return max(0, x)\n")
    code, out, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0 and out.startswith("unchanged ")
    assert (repo / LOCK).read_bytes() == first


def test_the_same_lock_is_written_on_every_supported_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # fixtures/upgrade/locked.lock was written once; CI locks the same tree on
    # CPython 3.9-3.13 and must get it byte for byte (outside git: no blob ids).
    repo = tmp_path / "repo"
    shutil.copytree(UPGRADE / "v1", repo)
    code, _, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    expected = (UPGRADE / "locked.lock").read_text(encoding="utf-8")
    assert (repo / LOCK).read_text(encoding="utf-8") == expected


def test_lock_outside_git_records_no_blob_and_says_rebase_needs_old_trunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    code, _, err = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    entries = json.loads((repo / LOCK).read_text(encoding="utf-8"))["overrides"]
    assert all(e["blob"] is None for e in entries.values())
    assert "rebase will need --old-trunk DIR" in err and "mathpkg/ops.py" in err


def test_lock_under_site_packages_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "lib" / "site-packages"
    make(
        site,
        {
            "mathpkg/__init__.py": "from flagtree_spec import spec_path\nspec_path(__path__)\n",
            "mathpkg/fmt.py": "X = 1\n",
            "mathpkg/backends/vendor/spec/mathpkg/fmt.py": "X = 2\n",
        },
    )
    code, _, err = run(capsys, "lock", "--trunk", str(site / "mathpkg"), "-b", "vendor")
    assert code == 2
    assert "site-packages" in err and "--spec-root DIR" in err
    assert not (site / "mathpkg/backends/vendor/spec/flagtree_spec.lock").exists()


def test_lock_of_an_override_that_does_not_parse_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    (repo / MIRROR / "fmt.py").write_text("def show(:\n")
    code, _, err = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 2
    assert "fmt.py does not parse" in err
    assert not (repo / LOCK).exists()


def test_lock_without_a_mirror_tree_or_spec_root_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    code, _, err = run(capsys, "lock", "--repo", str(repo))
    assert code == 2 and "no spec root for mathpkg" in err
    make(repo, {"third_party/hooks_only/backend/spec/__init__.py": "def h():\n    pass\n"})
    code, _, err = run(capsys, "lock", "--repo", str(repo), "-b", "hooks_only")
    assert code == 2 and "has no mirror tree" in err


def test_lock_of_a_stacked_backend_records_the_base_backends_override_as_counterpart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    make(
        repo,
        {
            "third_party/top/backend/spec/mathpkg/fmt.py": "def show(x):\n    return 'top'\n",
            "third_party/top/backend/spec/mathpkg/extra.py": "ADDED = 1\n",
        },
    )
    code, _, _ = run(capsys, "lock", "--repo", str(repo), "-b", "top,vendor")
    assert code == 0
    data = json.loads(
        (repo / "third_party/top/backend/spec/flagtree_spec.lock").read_text(encoding="utf-8")
    )
    # extra.py adds a module: nothing to lock.
    assert list(data["overrides"]) == ["mathpkg/fmt.py"]
    assert data["overrides"]["mathpkg/fmt.py"]["counterpart"] == "backend vendor"


def test_lock_goes_into_the_backends_spec_root_not_one_from_flagtree_spec_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    other = tmp_path / "other_spec"
    make(other, {"mathpkg/fmt.py": "def show(x):\n    return 'other'\n"})
    monkeypatch.setenv("FLAGTREE_SPEC_PATH", str(other))
    code, _, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    assert (repo / LOCK).is_file() and not (other / "flagtree_spec.lock").exists()
    # Without a backend, the spec root given by folder is the one locked.
    monkeypatch.setenv("FLAGTREE_BACKEND", "")
    code, _, _ = run(capsys, "lock", "--trunk", str(repo / TRUNK))
    assert code == 0
    locked = json.loads((other / "flagtree_spec.lock").read_text(encoding="utf-8"))
    assert locked["backend"] is None and list(locked["overrides"]) == ["mathpkg/fmt.py"]


def test_lock_is_written_through_a_symlinked_spec_root_file_kept_as_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path, in_git=False)
    target = tmp_path / "kept" / "flagtree_spec.lock"
    target.parent.mkdir()
    target.write_text("{}\n")
    (repo / LOCK).symlink_to(target)
    code, _, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    assert (repo / LOCK).is_symlink()
    assert json.loads(target.read_text(encoding="utf-8"))["format"] == 1


def test_lock_without_git_installed_records_no_blob(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = upgrade_repo(tmp_path)  # a git work tree, but git is not on PATH
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, _, err = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0 and "rebase will need --old-trunk DIR" in err
    entries = json.loads((repo / LOCK).read_text(encoding="utf-8"))["overrides"]
    assert [e["blob"] for e in entries.values()] == [None, None, None]


def test_the_git_helpers_say_which_command_failed_and_why(tmp_path: Path) -> None:
    """What ``lock`` and ``rebase`` read from git, outside a work tree and where the
    object is missing: a GitError naming the folder, the object and what to do."""
    import subprocess

    from flagtree_spec._tools.upgrade import git as gitio

    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(gitio.GitError, match="is not in a git work tree, so blob abc"):
        gitio.read_blob(str(outside), "abc")
    with pytest.raises(gitio.GitError, match="is not in a git work tree, so tree abc"):
        gitio.read_from_tree(str(outside), "abc", "x.py")
    assert gitio.tree_id(str(outside), []) is None
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    missing = "0" * 40
    with pytest.raises(gitio.GitError, match=f"blob {missing} is not in the repository"):
        gitio.read_blob(str(work), missing)
    with pytest.raises(gitio.GitError, match=r"x\.py of tree .* is not in the repository"):
        gitio.read_from_tree(str(work), missing, "x.py")
    with pytest.raises(gitio.GitError, match=r"'git cat-file -t nothing' failed in "):
        gitio._run(["cat-file", "-t", "nothing"], str(work))
