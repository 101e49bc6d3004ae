"""Helpers shared by the static command tests: write a tree, run the command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Union

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
