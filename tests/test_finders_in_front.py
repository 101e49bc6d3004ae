"""Auto mode with another import hook in front of its finder.

typeguard's ``install_import_hook`` (and so ``pytest --typeguard-packages``)
and pytest's assertion rewriter put their own meta path finder first on
``sys.meta_path`` and answer the root's imports through ``PathFinder``, so
auto mode's finder never sees them.  The folders' own path-entry finders
still apply the overlay.  typeguard is installed for real (the ``test``
extra).  Package ``unmodpkg`` (fixtures/unmodified) never calls
``spec_path``; backend ``zeta`` overrides ``runtime/jit.py`` and adds
``added.py``.
"""

from __future__ import annotations

import json
import textwrap

from conftest import FIXTURES, scenario
from test_run import cli

SRC = FIXTURES / "unmodified"
BACKENDS = FIXTURES / "unmodified_backends"
ZETA = BACKENDS / "third_party" / "zeta" / "backend" / "spec" / "unmodpkg"
ENV = {"FLAGTREE_SOURCE_ROOT": str(BACKENDS), "FLAGTREE_BACKEND": "zeta"}

TYPEGUARD = """
import importlib.util, json, sys
import flagtree_spec
flagtree_spec.install("unmodpkg")
from typeguard import install_import_hook
install_import_hook(["unmodpkg"])
front = type(sys.meta_path[0]).__name__
import unmodpkg.runtime.jit as jit, unmodpkg.runtime.autotuner as at, unmodpkg.added as added
print(json.dumps({
    "front": front, "jit": jit.WHERE, "autotuner": at.WHERE, "added": added.WHERE,
    "loader": type(jit.__loader__).__name__,
    "root": list(sys.modules["unmodpkg"].__path__),
    "runtime": list(sys.modules["unmodpkg.runtime"].__path__),
    "packages": flagtree_spec.active("unmodpkg").packages,
    "probe": importlib.util.find_spec("unmodpkg.gone") is None,
}))
"""


def test_another_meta_path_finder_in_front_keeps_overrides_loading():
    out = scenario(TYPEGUARD, env=ENV, path=[SRC])
    assert out == {
        "front": "TypeguardFinder",
        "jit": "zeta",
        "autotuner": "zeta",
        "added": "zeta",
        "loader": "TypeguardLoader",  # typeguard still instruments the override
        "root": [str(ZETA), str(SRC / "unmodpkg")],
        "runtime": [str(ZETA / "runtime"), str(SRC / "unmodpkg" / "runtime")],
        "packages": ["unmodpkg", "unmodpkg.runtime"],
        "probe": True,
    }


EXCLUDED = """
import importlib.util, json, sys
import flagtree_spec
flagtree_spec.install("unmodpkg")
from typeguard import install_import_hook
install_import_hook(["unmodpkg"])
import unmodpkg.runtime.jit as jit
try:
    import unmodpkg.added
except ImportError as exc:
    added = type(exc).__name__
print(json.dumps([jit.WHERE, added, importlib.util.find_spec("unmodpkg.added")]))
"""


def test_another_meta_path_finder_in_front_keeps_exclusions():
    out = scenario(
        EXCLUDED,
        env={**ENV, "FLAGTREE_SPEC_DISABLE": "unmodpkg.runtime.jit,unmodpkg.added"},
        path=[SRC],
    )
    assert out == ["trunk", "ModuleNotFoundError", None]


def test_run_m_pytest_with_typeguard_and_assertion_rewriting_of_the_root_loads_overrides(tmp_path):
    (tmp_path / "conftest.py").write_text(
        'import pytest\npytest.register_assert_rewrite("unmodpkg")\n'
    )
    (tmp_path / "test_where.py").write_text(
        textwrap.dedent(
            """
            import json, sys


            def test_where():
                import unmodpkg.runtime.jit as jit, unmodpkg.added as added
                front = [type(f).__name__ for f in sys.meta_path[:2]]
                print(json.dumps([jit.WHERE, added.WHERE, type(jit.__loader__).__name__, front]))
                assert jit.WHERE == "zeta"
            """
        )
    )
    proc = cli(
        "run",
        "-b",
        "zeta",
        "--root",
        "unmodpkg",
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "--typeguard-packages=unmodpkg",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert "1 passed" in proc.stdout, proc.stdout
    out = [line for line in proc.stdout.splitlines() if line.startswith('["')]
    assert out, proc.stdout
    where, added, loader, front = json.loads(out[-1])
    assert (where, added) == ("zeta", "zeta")
    assert loader in ("TypeguardLoader", "AssertionRewritingHook")
    assert "AutoFinder" not in front, front
