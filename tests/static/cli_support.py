"""Helpers shared by the static command tests: write a tree, run the command line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

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
