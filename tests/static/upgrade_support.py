"""A generated trunk upgrade: trunk v1, a backend's overrides, then trunk v2 (in git)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from cli_support import git, make

TRUNK = "python/mathpkg"
MIRROR = "third_party/vendor/backend/spec/mathpkg"
LOCK = "third_party/vendor/backend/spec/flagtree_spec.lock"

UPGRADE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "upgrade"
# fixtures/upgrade/v1: trunk v1 and the vendor's overrides.  ops.py inherits
# (wraps add, replaces mul and div); fmt.py and util.py are whole-file copies.
# fixtures/upgrade/trunk_v2: the upgrade.  ops.py changes add (wrapped), sub
# (not replaced), mul (replaced: merges cleanly) and square (comments only);
# fmt.py changes a line the override changed too (a conflict) and one it did
# not; util.py changes comments and blank lines only.


def _files(top: Path) -> dict[str, str]:
    return {
        str(p.relative_to(top)): p.read_text(encoding="utf-8")
        for p in sorted(top.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


V2 = _files(UPGRADE / "trunk_v2" / "mathpkg")


def upgrade_repo(base: Path, *, in_git: bool = True) -> Path:
    """Trunk v1 and the overrides, committed when *in_git*."""
    repo = base / "repo"
    make(repo, _files(UPGRADE / "v1"))
    if in_git:
        git(repo, "init", "-q", ".")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "trunk v1 and the vendor overrides")
    return repo


def upgrade_trunk(
    repo: Path, files: Optional[dict[str, str]] = None, *, in_git: bool = True
) -> None:
    """Write trunk v2 (or *files*, relative to the trunk folder) and commit it."""
    make(repo / TRUNK, dict(V2 if files is None else files))
    if in_git:
        git(repo, "commit", "-qam", "trunk v2")


def snapshot(repo: Path) -> dict[str, bytes]:
    """Every file below *repo* except git's own, by relative path."""
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
