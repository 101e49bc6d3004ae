"""Auto mode on an unmodified package installed into a virtual environment.

Slow (a virtual environment, pip builds): one environment per session, with
this library installed; each test installs the fixture package
``fixtures/unmodified`` (whose ``__init__.py`` files never call ``spec_path``)
as a wheel or as an editable install, then runs programs with the
environment's own interpreter and ``flagtree-spec`` console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import pytest
from conftest import FIXTURES, ScenarioError, clean_env

pytestmark = pytest.mark.slow

REPO = FIXTURES.parent
BACKENDS = FIXTURES / "unmodified_backends"
ZETA = BACKENDS / "third_party" / "zeta" / "backend" / "spec" / "unmodpkg"

PROBE = """
import json, subprocess, sys
import unmodpkg, unmodpkg.runtime.jit as jit, unmodpkg.core as core
child = subprocess.run([sys.executable, "-c", "import unmodpkg.runtime.jit as j; print(j.WHERE)"],
                       capture_output=True, text=True, check=True).stdout.strip()
print(json.dumps({"jit": jit.WHERE, "core": core.describe(), "child": child,
                  "trunk": unmodpkg.__file__, "path": list(unmodpkg.__path__),
                  "library": "flagtree_spec" in sys.modules}))
"""


class Venv:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / ("Scripts" if os.name == "nt" else "bin")
        self.python = str(self.bin / "python")

    def run(
        self, args: Sequence[str], *, env: Optional[dict] = None, cwd: Optional[Path] = None
    ) -> subprocess.CompletedProcess:
        full_env = clean_env({"FLAGTREE_SOURCE_ROOT": str(BACKENDS), **(env or {})})
        full_env.pop("VIRTUAL_ENV", None)
        proc = subprocess.run(
            list(args), env=full_env, cwd=cwd, capture_output=True, text=True, timeout=300
        )
        if proc.returncode != 0:
            raise ScenarioError(
                f"{list(args)} exit code {proc.returncode}\n--- stdout\n{proc.stdout}"
                f"\n--- stderr\n{proc.stderr}"
            )
        return proc

    def pip(self, *args: str, cwd: Optional[Path] = None) -> None:
        self.run([self.python, "-m", "pip", "--disable-pip-version-check", "-q", *args], cwd=cwd)

    def probe(self, *prefix: str, env: Optional[dict] = None, cwd: Path) -> dict:
        script = cwd / "probe.py"
        script.write_text(PROBE)
        proc = self.run([*prefix, str(script)], env=env, cwd=cwd)
        return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    env = Venv(root)
    env.pip("install", "--no-deps", str(REPO))
    return env


def _install_unmodified(venv: Venv, tmp_path: Path, *, editable: bool) -> Path:
    source = tmp_path / "unmodified"
    shutil.copytree(FIXTURES / "unmodified", source)
    venv.pip(
        "install", "--no-deps", "--force-reinstall", *(["-e"] if editable else []), str(source)
    )
    return source


@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_auto_installed_unmodified_package_is_specialised_by_run_with_zero_edits(
    venv, tmp_path, editable
):
    source = _install_unmodified(venv, tmp_path, editable=editable)
    work = tmp_path / "work"
    work.mkdir()
    plain = venv.probe(venv.python, env={"FLAGTREE_BACKEND": "zeta"}, cwd=work)
    assert (plain["jit"], plain["core"], plain["child"]) == ("trunk", "core:trunk", "trunk")
    trunk = os.path.dirname(plain["trunk"])
    if editable:
        assert trunk == str(source / "unmodpkg")
    else:
        assert trunk.startswith(str(venv.root)) and "site-packages" in trunk
    out = venv.probe(
        str(venv.bin / "flagtree-spec"), "run", "-b", "zeta", "--root", "unmodpkg", cwd=work
    )
    assert (out["jit"], out["core"], out["child"]) == ("zeta", "core:zeta", "zeta")
    assert out["path"] == [str(ZETA), trunk]


def test_auto_installed_autostart_honours_flagtree_spec_auto_and_survives_uninstall(venv, tmp_path):
    _install_unmodified(venv, tmp_path, editable=False)
    work = tmp_path / "work"
    work.mkdir()
    venv.run([str(venv.bin / "flagtree-spec"), "autostart", "enable"])
    try:
        env = {"FLAGTREE_BACKEND": "zeta", "FLAGTREE_SPEC_AUTO": "unmodpkg"}
        out = venv.probe(venv.python, env=env, cwd=work)
        assert (out["jit"], out["core"], out["child"]) == ("zeta", "core:zeta", "zeta")
        out = venv.probe(venv.python, env={"FLAGTREE_BACKEND": "zeta"}, cwd=work)
        assert (out["jit"], out["library"]) == ("trunk", False)
        venv.pip("uninstall", "-y", "flagtree-spec")
        proc = venv.run(
            [venv.python, "-c", "import unmodpkg.runtime.jit as j; print(j.WHERE)"],
            env=env,
            cwd=work,
        )
        assert (proc.stdout.strip(), proc.stderr) == ("trunk", "")
    finally:
        venv.pip("install", "--no-deps", str(REPO))
        venv.run([str(venv.bin / "flagtree-spec"), "autostart", "disable"])
