"""Helpers shared by the static command tests: write a tree, run the command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Union

import pytest
from conftest import scenario

from flagtree_spec._cli import main


def make(base: Path, files: dict[str, str | bytes]) -> None:
    """Write *files* (relative path -> text or bytes) below *base*."""
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def shown(path: Union[str, Path]) -> str:
    """*path* as text output shows it: relative to the working folder when below it."""
    here = os.getcwd() + os.sep
    text = str(path)
    return text[len(here) :] if text.startswith(here) else text


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``flagtree-spec *argv`` in this process: exit code, stdout, stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def git(where: Path, *args: str) -> str:
    """Run git in *where* as a throwaway identity; its standard output (fails on an error)."""
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=where,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def tree_files(top: Path) -> dict[str, bytes | str]:
    """Every file below *top* (not under ``.git``): its bytes, or a link's target."""
    found: dict[str, bytes | str] = {}
    for folder, _, names in os.walk(top):
        if ".git" in Path(folder).parts:
            continue
        for name in names:
            path = Path(folder) / name
            rel = str(path.relative_to(top))
            found[rel] = os.readlink(path) if path.is_symlink() else path.read_bytes()
    return found


def as_migrated(top: Path, code: str) -> Any:
    """Run *code* against trunk plus the new spec tree of backend acme in checkout *top*."""
    return scenario(code, env={"FLAGTREE_BACKEND": "acme"}, path=[top / "python"])


def as_the_copy(case: Path, code: str) -> Any:
    """Run *code* against the copy of fixture checkout *case* itself (untouched)."""
    copy = case / "third_party" / "acme" / "python"
    return scenario(code, env={"FLAGTREE_BACKEND": "none"}, path=[copy])
