"""``flagtree-spec rebase``: three-way merges of trunk changes into the overrides."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import run
from conftest import LIBRARY, NEUTRAL, clean_env
from upgrade_support import (
    LOCK,
    MIRROR,
    TRUNK,
    UPGRADE,
    V2,
    git,
    snapshot,
    upgrade_repo,
    upgrade_trunk,
)


def _locked_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *, in_git: bool = True
) -> Path:
    repo = upgrade_repo(tmp_path, in_git=in_git)
    code, _, _ = run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    assert code == 0
    upgrade_trunk(repo, in_git=in_git)
    return repo


def _printed(repo: Path, code: str) -> list[str]:
    """What *code* prints, run in a fresh interpreter on *repo*'s trunk with backend vendor."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **clean_env(),
            "PYTHONPATH": f"{repo / 'python'}{os.pathsep}{LIBRARY}",
            "FLAGTREE_BACKEND": "vendor",
        },
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.split()


def _rebase(capsys: pytest.CaptureFixture[str], repo: Path, *more: str) -> tuple[int, str, str]:
    return run(capsys, "rebase", "--repo", str(repo), "-b", "vendor", *more)


def test_rebase_without_apply_writes_nothing_and_reports_each_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    before = snapshot(repo)
    code, out, err = _rebase(capsys, repo)
    assert snapshot(repo) == before
    assert code == 1  # fmt.py conflicts
    lines = [line for line in out.splitlines() if not line.startswith((" ", "+", "-", "@"))]
    assert lines == [
        "conflict  mathpkg/fmt.py",
        "clean     mathpkg/ops.py",
        "unchanged mathpkg/util.py",
    ]
    assert "  add: wrapped\n  div: unchanged\n  mul: clean\n" in out
    assert "+    if b < 0:\n+        return -mul(a, -b)\n" in out
    assert "nothing written (pass --apply" in err


def test_rebase_json_lists_state_definitions_and_diff_per_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    code, out, _ = _rebase(capsys, repo, "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["applied"] is False
    rows = {r["override"]: r for r in data["overrides"]}
    assert rows["mathpkg/fmt.py"]["state"] == "conflict"
    assert rows["mathpkg/fmt.py"]["conflicts"] == 1
    assert "<<<<<<< mathpkg/fmt.py" in rows["mathpkg/fmt.py"]["diff"]
    assert rows["mathpkg/ops.py"]["definitions"] == [
        {"name": "add", "state": "wrapped"},
        {"name": "div", "state": "unchanged"},
        {"name": "mul", "state": "clean"},
    ]
    assert rows["mathpkg/util.py"] == {
        "override": "mathpkg/util.py",
        "file": str(repo / MIRROR / "util.py"),
        "state": "unchanged",
        "message": "",
        "conflicts": 0,
        "definitions": [],
        "diff": "",
    }


def test_rebase_apply_merges_per_replaced_definition_and_marks_conflicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    old_lock = json.loads((repo / LOCK).read_text(encoding="utf-8"))["overrides"]
    code, _, err = _rebase(capsys, repo, "--apply")
    assert code == 1
    assert "wrote 2 files" in err and "resolve the conflict markers" in err
    ops = (repo / MIRROR / "ops.py").read_text(encoding="utf-8")
    # mul got trunk's new guard and kept the vendor's line; trunk's changes to
    # sub and square (not replaced) were not copied: they flow in through inherit.
    assert "    if b < 0:\n        return -mul(a, -b)\n" in ops
    assert "return result  # the vendor's fast path goes here" in ops
    assert "def sub" not in ops and "def square" not in ops
    fmt = (repo / MIRROR / "fmt.py").read_text(encoding="utf-8")
    assert fmt == (
        "def show(x):\n"
        "<<<<<<< mathpkg/fmt.py\n"
        '    return "vendor value: " + str(x)\n'
        "||||||| trunk at lock\n"
        '    return "value: " + str(x)\n'
        "=======\n"
        '    return "value = " + str(x)\n'
        ">>>>>>> trunk now\n"
        "\n\ndef width():\n    return 12\n"
    )
    new_lock = json.loads((repo / LOCK).read_text(encoding="utf-8"))["overrides"]
    # Updated for the clean merge only: fmt.py keeps the base of its conflict.
    assert new_lock["mathpkg/fmt.py"] == old_lock["mathpkg/fmt.py"]
    assert new_lock["mathpkg/ops.py"] != old_lock["mathpkg/ops.py"]
    assert (
        new_lock["mathpkg/ops.py"]["blob"]
        == git(repo, "rev-parse", "HEAD:python/mathpkg/ops.py").strip()
    )
    # A second run: ops is now up to date, fmt still holds markers.
    code, out, _ = _rebase(capsys, repo)
    assert code == 1
    assert "conflict  mathpkg/fmt.py  (conflict markers of an earlier merge" in out
    assert "unchanged mathpkg/ops.py" in out


def test_resolved_conflict_then_lock_makes_check_and_rebase_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    _rebase(capsys, repo, "--apply")
    (repo / MIRROR / "fmt.py").write_text(
        'def show(x):\n    return "vendor value = " + str(x)\n\n\ndef width():\n    return 12\n'
    )
    assert run(capsys, "lock", "--repo", str(repo), "-b", "vendor")[0] == 0
    code, out, _ = _rebase(capsys, repo)
    assert code == 0
    assert out.splitlines() == [
        "unchanged mathpkg/fmt.py",
        "unchanged mathpkg/ops.py",
        "unchanged mathpkg/util.py",
    ]


def test_rebase_reads_the_base_from_old_trunk_outside_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys, in_git=False)
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and "no git blob for mathpkg/fmt.py" in err and "--old-trunk" in err
    old = UPGRADE / "v1" / TRUNK
    code, out, _ = _rebase(capsys, repo, "--old-trunk", str(old))
    assert code == 1
    assert "clean     mathpkg/ops.py" in out and "conflict  mathpkg/fmt.py" in out


def test_rebase_with_a_wrong_old_trunk_is_an_input_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    wrong = tmp_path / "wrong"
    shutil.copytree(UPGRADE / "v1" / TRUNK, wrong)
    (wrong / "fmt.py").write_text("def show(x):\n    return 'not the locked one'\n")
    before = snapshot(repo)
    code, _, err = _rebase(capsys, repo, "--old-trunk", str(wrong), "--apply")
    assert code == 2
    assert f"{wrong / 'fmt.py'} does not match the lock of mathpkg/fmt.py" in err
    assert snapshot(repo) == before
    (wrong / "fmt.py").unlink()
    code, _, err = _rebase(capsys, repo, "--old-trunk", str(wrong))
    assert code == 2 and "--old-trunk has no fmt.py" in err
    code, _, err = _rebase(capsys, repo, "--old-trunk", str(tmp_path / "missing"))
    assert code == 2 and "is not a directory" in err


def test_rebase_with_a_locked_blob_missing_from_the_repository_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    data = json.loads((repo / LOCK).read_text(encoding="utf-8"))
    data["overrides"]["mathpkg/fmt.py"]["blob"] = "0" * 40
    (repo / LOCK).write_text(json.dumps(data))
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and f"blob {'0' * 40} is not in the repository" in err


def test_rebase_of_an_override_whose_trunk_file_is_gone_writes_it_whole_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trunk deletes util.py (a whole-file override: it is the module already) and
    ops.py (inherited by its override): ops.py is written whole from the locked trunk
    version plus the override, and both become modules the backend adds."""
    repo = _locked_upgrade(tmp_path, capsys)
    git(repo, "rm", "-q", f"{TRUNK}/util.py", f"{TRUNK}/ops.py")
    git(repo, "commit", "-qm", "trunk drops util and ops")
    before = snapshot(repo)
    code, out, _ = _rebase(capsys, repo, "--apply")
    assert code == 1  # fmt.py still conflicts
    assert "whole     mathpkg/util.py  (the trunk deleted its counterpart: the override is " in out
    assert "whole     mathpkg/ops.py  (the trunk deleted the file it inherits: written whole" in out
    assert (repo / MIRROR / "util.py").read_bytes() == before[f"{MIRROR}/util.py"]
    ops = (repo / MIRROR / "ops.py").read_text()
    assert "inherit" not in ops
    assert "def sub(a, b):\n    return a - b\n" in ops  # the trunk's, as locked
    assert "def div(a, b):\n    return a // b if b else 0\n" in ops  # the override's, in place
    # add is wrapped (read before it is replaced): the trunk's stays, the wrapper follows.
    assert ops.index("def add(a, b):\n    return a + b") < ops.index("_lower_add = add")
    entries = json.loads((repo / LOCK).read_text())["overrides"]
    assert "mathpkg/ops.py" not in entries and "mathpkg/util.py" not in entries
    # The module runs as it did over the old trunk.
    printed = _printed(
        repo,
        "import mathpkg.ops as o, mathpkg.util as u; "
        "print(o.add(2, 3), o.sub(5, 2), o.mul(3, 4), o.div(7, 0), o.square(3), u.clamp(300))",
    )
    assert printed == ["5", "3", "12", "0", "9", "255"]


def test_check_and_rebase_report_a_trunk_module_the_new_trunk_deleted_and_restore_it_if_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The backend took helpers.py and unused.py from the trunk (the lock recorded them);
    the new trunk deletes both: check says so; rebase restores helpers.py, which the
    override still imports, and leaves unused.py out."""
    repo = upgrade_repo(tmp_path)
    (repo / TRUNK / "helpers.py").write_text("def twice(x):\n    return 2 * x\n")
    (repo / TRUNK / "unused.py").write_text("X = 1\n")
    (repo / MIRROR / "util.py").write_text(
        "from .helpers import twice\n\n\ndef clamp(x):\n    return max(0, min(twice(x), 255))\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "helpers")
    assert run(capsys, "lock", "--repo", str(repo), "-b", "vendor")[0] == 0
    lock = json.loads((repo / LOCK).read_text())
    assert "mathpkg/helpers.py" in lock["trunk"]["modules"] and lock["trunk"]["tree"]
    git(repo, "rm", "-q", f"{TRUNK}/helpers.py", f"{TRUNK}/unused.py")
    git(repo, "commit", "-qm", "trunk drops helpers and unused")
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--select", "FTS016")
    assert out.count("FTS016 the trunk deleted mathpkg/") == 2
    assert "module mathpkg.helpers, which the backend took from the trunk" in out
    code, out, err = _rebase(capsys, repo, "--apply")
    assert code == 0, out + err
    assert "restored  mathpkg/helpers.py" in out and "deleted   mathpkg/unused.py" in out
    assert "1 restored, 1 deleted" in err
    assert (repo / MIRROR / "helpers.py").read_text() == "def twice(x):\n    return 2 * x\n"
    assert not (repo / MIRROR / "unused.py").exists()
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--select", "FTS016")
    assert out.count("FTS016 the trunk deleted") == 1  # unused.py, until lock accepts it


def test_rebase_drop_identical_leaves_out_definitions_that_are_the_new_trunks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The new trunk takes the override's div; with --drop-identical, rebase leaves it
    out of the override (it flows in through inherit), and mul, whose merge is the new
    trunk's mul but for a comment, and removes util.py, now the trunk's module again."""
    repo = _locked_upgrade(tmp_path, capsys)
    ops = V2["ops.py"].replace("return a // b\n", "return a // b if b else 0\n")
    upgrade_trunk(
        repo, {"ops.py": ops, "util.py": "def clamp(x):\n    return max(0, min(x, 255))\n"}
    )
    code, out, _ = _rebase(capsys, repo, "--apply", "--drop-identical")
    assert "  div: identical: dropped\n  mul: identical: dropped\n" in out
    assert "identical mathpkg/util.py" in out
    override = (repo / MIRROR / "ops.py").read_text()
    assert "def div" not in override and "def mul" not in override and "def add" in override
    assert not (repo / MIRROR / "util.py").exists()
    entries = json.loads((repo / LOCK).read_text())["overrides"]
    assert "mathpkg/util.py" not in entries
    assert sorted(entries["mathpkg/ops.py"]["definitions"]) == ["add"]
    assert code == 1  # fmt.py still conflicts


def test_rebase_reports_an_override_deleted_since_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    (repo / MIRROR / "util.py").unlink()
    code, out, _ = _rebase(capsys, repo)
    assert "gone      mathpkg/util.py  (the override is gone since the lock" in out
    assert code == 1  # fmt.py still conflicts


def test_rebase_of_a_dropped_replaced_name_is_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    ops = V2["ops.py"].replace("def div(a, b):", "def floor_div(a, b):")
    upgrade_trunk(repo, {"ops.py": ops, "fmt.py": V2["fmt.py"].replace("value =", "value:")})
    code, out, _ = _rebase(capsys, repo)
    assert code == 1
    assert "conflict  mathpkg/ops.py  (trunk dropped or renamed 'div')" in out
    assert "  div: dropped\n" in out


def test_rebase_without_a_lock_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path)
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and "no lock file" in err and "flagtree-spec lock -b vendor" in err


def test_rebase_without_git_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and "git is not installed or not on PATH" in err


def test_interrupted_apply_leaves_every_file_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    before = snapshot(repo)
    _rebase(capsys, repo)  # what the merges would be, for comparison
    merged_repo = tmp_path / "merged"
    shutil.copytree(repo, merged_repo)
    _rebase(capsys, merged_repo, "--apply")
    after = snapshot(merged_repo)
    # The process dies (no clean-up runs) right after the first file is replaced.
    script = textwrap.dedent(
        f"""
        import os, sys
        real = os.replace
        calls = []
        def replace(src, dst):
            if calls:
                os._exit(3)
            calls.append(dst)
            real(src, dst)
        os.replace = replace
        from flagtree_spec._cli import main
        sys.exit(main(["rebase", "--repo", {str(repo)!r}, "-b", "vendor", "--apply"]))
        """
    )
    env = clean_env({"PYTHONPATH": LIBRARY})
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=NEUTRAL, capture_output=True, text=True
    )
    assert proc.returncode == 3, proc.stderr
    now = snapshot(repo)
    changed = [rel for rel in now if rel in before and now[rel] != before[rel]]
    assert changed == [f"{MIRROR}/fmt.py"]  # the first file written, whole
    for rel, data in now.items():
        if rel in before:
            assert data in (before[rel], after[rel]), rel
        else:  # the temporary file of the write that never happened
            assert os.path.basename(rel).startswith(".ops.py."), rel
    assert now[LOCK] == before[LOCK]


def test_rebase_leaves_an_inheriting_override_alone_when_only_other_definitions_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = upgrade_repo(tmp_path)
    run(capsys, "lock", "--repo", str(repo), "-b", "vendor")
    ops = (repo / TRUNK / "ops.py").read_text(encoding="utf-8")
    upgrade_trunk(repo, {"ops.py": ops.replace("return a - b", "return a - b - 0")})
    before = snapshot(repo)
    code, out, _ = _rebase(capsys, repo, "--apply")
    assert code == 0
    assert "unchanged mathpkg/ops.py\n  add: wrapped\n  div: unchanged\n  mul: unchanged\n" in out
    assert snapshot(repo) == before  # nothing to merge: the lock stays too


def test_rebase_skips_an_override_added_after_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    (repo / TRUNK / "extra.py").write_text("X = 1\n")
    (repo / MIRROR / "extra.py").write_text("X = 2\n")
    code, out, _ = _rebase(capsys, repo)
    assert code == 1 and "extra" not in out


def test_rebase_of_an_override_that_does_not_parse_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    (repo / MIRROR / "util.py").write_text("def clamp(:\n")
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and "cannot rebase mathpkg/util.py: a version does not parse" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"format": 2, "overrides": {}}', "is not a lock file of format 1"),
        ('{"format": 1, "overrides": {"a.py": {"digest": 3}}}', "is not a lock file"),
        ('{"format": 1, "overrides": {"a.py": {"digest": "d", "blob": 1}}}', "is not a lock"),
        (
            '{"format": 1, "overrides": {"a.py": {"digest": "d", "blob": null, '
            '"definitions": {"f": 1}}}}',
            "is not a lock file",
        ),
    ],
)
def test_rebase_with_a_broken_lock_file_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    repo = _locked_upgrade(tmp_path, capsys)
    (repo / LOCK).write_text(text)
    code, _, err = _rebase(capsys, repo)
    assert code == 2 and message in err and "run flagtree-spec lock again" in err


def test_rebase_keeps_what_the_override_reads_on_import_that_the_trunk_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trunk drops T (and dispatch, which the override replaces and uses): rebase
    copies T's locked definition, and the import it needs, into the override; the
    dropped dispatch stays, as the override's own code uses it.  It then imports."""
    repo = upgrade_repo(tmp_path)
    lib = (
        "from typing import TypeVar\n\nT = TypeVar('T')\n\n\n"
        "def dispatch(fn: T) -> T:\n    return fn\n\n\n"
        "def clz(x):\n    return x\n"
    )
    (repo / TRUNK / "lib.py").write_text(lib)
    (repo / MIRROR / "lib.py").write_text(
        "from flagtree_spec import inherit\n\ninherit(globals())\ndel inherit\n\n\n"
        "def dispatch(fn: T) -> T:\n    return fn\n\n\n"
        "@dispatch\ndef popc(x):\n    return x\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lib")
    assert run(capsys, "lock", "--repo", str(repo), "-b", "vendor")[0] == 0
    upgrade_trunk(repo, {**V2, "lib.py": "def clz(x):\n    return -x\n"})
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--select", "FTS023")
    assert "FTS023 reads 'T' while it is imported" in out
    code, out, _ = _rebase(capsys, repo, "--apply")
    assert code == 1  # fmt.py conflicts
    assert "  T: kept: the trunk dropped it, the override reads it on import" in out
    assert "  TypeVar: kept: the trunk dropped it, the override reads it on import" in out
    assert "  dispatch: kept: the trunk dropped it, the override uses it" in out
    text = (repo / MIRROR / "lib.py").read_text()
    assert text.startswith(
        "from flagtree_spec import inherit\n\ninherit(globals())\ndel inherit\n\n"
        "# Kept from the trunk the override was made against, which the trunk dropped:\n"
        "from typing import TypeVar\nT = TypeVar('T')\n"
    )
    _, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--select", "FTS023")
    assert "FTS023" not in out
    assert _printed(repo, "import mathpkg.lib as m; print(m.popc(3), m.clz(3))") == ["3", "-3"]


def test_rebase_outside_git_reads_deleted_files_from_the_old_trunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without git, the lock has no blob nor tree: --old-trunk gives the locked trunk,
    from which ops.py is written whole and a deleted helper module restored."""
    repo = upgrade_repo(tmp_path, in_git=False)
    (repo / TRUNK / "helpers.py").write_text("def twice(x):\n    return 2 * x\n")
    (repo / MIRROR / "util.py").write_text(
        "from .helpers import twice\n\n\ndef clamp(x):\n    return twice(x)\n"
    )
    assert run(capsys, "lock", "--repo", str(repo), "-b", "vendor")[0] == 0
    old = tmp_path / "old"
    shutil.copytree(repo / TRUNK, old / "mathpkg")
    (repo / TRUNK / "ops.py").unlink()
    (repo / TRUNK / "helpers.py").unlink()
    code, out, err = _rebase(capsys, repo)
    assert code == 2 and "pass --old-trunk DIR" in err
    code, out, err = _rebase(capsys, repo, "--apply", "--old-trunk", str(old / "mathpkg"))
    assert code == 0, err
    assert "whole     mathpkg/ops.py" in out and "restored  mathpkg/helpers.py" in out
    assert _printed(
        repo, "import mathpkg.ops as o, mathpkg.util as u; print(o.mul(3, 4), u.clamp(2))"
    ) == ["12", "4"]
