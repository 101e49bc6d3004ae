"""Exact isolation: ``with activate()`` and ``install``/``uninstall`` undo themselves.

What is compared, by identity and by equality: ``sys.meta_path``,
``sys.path_hooks``, ``sys.path_importer_cache``, the library's own state
(``_activate._snapshot()``) and the ``__path__`` of every package touched.
Modules imported in between stay in ``sys.modules``.  Each
scenario runs in a fresh interpreter.

One thing is not undone, by design: ``flagtree_spec._hooks.HookFinder``
joins the end of ``sys.meta_path`` when the first private hook module is
imported, and stays.  The scenarios below import ``flagtree_spec._hooks``
before their first snapshot, so it is in both;
``test_hook_finder_stays_on_meta_path_after_activate_ends`` states the rest.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES, SOURCE, SOURCE_PY, scenario

TRUNK = SOURCE_PY / "fixpkg"
ALPHA = SOURCE / "third_party" / "alpha" / "backend" / "spec" / "fixpkg"

SNAPSHOT = """
import json, sys, importlib
import flagtree_spec._hooks  # its finder joins sys.meta_path when first imported, and stays
from flagtree_spec import _activate, _calls

def snapshot(packages):
    return {
        "objects": [sys.meta_path, sys.path_hooks, sys.path_importer_cache]
                   + [p.__path__ for p in packages],
        "values": [list(sys.meta_path), list(sys.path_hooks), dict(sys.path_importer_cache)]
                  + [list(p.__path__) for p in packages],
        "library": _activate._snapshot(),
        "dispatch": _calls.dispatch(),
    }

def compare(a, b):
    return {
        "same objects": all(x is y for x, y in zip(a["objects"], b["objects"])),
        "equal values": a["values"] == b["values"],
        "library": a["library"] == b["library"],
        "dispatch": a["dispatch"][0] is b["dispatch"][0] and a["dispatch"][1] == b["dispatch"][1],
    }

SAME = {"same objects": True, "equal values": True, "library": True, "dispatch": True}
"""


@pytest.mark.parametrize("body_raises", [False, True])
def test_activate_context_manager_restores_import_and_library_state_exactly(body_raises):
    out = scenario(
        SNAPSHOT
        + f"""
import fixpkg, fixpkg.runtime as r, fixpkg.language as lang
from flagtree_spec import activate, spec
spec("init_language")
packages = [fixpkg, r, lang]
before = snapshot(packages)
try:
    with activate("excl"):  # a backend with exclusions: the library's finder joins meta_path
        import fixpkg.runtime.autotuner as at
        inside = [list(r.__path__), spec("init_language"), at.WHERE]
        if {body_raises}:
            raise KeyError("the body raised")
except KeyError:
    pass
after = snapshot(packages)
print(json.dumps([inside, compare(before, after) == SAME, compare(before, after),
                  "fixpkg.runtime.autotuner" in sys.modules, spec("init_language")]))
""",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    excl = SOURCE / "third_party" / "excl" / "backend" / "spec" / "fixpkg"
    assert out[0] == [[str(excl / "runtime"), str(TRUNK / "runtime")], None, "excl"]
    assert out[1:] == [True, out[2], True, "alpha"], out[2]


def test_packages_first_imported_inside_activate_get_the_restored_state_path():
    out = scenario(
        SNAPSHOT
        + """
import fixpkg.runtime as r
from flagtree_spec import activate
with activate("beta"):
    import fixpkg.compiler as c  # beta overrides its __init__ and mirrors it
    inside = list(c.__path__)
after = list(c.__path__)
activate("beta")  # the package is still managed: a later switch rewrites it
print(json.dumps([inside, after, c.WHERE, list(c.__path__)]))
""",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    beta = SOURCE / "third_party" / "beta" / "backend" / "spec" / "fixpkg" / "compiler"
    trunk = str(TRUNK / "compiler")
    assert out == [[str(beta), trunk], [trunk], "beta", [str(beta), trunk]]


def test_nested_activate_context_managers_restore_each_level():
    out = scenario(
        SNAPSHOT
        + """
import fixpkg.runtime as r
from flagtree_spec import activate
levels = []
outer_before = snapshot([r])
with activate("beta"):
    middle = snapshot([r])
    with activate(spec_roots=[]):
        levels.append(list(r.__path__))
    levels.append(compare(middle, snapshot([r])) == SAME)
levels.append(compare(outer_before, snapshot([r])) == SAME)
print(json.dumps(levels))
""",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out == [[str(TRUNK / "runtime")], True, True]


def test_hook_finder_stays_on_meta_path_after_activate_ends():
    out = scenario(
        """
        import json, sys
        import fixpkg.runtime
        from flagtree_spec import activate, spec
        first = "flagtree_spec._hooks" in sys.modules
        before = list(sys.meta_path)
        with activate("alpha"):
            spec("add_one", 1)  # imports alpha's hook module as flagtree_spec._hooks.alpha_...
            from flagtree_spec._hooks import HookFinder
            hook_modules = [n for n in sys.modules if n.startswith("flagtree_spec._hooks.")]
            inside = HookFinder.find_spec(hook_modules[0]) is not None
        after = list(sys.meta_path)
        print(json.dumps({
            "imported before": first,
            "added": [f"{f.__module__}.{f.__qualname__}" for f in after if f not in before],
            "rest unchanged": after[:-1] == before,
            "last": after[-1] is HookFinder,
            "answers": [HookFinder.find_spec(n) is None for n in ("json", "fixpkg.runtime.jit")],
            "finds its module": [inside, HookFinder.find_spec(hook_modules[0]) is not None],
        }))
        """,
        env={"FLAGTREE_BACKEND": "none"},
    )
    assert out == {
        "imported before": False,
        "added": ["flagtree_spec._hooks.HookFinder"],
        "rest unchanged": True,
        "last": True,
        "answers": [True, True],
        # It finds the hook module while a state names it, not after the block.
        "finds its module": [True, False],
    }


UNMOD = FIXTURES / "unmodified"
ZETA = FIXTURES / "unmodified_backends" / "third_party" / "zeta" / "backend" / "spec" / "unmodpkg"
AUTO_ENV = {
    "FLAGTREE_SOURCE_ROOT": str(FIXTURES / "unmodified_backends"),
    "FLAGTREE_BACKEND": "zeta",
}


def test_install_then_uninstall_restores_meta_path_hooks_cache_and_touched_paths():
    out = scenario(
        SNAPSHOT
        + """
import unmodpkg, unmodpkg.runtime as r
from flagtree_spec import install, uninstall, _path
records = _path.packages()
before = snapshot([unmodpkg, r])
install("unmodpkg")
import unmodpkg.runtime.jit as jit  # loaded from the mirror while installed
inside = [list(r.__path__), jit.WHERE]
uninstall("unmodpkg")
after = snapshot([unmodpkg, r])
result = compare(before, after)
# The library's state: no package records left behind.  The root's resolved state stays
# cached (and so does what spec() consults): resolving it again would give the same.
result["library"] = _path.packages() == records
del result["dispatch"]
# uninstall() calls importlib.invalidate_caches(), which drops the path finder's negative
# entries; every finder that was cached stays cached, the very same object.
cache_before, cache_after = before["values"][2], after["values"][2]
result["equal values"] = before["values"][:2] + before["values"][3:] == (
    after["values"][:2] + after["values"][3:]
) and all(cache_after.get(k) is v for k, v in cache_before.items() if v is not None)
print(json.dumps([inside, result, "unmodpkg.runtime.jit" in sys.modules]))
""",
        env=AUTO_ENV,
        path=[UNMOD],
    )
    assert out[0] == [[str(ZETA / "runtime"), str(UNMOD / "unmodpkg" / "runtime")], "zeta"]
    assert out[1] == {"same objects": True, "equal values": True, "library": True}
    assert out[2] is True
