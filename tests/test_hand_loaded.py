"""Package inits loaded by hand keep their trunk folders.

``triton/language/extra/__init__.py`` loads its sub-packages itself:
``pkgutil.iter_modules(__path__)``, the finder's ``find_spec``,
``exec_module``, then ``sys.modules[name] = module``.  The fixtures
``hand_loaded_auto`` (a trunk that never calls ``spec_path``, specialised by
auto mode) and ``hand_loaded_spec_path`` (a trunk whose inits call
``spec_path`` through the package's own forwarding module, as FlagTree's do)
have that loader in ``hlpkg/language/extra``, and backend ``gamma`` overrides
``extra/cuda/__init__.py`` with ``inherit(globals())``.  ``cuda/utils.py`` is
a trunk module that the ``__init__`` never imports.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, scenario

MIRROR = "hlpkg/backends/gamma/spec/hlpkg/language/extra/cuda"
TRUNK = "hlpkg/language/extra/cuda"

PROBE = """
import importlib, json, sys
import flagtree_spec
if {auto}:
    flagtree_spec.install("hlpkg")
{load}
cuda = sys.modules["hlpkg.language.extra.cuda"]
def short(paths):
    return [p.split("site-packages/")[-1] for p in paths]
out = {{"where": cuda.WHERE, "path": short(cuda.__path__)}}
out["spec"] = short(cuda.__spec__.submodule_search_locations)
import hlpkg.language.extra.cuda.utils as utils
out["utils"] = utils.WHERE
out["trunk_path"] = short([flagtree_spec.trunk_path("hlpkg.language.extra.cuda")])
again = importlib.reload(cuda)
out["reloaded"] = [again.WHERE, short(again.__path__)]
import hlpkg.language.extra.cuda.libdevice as libdevice
out["libdevice"] = libdevice.WHERE
print(json.dumps(out))
"""

BY_HAND = "import hlpkg.language.extra  # its __init__ loads cuda by hand"
# The import system, before extra's __init__ could: cuda is imported first by name.
BY_IMPORT = "import importlib.util, sys\nimport hlpkg.language\nimport hlpkg.language.extra.cuda"


def expected() -> dict:
    return {
        "where": "gamma",
        "path": [MIRROR, TRUNK],
        "spec": [MIRROR, TRUNK],
        "utils": "trunk",
        "trunk_path": [TRUNK],
        "reloaded": ["gamma", [MIRROR, TRUNK]],
        "libdevice": "gamma",
    }


@pytest.mark.parametrize("load", [BY_HAND, "import hlpkg"], ids=["extra", "root"])
def test_package_init_override_that_inherits_keeps_trunk_folders_loaded_by_hand_in_auto_mode(
    load,
):
    out = scenario(
        PROBE.format(auto=True, load=load),
        path=[FIXTURES / "hand_loaded_auto" / "site-packages"],
        env={"FLAGTREE_BACKEND": "gamma"},
    )
    assert out == expected()


def test_package_init_override_that_inherits_keeps_trunk_folders_loaded_by_hand_with_spec_path():
    out = scenario(
        PROBE.format(auto=False, load=BY_HAND),
        path=[FIXTURES / "hand_loaded_spec_path" / "site-packages"],
        env={"FLAGTREE_BACKEND": "gamma"},
    )
    assert out == expected()


def test_package_init_override_keeps_trunk_folders_through_a_forwarding_function(tmp_path):
    # FlagTree's own forwarder is a function: spec_path() sees the forwarder's frame, and the
    # package loaded by hand is not in sys.modules yet; the package's frame is further up.
    site = tmp_path / "site-packages"
    shutil.copytree(FIXTURES / "hand_loaded_spec_path" / "site-packages", site)
    (site / "hlpkg" / "flagtree_spec.py").write_text(
        "import flagtree_spec as _lib\n"
        "from flagtree_spec import spec, spec_func  # noqa: F401\n\n\n"
        "def spec_path(path_list):\n"
        "    return _lib.spec_path(path_list)\n"
    )
    out = scenario(
        PROBE.format(auto=False, load=BY_HAND), path=[site], env={"FLAGTREE_BACKEND": "gamma"}
    )
    assert out == expected()


@pytest.mark.parametrize(
    ("fixture", "auto"), [("hand_loaded_auto", True), ("hand_loaded_spec_path", False)]
)
def test_package_init_override_that_inherits_keeps_trunk_folders_through_the_import_system(
    fixture, auto
):
    # extra's own loader then finds cuda in sys.modules' way too; whichever loads it, the
    # module in sys.modules has both folders.
    out = scenario(
        PROBE.format(auto=auto, load=BY_IMPORT),
        path=[FIXTURES / fixture / "site-packages"],
        env={"FLAGTREE_BACKEND": "gamma"},
    )
    assert out == expected()


@pytest.mark.parametrize(
    ("fixture", "auto"), [("hand_loaded_auto", True), ("hand_loaded_spec_path", False)]
)
def test_package_loaded_by_hand_with_no_backend_is_the_trunk(fixture, auto):
    out = scenario(
        PROBE.format(auto=auto, load=BY_HAND), path=[FIXTURES / fixture / "site-packages"]
    )
    assert out["where"] == "trunk" and out["path"] == [TRUNK] and out["utils"] == "trunk"
    assert out["libdevice"] == "trunk"


SUBMODULE_ONLY = """
import json, sys
import flagtree_spec
if {auto}:
    flagtree_spec.install("hlpkg")
import hlpkg.language.extra
cuda = sys.modules["hlpkg.language.extra.cuda"]
print(json.dumps({{
    "libdevice": sys.modules["hlpkg.language.extra.cuda.libdevice"].WHERE,
    "path": [p.split("site-packages/")[-1] for p in cuda.__path__],
    "listed": "hlpkg.language.extra.cuda" in flagtree_spec.active("hlpkg").packages,
}}))
"""


@pytest.mark.parametrize(
    ("fixture", "auto"), [("hand_loaded_auto", True), ("hand_loaded_spec_path", False)]
)
def test_package_loaded_by_hand_gets_the_mirror_that_holds_only_a_submodule(fixture, auto):
    # Backend delta has extra/cuda/libdevice.py and no cuda/__init__.py: extra's own loader
    # (pkgutil, the folder's finder, exec_module) must still give cuda the mirror folder.
    out = scenario(
        SUBMODULE_ONLY.format(auto=auto),
        path=[FIXTURES / fixture / "site-packages"],
        env={"FLAGTREE_BACKEND": "delta"},
    )
    assert out == {
        "libdevice": "delta",
        "path": ["hlpkg/backends/delta/spec/hlpkg/language/extra/cuda", TRUNK],
        "listed": True,
    }
