"""``flagtree-spec migrate``: plan, apply, bad input, interrupted runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import git, make, run
from conftest import FIXTURES, LIBRARY, run_python

REPO = FIXTURES / "migrate_repo"
BASE = FIXTURES / "migrate_base" / "minitri"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"


def snapshot(top: Path) -> dict[str, bytes | str]:
    """Every file and link below *top*: its bytes, or the link's target."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(top))
            if path.is_symlink():
                found[rel] = os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The fixture checkout, copied (links as links), committed in git."""
    top = tmp_path / "repo"
    shutil.copytree(REPO, top, symlinks=True)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "whole-tree copy")
    return top


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = run(capsys, "migrate", *argv, "--format", "json")
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def actions(data: dict[str, object]) -> dict[str, str]:
    entries = data["entries"]
    assert isinstance(entries, list)
    return {e["path"]: e["action"] for e in entries}


# --------------------------------------------------------------------------- plan


def test_plan_classifies_every_entry_and_changes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(repo)
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    assert snapshot(repo) == before
    assert actions(data) == {
        "__init__.py": "keep",
        "backends/__init__.py": "drop",
        "backends/nvidia": "link",
        "compiler/__init__.py": "drop",
        "compiler/code_generator.py": "move",
        "compiler/passes.json": "move",
        "language/__init__.py": "drop",
        "language/acme_extra.py": "add",
        "language/core.py": "drop",
        "language/math.py": "drop",
        "runtime/__init__.py": "drop",
        "runtime/autotuner.py": "move",
        "runtime/cache.py": "drop",
        "runtime/cache_link.py": "link",
        "runtime/jit.py": "move",
    }
    assert data["summary"] == {
        "drop": 7, "move": 4, "minimize": 0, "add": 1, "link": 2, "keep": 1
    }  # fmt: skip
    assert data["fork"] == str(repo / COPY)
    assert data["trunk"] == str(repo / "python" / "minitri")
    assert data["into"] == str(repo / MIRROR)
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    jit = entries["runtime/jit.py"]
    assert jit["trunk"] == str(repo / "python/minitri/runtime/jit.py")
    assert jit["lines_before"] == jit["lines_after"] == 50
    assert set(jit) >= {"path", "trunk", "action", "reason", "lines_before", "lines_after"}
    assert entries["language/acme_extra.py"]["trunk"] is None
    assert entries["runtime/cache.py"]["lines_after"] == 0


def test_plan_with_explicit_folders_equals_repo_options(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    derived = plan_json(capsys, "--repo", str(repo), "-b", "acme", "--root", "minitri")
    explicit = plan_json(
        capsys,
        "--fork", str(repo / COPY),
        "--trunk", str(repo / "python/minitri"),
        "--into", str(repo / MIRROR),
    )  # fmt: skip
    assert derived == explicit


def test_ast_identical_copy_is_dropped(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    assert entries["language/core.py"]["reason"] == "AST-identical to trunk"
    assert entries["language/math.py"]["reason"] == "byte-identical to trunk"


def test_symlink_is_a_link_never_followed(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    assert "into trunk" in entries["backends/nvidia"]["reason"]
    # Nothing below the linked folder is classified, nor reported missing.
    assert not any(p.startswith("backends/nvidia/") for p in entries)
    assert data["missing"] == []


def test_root_init_is_kept_with_what_differs_and_a_suggestion(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "migrate", "--repo", str(repo), "-b", "acme")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("keep"))
    assert "__init__.py" in line and "can never be an override" in line
    assert 'os.environ.setdefault("ACME_DEVICE", "0")' in line
    assert "hook module" in line
    assert "migrate-leftovers" in out
    assert "nothing changed; run again with --apply" in out


def test_trunk_files_missing_from_the_copy_are_listed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / COPY / "language" / "math.py").unlink()
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    assert data["missing"] == ["language/math.py"]
    code, out, _ = run(capsys, "migrate", "--repo", str(repo), "-b", "acme")
    assert code == 0
    assert "not in the copy (1 trunk files" in out and "  language/math.py" in out


def test_moved_package_init_is_warned_about(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init = repo / COPY / "runtime" / "__init__.py"
    init.write_text(init.read_text() + "from . import jit\n")
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    assert actions(data)["runtime/__init__.py"] == "move"
    warnings = data["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1
    assert warnings[0].startswith("runtime/__init__.py: a package __init__ override")


def test_counterpart_is_the_base_backends_override(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Backend acme builds on tileir, whose override of jit.py equals acme's copy.
    make(
        repo,
        {
            "third_party/acme/backend/spec/flagtree_spec.json": '{"base": ["tileir"]}',
            "third_party/tileir/backend/spec/minitri/runtime/jit.py": (
                repo / COPY / "runtime/jit.py"
            ).read_text(),
        },
    )
    data = plan_json(capsys, "--repo", str(repo), "-b", "acme")
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    jit = entries["runtime/jit.py"]
    assert jit["action"] == "drop"
    assert jit["trunk"] == str(repo / "third_party/tileir/backend/spec/minitri/runtime/jit.py")
    # Files the base backend does not override still compare with trunk.
    assert entries["runtime/autotuner.py"]["trunk"] == str(
        repo / "python/minitri/runtime/autotuner.py"
    )


# --------------------------------------------------------------------------- apply


def test_apply_moves_with_git_mv_and_leaves_nothing_loadable(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(repo / COPY)
    argv = ("migrate", "--repo", str(repo), "-b", "acme", "--apply", "--no-verify")
    code, out, err = run(capsys, *argv)
    assert code == 1, err  # check: the packages do not call spec_path yet (FTS001)
    assert "FTS001" in out
    # Nothing under the old copy can load: the folder is gone.
    assert not (repo / COPY).exists()
    mirror = repo / MIRROR
    for rel in ("runtime/jit.py", "runtime/autotuner.py", "compiler/code_generator.py",
                "compiler/passes.json", "language/acme_extra.py"):  # fmt: skip
        assert (mirror / rel).read_bytes() == before[rel], rel
    leftover = repo / "third_party/acme/migrate-leftovers/minitri/__init__.py"
    assert leftover.read_bytes() == before["__init__.py"]
    assert sorted(p.name for p in mirror.rglob("*") if p.is_file()) == [
        "acme_extra.py", "autotuner.py", "code_generator.py", "jit.py", "passes.json"
    ]  # fmt: skip
    status = git(repo, "status", "--porcelain")
    assert f"R  {COPY}/runtime/jit.py -> {MIRROR}/runtime/jit.py" in status
    assert f"D  {COPY}/runtime/cache.py" in status


def test_apply_outside_git_moves_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = tmp_path / "plain"
    shutil.copytree(REPO, top, symlinks=True)
    code, out, _ = run(
        capsys, "migrate", "--repo", str(top), "-b", "acme", "--apply", "--add-spec-path"
    )
    assert code == 0, out
    assert (top / MIRROR / "runtime/jit.py").is_file()
    assert not (top / COPY).exists()
    assert "check: 0 errors, 2 other findings" in out  # FTS008 added module, FTS005 drift
    assert "FTS005" in out and "interpret_enabled" in out


def test_add_spec_path_goes_before_the_first_other_import(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    init = repo / "python/minitri/runtime/__init__.py"
    text = '"""Runtime."""\nfrom __future__ import annotations\n\nfrom . import cache\n'
    init.write_text(text)
    (repo / COPY / "runtime/__init__.py").write_text(text)
    code, out, _ = run(
        capsys, "migrate", "--repo", str(repo), "-b", "acme", "--apply", "--add-spec-path"
    )
    assert code == 0, out
    assert init.read_text() == (
        '"""Runtime."""\nfrom __future__ import annotations\n\n'
        "try:\n    from flagtree_spec import spec_path\nexcept ImportError:\n    pass\n"
        "else:\n    spec_path(__path__)\n\nfrom . import cache\n"
    )
    # Exactly the packages that hold overrides or added modules; not the root, not backends.
    changed = {line.split()[-1] for line in git(repo, "status", "--porcelain").splitlines()
               if line.startswith(" M")}  # fmt: skip
    assert changed == {
        "python/minitri/compiler/__init__.py",
        "python/minitri/language/__init__.py",
        "python/minitri/runtime/__init__.py",
    }
    assert "check: 0 errors" in out
    # The new tree imports: the backend's changed function, the trunk for the rest.
    proc = run_python(
        """
        import minitri.runtime.jit as jit, minitri.language.acme_extra as extra
        print(jit.cache_key(jit.jit)[0], jit.__spec__.origin.count("acme"), extra.bf16x2)
        """,
        path=[repo / "python"],
        env={"FLAGTREE_BACKEND": "acme"},
    )
    assert proc.stdout.split() == ["acme", "1", "minitri.bf16x2"]


def test_add_spec_path_without_docstring_keeps_leading_comments(tmp_path: Path) -> None:
    from flagtree_spec._tools.migrate.apply import insert_spec_path

    init = tmp_path / "__init__.py"
    init.write_text("# -*- coding: utf-8 -*-\n# licence\nimport os\n")
    assert insert_spec_path(str(init))
    assert init.read_text().startswith("# -*- coding: utf-8 -*-\n# licence\n\ntry:\n")
    assert init.read_text().endswith("    spec_path(__path__)\n\nimport os\n")
    assert not insert_spec_path(str(init))  # already there: unchanged
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b'"""Doc."""\r\nimport os\r\n')
    assert insert_spec_path(str(crlf))
    assert crlf.read_bytes().count(b"\r\n") == crlf.read_bytes().count(b"\n") == 10


# --------------------------------------------------------------------------- bad input


def bad(capsys: pytest.CaptureFixture[str], top: Path, *argv: str) -> str:
    before = snapshot(top)
    code, out, err = run(capsys, "migrate", *argv)
    assert code == 2, out + err
    assert snapshot(top) == before
    assert err.startswith("flagtree-spec migrate: error: ")
    return err


def test_fork_equal_to_trunk_is_an_input_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trunk = str(repo / "python/minitri")
    err = bad(capsys, repo, "--fork", trunk, "--trunk", trunk, "--into", str(repo / MIRROR))
    assert "same folder" in err


def test_into_inside_fork_is_an_input_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad(
        capsys, repo,
        "--fork", str(repo / COPY),
        "--trunk", str(repo / "python/minitri"),
        "--into", str(repo / COPY / "spec"),
        "--apply",
    )  # fmt: skip
    assert "lies inside --fork" in err


def test_copy_of_another_package_is_an_input_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = repo / "third_party/acme/python/otherpkg"
    make(other, {"__init__.py": "X = 1\n"})
    err = bad(
        capsys, repo, "--fork", str(other), "--trunk", str(repo / "python/minitri"),
        "--into", str(repo / MIRROR), "--apply",
    )  # fmt: skip
    assert "copy of package 'otherpkg'" in err
    renamed = repo / "elsewhere" / "minitri"
    make(renamed, {"unrelated.py": "X = 1\n"})
    err = bad(
        capsys, repo, "--fork", str(renamed), "--trunk", str(repo / "python/minitri"),
        "--into", str(repo / MIRROR), "--apply",
    )  # fmt: skip
    assert "shares no file with the trunk" in err


def test_base_that_is_not_an_older_trunk_is_an_input_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ("--repo", str(repo), "-b", "acme", "--minimize", "--apply")
    err = bad(capsys, repo, *common, "--base", str(repo / "third_party"))
    assert "is not an older trunk of 'minitri'" in err
    err = bad(capsys, repo, *common, "--base", str(repo / COPY))
    assert "is the fork" in err
    err = bad(capsys, repo, *common, "--base-rev", "no-such-rev")
    assert "--base-rev no-such-rev" in err
    # A later commit is not an ancestor of HEAD.
    git(repo, "checkout", "-q", "-b", "later")
    (repo / "README").write_text("x")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "later")
    later = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-")
    err = bad(capsys, repo, *common, "--base-rev", later)
    assert "not an ancestor of HEAD" in err


def test_unreadable_or_undecodable_file_is_an_input_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = repo / COPY / "runtime" / "broken.py"
    broken.write_bytes(b"# -*- coding: ascii -*-\nX = '\xff'\n")
    err = bad(capsys, repo, "--repo", str(repo), "-b", "acme", "--apply")
    assert "broken.py does not decode" in err
    broken.unlink()
    if os.geteuid() == 0:
        return  # root reads every file
    secret = repo / COPY / "runtime" / "jit.py"
    secret.chmod(0)
    try:
        err = bad(capsys, repo, "--repo", str(repo), "-b", "acme", "--apply")
    finally:
        secret.chmod(0o644)
    assert "cannot be read" in err


def test_unusable_options_are_input_errors(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "give --fork, --trunk and --into" in bad(capsys, repo, "--fork", str(repo))
    assert "--repo needs the backend" in bad(capsys, repo, "--repo", str(repo))
    assert "not both" in bad(capsys, repo, "--repo", str(repo), "-b", "acme", "--fork", "x")
    assert "go with --minimize" in bad(capsys, repo, "--repo", str(repo), "-b", "acme",
                                       "--base", str(BASE))  # fmt: skip
    assert "-b and --root go with --repo" in bad(
        capsys, repo, "--fork", "a", "--trunk", "b", "--into", "c", "-b", "acme"
    )


def test_existing_different_destination_is_an_input_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make(repo / MIRROR, {"runtime/jit.py": "X = 'hand-written'\n"})
    err = bad(capsys, repo, "--repo", str(repo), "-b", "acme", "--apply")
    assert "runtime/jit.py already exists and differs" in err


def test_minimize_apply_needs_a_clean_committed_copy(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / COPY / "runtime" / "jit.py").write_text("X = 2\n")
    err = bad(capsys, repo, "--repo", str(repo), "-b", "acme", "--minimize", "--apply")
    assert "committed and clean" in err and "runtime/jit.py" in err
    plain = tmp_path / "plain"
    shutil.copytree(REPO, plain, symlinks=True)
    err = bad(capsys, plain, "--repo", str(plain), "-b", "acme", "--minimize", "--apply")
    assert "is not in a git work tree" in err


# --------------------------------------------------------------------------- interrupted runs

_INTERRUPTED = """
import sys
from flagtree_spec._tools.migrate import apply as migrate_apply
from flagtree_spec._cli import main

def stop(k):
    if k == {k}:
        raise KeyboardInterrupt
migrate_apply.after_step = stop
try:
    main(sys.argv[1:])
except KeyboardInterrupt:
    sys.exit(75)
sys.exit(0)
"""


def test_interrupted_run_keeps_every_file_and_a_rerun_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = snapshot(REPO / COPY)
    probe = plan_json(capsys, "--repo", str(REPO), "-b", "acme")
    steps = len(probe["entries"]) + len(probe["spec_path"])  # type: ignore[arg-type]
    assert steps == 18
    for k in range(1, steps + 1):
        top = tmp_path / f"run{k}"
        shutil.copytree(REPO, top, symlinks=True)
        git(top, "init", "-q")
        git(top, "add", "-A")
        git(top, "commit", "-qm", "copy")
        argv = ["--repo", str(top), "-b", "acme", "--minimize", "--base", str(BASE), "--apply"]
        argv.append("--add-spec-path")
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_INTERRUPTED.format(k=k)), "migrate", *argv],
            env={**os.environ, "PYTHONPATH": LIBRARY},
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert proc.returncode in (0, 75), proc.stderr
        check_nothing_lost(top, original)
        code, out, err = run(capsys, "migrate", *argv)
        if proc.returncode == 75:
            assert code == 0, out + err
        check_nothing_lost(top, original)
        assert not (top / COPY).exists(), k
        spec = "spec_path(__path__)"
        assert (top / "python/minitri/runtime/__init__.py").read_text().count(spec) == 1, k


def check_nothing_lost(top: Path, original: dict[str, bytes | str]) -> None:
    """Every file of the copy is readable at one of its locations."""
    trunk = top / "python/minitri"
    for rel, data in original.items():
        if isinstance(data, str):
            continue  # a link holds no data
        places = [top / COPY / rel, top / MIRROR / rel,
                  top / "third_party/acme/migrate-leftovers/minitri" / rel]  # fmt: skip
        found = [p.read_bytes() for p in places if p.is_file() and not p.is_symlink()]
        if (trunk / rel).is_file() and rel in IDENTICAL:
            continue  # identical to trunk: trunk's file holds it
        assert found, rel
        assert data in found or rel in MINIMIZED, rel


IDENTICAL = {
    "backends/__init__.py", "compiler/__init__.py", "language/__init__.py", "language/core.py",
    "language/math.py", "runtime/__init__.py", "runtime/cache.py",
}  # fmt: skip
MINIMIZED = {"runtime/jit.py", "compiler/code_generator.py"}


def test_the_guide_shows_what_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    guide = (Path(__file__).resolve().parent.parent.parent / "docs" / "migrate.md").read_text()
    top = tmp_path / "demo"
    shutil.copytree(REPO, top, symlinks=True)
    shutil.copytree(BASE.parent, tmp_path / "demo_base")
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "whole-tree copy")
    monkeypatch.chdir(top)
    code, plain, _ = run(capsys, "migrate", "--repo", ".", "-b", "acme")
    assert code == 0
    assert plain in guide  # the whole plan, line for line
    argv = ["migrate", "--repo", ".", "-b", "acme", "--minimize", "--base", "../demo_base/minitri"]
    code, minimized, _ = run(capsys, *argv)
    assert code == 0
    for line in minimized.splitlines():
        if line.startswith(("minimize", "move      runtime", "summary")):
            assert line in guide, line
    code, applied, _ = run(capsys, *argv, "--apply", "--add-spec-path")
    assert code == 0
    for line in applied.splitlines()[-6:]:
        assert line in guide, line
