"""``migrate --verify``: the copy and trunk plus the new spec tree, imported and compared.

``--verify`` imports every module of the copy in three fresh interpreters
(the copy, trunk alone, trunk plus the new spec tree) and compares per
module and name; ``--apply`` runs it unless ``--no-verify``, and undoes the
migration when it fails unless ``--keep-on-failure``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import git, make, run
from cli_support import tree_files as files
from conftest import FIXTURES

REPO = FIXTURES / "migrate_repo"
BASE = FIXTURES / "migrate_base" / "minitri"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    shutil.copytree(REPO, top, symlinks=True)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "whole-tree copy")
    return top


def migrate(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, str, str]:
    return run(capsys, "migrate", "--repo", str(repo), "-b", "acme", *argv)


def test_verify_without_apply_migrates_scratch_copies_and_changes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = files(repo)
    code, out, err = migrate(
        capsys, repo, "--minimize", "--base", str(BASE), "--add-spec-path", "--verify"
    )
    assert code == 0, out + err
    assert (
        "verify: equivalent: 11 of 12 modules imported on both sides and match the copy "
        "(65 names compared); 1 differs as expected"
    ) in out
    # The root __init__ stays in migrate-leftovers: it cannot match, and says so.
    assert "minitri  expected (its copy is kept in migrate-leftovers)" in out
    assert files(repo) == before
    assert git(repo, "status", "--porcelain") == ""


def test_apply_verifies_by_default_and_a_failed_verification_undoes_the_migration(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = files(repo)
    # Without --add-spec-path no package calls spec_path: no override loads.
    code, out, err = migrate(capsys, repo, "--apply")
    assert code == 1, out + err
    assert "verify: minitri.runtime.jit" in out
    assert "cache_key: not the copy's" in out
    assert "verify: the migration is undone: the tree is as it was before" in out
    assert files(repo) == before
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / "third_party" / "acme" / "backend").exists()  # no folder it made


def test_keep_on_failure_keeps_the_failed_migration(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = migrate(capsys, repo, "--apply", "--keep-on-failure")
    assert code == 1, out + err
    assert "verify: the migration is kept (--keep-on-failure)" in out
    assert (repo / MIRROR / "runtime" / "jit.py").is_file()
    assert not (repo / COPY / "runtime" / "jit.py").exists()


def test_json_carries_the_verification_per_module_and_name(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = migrate(capsys, repo, "--apply", "--format", "json")
    assert code == 1, err
    data: dict[str, Any] = json.loads(out)
    verification = data["verification"]
    assert verification["status"] == "differs" and verification["undone"] is True
    modules = {m["module"]: m for m in verification["modules"]}
    jit = modules["minitri.runtime.jit"]
    assert jit["copy"] == jit["new"] == "imports"
    assert any(d.startswith("cache_key: not the copy's") for d in jit["differences"])
    assert modules["minitri"]["expected"] is True
    assert "check" not in data  # nothing to check: the tree is as before


def test_apply_with_add_spec_path_verifies_equivalent_and_keeps_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("--minimize", "--base", str(BASE), "--apply", "--add-spec-path", "--format", "json")
    code, out, err = migrate(capsys, repo, *argv)
    assert code == 0, out + err
    data = json.loads(out)
    assert data["verification"]["status"] == "equivalent"
    assert data["verification"]["undone"] is False
    assert (repo / MIRROR / "runtime" / "jit.py").is_file()


def test_no_verify_skips_the_verification(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = migrate(capsys, repo, "--apply", "--no-verify", "--format", "json")
    assert code == 1, err  # FTS001 from check: the packages do not call spec_path yet
    assert "verification" not in json.loads(out)
    assert (repo / MIRROR / "runtime" / "jit.py").is_file()


def test_trunk_that_cannot_import_is_verified_statically_only_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = '"""A root whose compiled part is missing."""\n\nfrom ._C import libminitri\n'
    jit = '"""Kernels."""\n\n\ndef jit(fn):\n    return fn\n'
    make(
        tmp_path,
        {
            "python/minitri/__init__.py": root,
            "python/minitri/runtime/__init__.py": '"""Runtime."""\n',
            "python/minitri/runtime/jit.py": jit,
            f"{COPY}/__init__.py": root,
            f"{COPY}/runtime/__init__.py": '"""Runtime."""\n',
            f"{COPY}/runtime/jit.py": jit.replace("return fn", "return ('acme', fn)"),
        },
    )
    code, out, err = migrate(capsys, tmp_path, "--apply", "--add-spec-path", "--format", "json")
    assert code == 0, out + err
    assert "warning: trunk cannot import minitri by itself (ModuleNotFoundError" in err
    assert "only the static proof holds" in err
    verification = json.loads(out)["verification"]
    assert verification["status"] == "static-only" and verification["undone"] is False
    assert (tmp_path / MIRROR / "runtime" / "jit.py").is_file()


def test_unusable_verification_options_are_input_errors(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = migrate(capsys, repo, "--verify", "--no-verify")
    assert code == 2 and "give --verify or --no-verify, not both" in err
    code, _, err = migrate(capsys, repo, "--keep-on-failure")
    assert code == 2 and "--keep-on-failure goes with --apply" in err
