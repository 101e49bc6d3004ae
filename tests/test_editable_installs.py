"""Editable installs of every kind, installed for real into a virtual environment.

Slow (a virtual environment; the build backends come from the package index):
one environment per session holds this library and the build tools; each test
copies fixtures/editable_kinds (a FlagTree-shaped repository, renamed
``edk_<kind>``) and installs it with ``pip install --no-build-isolation -e``.

Rules: setuptools (lenient and strict mode) and hatchling editable installs
are specialised like a source tree (strict mode imports from a link tree under
``build/__editable__...``: the source layout is found from the real path of
``__init__.py``).  meson-python and scikit-build-core answer imports from a
finder of their own that ignores ``__path__``: that is reported once, as one
``SpecWarning`` naming the tool and what to do; ``trunk_path`` and
``FLAGTREE_SPEC_DISABLE`` still give correct answers or a clear error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ScenarioError, clean_env

from flagtree_spec import SpecWarning

pytestmark = pytest.mark.slow

REPO = FIXTURES.parent
TEMPLATE = FIXTURES / "editable_kinds"
TOOLS = [
    "setuptools>=64",
    "wheel",
    "hatchling",
    "editables",
    "meson-python",
    "meson",
    "ninja",
    "scikit-build-core",
    "cmake",
]


class Venv:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.python = str(self.bin / "python")

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        env = clean_env(extra)
        env.pop("VIRTUAL_ENV", None)
        # meson-python's editable loader runs meson and ninja from the environment.
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        return env

    def run(self, args: list[str], *, env: dict[str, str], cwd: Path) -> str:
        proc = subprocess.run(
            args, env=self.env(env), cwd=cwd, capture_output=True, text=True, timeout=600
        )
        if proc.returncode != 0:
            raise ScenarioError(
                f"{args} exit code {proc.returncode}\n--- stdout\n{proc.stdout}"
                f"\n--- stderr\n{proc.stderr}"
            )
        return proc.stdout

    def pip(self, *args: str, cwd: Path) -> None:
        self.run(
            [self.python, "-m", "pip", "-q", "--disable-pip-version-check", *args], env={}, cwd=cwd
        )


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    root = tmp_path_factory.mktemp("editable") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    env = Venv(root)
    env.pip("install", *TOOLS, cwd=root)
    env.pip("install", "--no-deps", str(REPO), cwd=root)
    return env


BUILD = {
    "setuptools": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "{name}"\nversion = "1.0"\n'
        '[tool.setuptools.packages.find]\nwhere = ["python"]\n'
    ),
    "hatchling": (
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "{name}"\nversion = "1.0"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["python/{name}"]\n'
    ),
    "meson-python": (
        '[build-system]\nrequires = ["meson-python"]\nbuild-backend = "mesonpy"\n'
        '[project]\nname = "{name}"\nversion = "1.0"\n'
    ),
    "scikit-build-core": (
        '[build-system]\nrequires = ["scikit-build-core"]\n'
        'build-backend = "scikit_build_core.build"\n'
        '[project]\nname = "{name}"\nversion = "1.0"\n'
        '[tool.scikit-build]\nwheel.packages = ["python/{name}"]\n'
    ),
}
EXTRA = {
    "meson-python": (
        "meson.build",
        "project('{name}', version: '1.0')\n"
        "py = import('python').find_installation(pure: false)\n"
        "install_subdir('python/{name}', install_dir: py.get_install_dir())\n",
    ),
    "scikit-build-core": (
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.15)\nproject({name} LANGUAGES NONE)\n",
    ),
}


def install(venv: Venv, tmp_path: Path, backend: str, name: str, *options: str) -> Path:
    repo = tmp_path / name
    shutil.copytree(TEMPLATE, repo, ignore=shutil.ignore_patterns("__pycache__", "README"))
    for folder in (repo / "python", repo / "third_party" / "alpha" / "backend" / "spec"):
        (folder / "edkpkg").rename(folder / name)
    (repo / "pyproject.toml").write_text(BUILD[backend].format(name=name))
    if backend in EXTRA:
        file, text = EXTRA[backend]
        (repo / file).write_text(text.format(name=name))
    venv.pip("install", "--no-build-isolation", "--no-deps", *options, "-e", str(repo), cwd=repo)
    return repo


PROBE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import {name}, {name}.runtime.jit as jit, {name}.runtime.added as added
from flagtree_spec import SpecError, spec, trunk_path
try:
    trunk = trunk_path("{name}.runtime")
except SpecError as exc:
    trunk = "SpecError: " + str(exc)
print(json.dumps({{"jit": jit.WHERE, "added": added.WHERE, "hook": spec("where"),
                  "warnings": [str(w.message) for w in caught], "trunk": trunk,
                  "init": {name}.__file__}}))
"""


def probe(venv: Venv, name: str, tmp_path: Path, **env: str) -> dict:
    out = venv.run(
        [venv.python, "-c", PROBE.format(name=name)],
        env={"FLAGTREE_BACKEND": "alpha", **env},
        cwd=tmp_path,
    )
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("backend", "options"),
    [
        pytest.param("setuptools", (), id="setuptools-lenient"),
        pytest.param(
            "setuptools", ("--config-settings", "editable_mode=strict"), id="setuptools-strict"
        ),
        pytest.param("hatchling", (), id="hatchling"),
    ],
)
def test_editable_install_through_path_is_specialised_like_the_source_tree(
    venv: Venv, tmp_path: Path, backend: str, options: tuple[str, ...]
) -> None:
    name = "edk_" + ("strict" if options else backend.replace("-", "_"))
    repo = install(venv, tmp_path, backend, name, *options)
    out = probe(venv, name, tmp_path)
    assert (out["jit"], out["added"], out["hook"], out["warnings"]) == (
        "alpha",
        "alpha added",
        "alpha",
        [],
    )
    if options:  # strict mode: imported from the link tree, found through the real path
        assert "__editable__" in out["init"]
        assert os.path.realpath(out["init"]) == str(repo / "python" / name / "__init__.py")
    assert os.path.isfile(os.path.join(out["trunk"], "jit.py"))
    disabled = probe(venv, name, tmp_path, FLAGTREE_SPEC_DISABLE=f"{name}.runtime.jit")
    assert disabled["jit"] == "trunk"


@pytest.mark.parametrize("backend", ["meson-python", "scikit-build-core"])
def test_editable_loader_that_ignores_path_is_reported_once_naming_it(
    venv: Venv, tmp_path: Path, backend: str
) -> None:
    name = "edk_" + backend.partition("-")[0]
    install(venv, tmp_path, backend, name)
    out = probe(venv, name, tmp_path)
    # The loader answers the trunk module itself; hooks and added modules still work.
    assert (out["jit"], out["added"], out["hook"]) == ("trunk", "alpha added", "alpha")
    [warning] = out["warnings"]
    assert f"package {name!r} is an editable install made by {backend}" in warning
    assert "Install " in warning and "setuptools or hatchling" in warning
    if backend == "meson-python":
        assert out["trunk"].startswith(f"SpecError: trunk_path('{name}.runtime'): ")
        assert "meson-python" in out["trunk"]
    else:
        assert os.path.isfile(os.path.join(out["trunk"], "jit.py"))
    disabled = probe(venv, name, tmp_path, FLAGTREE_SPEC_DISABLE=f"{name}.runtime.jit")
    assert disabled["jit"] == "trunk"


# --------------------------------------------------------------------------- the detection itself
# The installs above run in environments of their own; these run the detection in this
# process, on finders shaped as the two tools make them, with sys.meta_path restored.


def _finder_class(name: str, **attributes: object) -> object:
    return type(name, (), {"find_spec": staticmethod(lambda *a, **k: None), **attributes})()


@pytest.mark.parametrize(
    ("finder", "tool"),
    [
        (_finder_class("MesonpyMetaFinder", _top_level_modules={"edkpkg"}), "meson-python"),
        (
            _finder_class(
                "ScikitBuildRedirectingFinder",
                known_source_files={"edkpkg.sub.mod": "/src/edkpkg/sub/mod.py"},
                known_wheel_files={},
            ),
            "scikit-build-core",
        ),
    ],
)
def test_editable_loader_is_named_only_for_the_root_it_serves(finder: object, tool: str) -> None:
    from flagtree_spec import _editable

    saved, reported = list(sys.meta_path), dict(_editable._reported)
    sys.meta_path.insert(0, finder)  # type: ignore[arg-type]
    try:
        found = _editable.editable_loader("edkpkg")
        assert found is not None and found[0] == tool
        assert found[1].endswith(type(finder).__qualname__)
        assert _editable.editable_loader("otherpkg") is None
        assert _editable.editable_loader("edk") is None  # a prefix of the name is not the root
        with pytest.warns(SpecWarning, match=f"editable install made by {tool}") as caught:
            _editable.report("edkpkg")
            _editable.report("edkpkg")  # once per root
            _editable.report("otherpkg")  # not served by it: no warning
        assert len(caught) == 1, [str(w.message) for w in caught]
        assert "Install edkpkg without -e" in str(caught[0].message)
    finally:
        sys.meta_path[:] = saved
        _editable._reported.clear()
        _editable._reported.update(reported)
