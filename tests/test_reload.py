"""Reload and re-import: the second time gives what the first time gave.

``importlib.reload`` of a specialised package and of an override, and
deleting a package with its submodules from ``sys.modules`` before importing
it again.  Backend stack ``beta,alpha`` on fixtures/source_repo: ``beta``
overrides ``runtime/jit.py``, ``runtime/autotuner.py`` and the package
``__init__`` of ``compiler``; ``alpha`` overrides ``tools/disasm.py`` (a
namespace sub-package) and adds ``language/extra.py``.  Each scenario runs
in a fresh interpreter.
"""

from __future__ import annotations

import pytest
from conftest import scenario

OBSERVE = """
import json, sys, importlib
from flagtree_spec import spec, active

NAMES = ["fixpkg", "fixpkg.runtime", "fixpkg.compiler", "fixpkg.runtime.jit",
         "fixpkg.runtime.autotuner", "fixpkg.runtime.driver", "fixpkg.language",
         "fixpkg.language.extra", "fixpkg.tools", "fixpkg.tools.disasm"]

def observe():
    for name in NAMES:
        importlib.import_module(name)
    return {
        name: [getattr(m, "WHERE", None), getattr(m, "__file__", None),
               list(m.__path__) if hasattr(m, "__path__") else None,
               list(m.__spec__.submodule_search_locations or [])
               if hasattr(m, "__path__") else None]
        for name, m in ((n, sys.modules[n]) for n in NAMES)
    } | {"hooks": [spec("init_language"), spec("only_beta"), spec("add_one", 1)],
         "specialised": list(active("fixpkg").packages)}

first = observe()
"""


@pytest.mark.parametrize(
    "again",
    [
        "importlib.reload(sys.modules['fixpkg.runtime'])",
        "importlib.reload(sys.modules['fixpkg.compiler'])",  # a package-init override
        "importlib.reload(sys.modules['fixpkg'])",
        "importlib.reload(sys.modules['fixpkg.runtime.jit'])",  # an override
        "importlib.reload(sys.modules['fixpkg.runtime.autotuner'])",
        "[sys.modules.pop(n) for n in list(sys.modules) if n.partition('.')[0] == 'fixpkg']",
        "[sys.modules.pop(n) for n in list(sys.modules) if n.startswith('fixpkg.runtime')]",
        "[sys.modules.pop(n) for n in list(sys.modules) if n.startswith('fixpkg.compiler')]",
        "[sys.modules.pop(n) for n in list(sys.modules) if n.startswith('fixpkg.tools')]",
        "importlib.reload(sys.modules['fixpkg.language'])",
    ],
)
def test_reload_or_reimport_gives_the_same_result_as_the_first_import(again):
    out = scenario(
        OBSERVE + again + "\nprint(json.dumps([first, observe()]))",
        env={"FLAGTREE_BACKEND": "beta,alpha"},
    )
    first, second = out
    assert first["fixpkg.runtime.jit"][0] == "beta"
    assert first["fixpkg.tools.disasm"][0] == "alpha"  # through a namespace sub-package
    assert first["fixpkg.language.extra"][0] == "alpha"  # added by the backend
    assert first["fixpkg.runtime.autotuner"][0] == "beta"
    assert first["fixpkg.compiler"][0] == "beta"
    assert first["hooks"] == ["beta", "beta", 2]
    assert second == first


def test_reload_of_a_package_under_auto_mode_gives_the_same_path():
    from conftest import FIXTURES

    src = FIXTURES / "unmodified"
    out = scenario(
        """
        import json, sys, importlib, flagtree_spec
        flagtree_spec.install("unmodpkg")
        import unmodpkg.runtime as r, unmodpkg.runtime.jit as jit
        first = [list(r.__path__), jit.WHERE]
        importlib.reload(r)
        for n in [n for n in sys.modules if n.startswith("unmodpkg.runtime.")]:
            del sys.modules[n]
        import unmodpkg.runtime.jit as jit
        print(json.dumps([first, [list(r.__path__), jit.WHERE]]))
        """,
        env={
            "FLAGTREE_SOURCE_ROOT": str(FIXTURES / "unmodified_backends"),
            "FLAGTREE_BACKEND": "zeta",
        },
        path=[src],
    )
    assert out[0] == out[1]
    assert out[0][1] == "zeta"
