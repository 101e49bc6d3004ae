"""Zipped trunks: a root package imported from a zip or egg archive (``PYTHONPATH=trunk.zip``).

Fixture: fixtures/zipped_trunk; each test zips its ``trunk/`` folder into a temporary
archive.  Rules: a path inside an archive has no build-time marker; spec roots on
disk still specialise a zipped trunk, in auto mode too; ``inherit()`` runs a zipped
lower version.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURES, run_python, scenario

TREE = FIXTURES / "zipped_trunk"
SPEC = TREE / "spec"


@pytest.fixture(params=["zip", "egg"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    target = tmp_path / f"trunk.{request.param}"
    with zipfile.ZipFile(target, "w") as zf:
        for folder, _, names in os.walk(TREE / "trunk"):
            for name in sorted(names):
                if name.endswith(".py"):
                    path = Path(folder, name)
                    zf.write(path, path.relative_to(TREE / "trunk").as_posix())
    return target


def test_zipped_trunk_has_no_marker_and_imports_with_no_backend(archive: Path) -> None:
    out = scenario(
        """
        import json, zpkg.mod
        from flagtree_spec import active
        state = active("zpkg")
        print(json.dumps([zpkg.mod.VALUE, state.backends, state.source, zpkg.__path__]))
        """,
        path=[archive],
    )
    assert out == ["trunk", [], "no backend set", [str(archive / "zpkg")]]


def test_zipped_trunk_with_a_backend_that_has_no_spec_root_here_imports(archive: Path) -> None:
    out = scenario(
        """
        import json, warnings
        warnings.simplefilter("ignore")
        import zpkg.mod
        print(json.dumps(zpkg.mod.VALUE))
        """,
        path=[archive],
        env={"FLAGTREE_BACKEND": "somewhere"},
    )
    assert out == "trunk"


def test_zipped_trunk_is_specialised_by_a_spec_root_and_inherit_runs_the_zipped_lower_version(
    archive: Path,
) -> None:
    out = scenario(
        """
        import json, zpkg.mod as m
        print(json.dumps([m.VALUE, m.who(), m.__inherits__, m.__spec__.origin, m.data_dir(),
                          m.__file__]))
        """,
        path=[archive],
        env={"FLAGTREE_SPEC_PATH": str(SPEC)},
    )
    lower = str(archive / "zpkg" / "mod.py")
    assert out == [
        "spec",
        "spec",
        lower,
        str(SPEC / "zpkg" / "mod.py"),
        str(archive / "zpkg"),
        lower,
    ]


def test_auto_mode_specialises_a_zipped_trunk(archive: Path) -> None:
    out = scenario(
        """
        import json
        from flagtree_spec import install
        install("zauto")
        import zauto.mod, zauto.sub.leaf
        print(json.dumps([zauto.mod.WHERE, zauto.sub.leaf.WHERE, zauto.__path__]))
        """,
        path=[archive],
        env={"FLAGTREE_SPEC_PATH": str(SPEC)},
    )
    assert out == ["spec", "spec", [str(SPEC / "zauto"), str(archive / "zauto")]]


def test_zipped_trunk_marker_file_inside_the_archive_is_not_read(tmp_path: Path) -> None:
    # A marker inside the archive cannot be read without running zipimport: it is none.
    target = tmp_path / "trunk.zip"
    with zipfile.ZipFile(target, "w") as zf:
        zf.write(TREE / "trunk" / "zpkg" / "__init__.py", "zpkg/__init__.py")
        zf.writestr("zpkg/FLAGTREE_BACKEND", "mthreads\n")
    run_python(
        "import zpkg, flagtree_spec; assert flagtree_spec.active('zpkg').backends == ()",
        path=[target],
    )
