"""Shared helpers: fixture trees on disk and scenarios run in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

import pytest

import flagtree_spec

# The pytest plugin's tests run sessions of their own.
pytest_plugins = ["pytester"]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCE = FIXTURES / "source_repo"
SOURCE_PY = SOURCE / "python"
INSTALLED = FIXTURES / "installed" / "site-packages"
# A working directory for child interpreters that holds no importable package.
NEUTRAL = FIXTURES / "neutral_cwd"
# Where the library under test was imported from (the installed package in CI).
LIBRARY = str(Path(flagtree_spec.__file__).resolve().parent.parent)


def clean_env(extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment without any FLAGTREE_* setting, plus *extra*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env.pop("PYTHONPATH", None)
    env.update(extra or {})
    return env


class ScenarioError(AssertionError):
    pass


def run_python(
    code: str,
    *,
    env: Optional[Mapping[str, str]] = None,
    path: Sequence[os.PathLike[str] | str] = (SOURCE_PY,),
    cwd: Optional[os.PathLike[str] | str] = None,
    expect_rc: int = 0,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run *code* in a fresh interpreter; check its exit code, show stderr on failure."""
    full_env = clean_env(env)
    full_env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in path), LIBRARY])
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        # Not the checkout: "python -c" puts the working directory first on
        # sys.path, and the source folder there would shadow the installed package.
        cwd=NEUTRAL if cwd is None else cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != expect_rc:
        raise ScenarioError(
            f"exit code {proc.returncode}, expected {expect_rc}\n--- stdout\n{proc.stdout}"
            f"\n--- stderr\n{proc.stderr}"
        )
    return proc


def scenario(code: str, **kwargs: Any) -> Any:
    """Run *code*, which must print one JSON document last, and return that document."""
    proc = run_python(code, **kwargs)
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise ScenarioError(f"no output\n--- stderr\n{proc.stderr}")
    return json.loads(lines[-1])


@pytest.fixture
def outside_the_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in a folder that holds none of the fixture trees, so that the commands' text
    output shows their paths absolute (paths below the working folder print relative)."""
    monkeypatch.chdir(NEUTRAL)


@pytest.fixture
def import_state() -> Iterator[None]:
    """Restore the import system and the library's state exactly after an in-process test."""
    from flagtree_spec import _activate

    saved_modules = dict(sys.modules)
    saved_meta = list(sys.meta_path)
    saved_hooks = list(sys.path_hooks)
    saved_cache = dict(sys.path_importer_cache)
    saved_path = list(sys.path)
    saved_state = _activate._snapshot()
    try:
        yield
    finally:
        _activate._restore(saved_state)
        sys.modules.clear()
        sys.modules.update(saved_modules)
        sys.meta_path[:] = saved_meta
        sys.path_hooks[:] = saved_hooks
        sys.path_importer_cache.clear()
        sys.path_importer_cache.update(saved_cache)
        sys.path[:] = saved_path
