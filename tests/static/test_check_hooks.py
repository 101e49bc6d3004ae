"""Hooks in ``check``: FTS009, FTS012, FTS013, FTS015 on hook packages shaped like real backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_check import CHECK, SPEC, VENDOR, findings, make, only, run, spec, trunk


def check_json(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> list[Any]:
    code, out, _ = run(
        capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json", *extra
    )
    found: list[Any] = json.loads(out)["findings"]
    assert code == (1 if any(f["severity"] == "error" for f in found) else 0), found
    return found


def codes(found: list[Any]) -> list[tuple[str, str, int]]:
    return [(f["code"], Path(f["path"]).name, f["line"]) for f in found]


def test_fts012_hook_call_arguments_the_hook_cannot_accept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts012_hook_signature")
    hook = spec("fts012_hook_signature", "sigpkg", "runtime", "jit.py")
    assert only(found, "FTS012") == [
        ("error", trunk("fts012_hook_signature", "sigpkg", "runtime", "jit.py"), 7, 5)
    ]
    message = next(f["message"] for f in found if f["code"] == "FTS012")
    assert message == (
        f"spec('launch_metadata', ...): the hook launch_metadata(kernel, grid) at {hook}:1 got an "
        "unexpected keyword argument 'stream'; change the call or the hook's parameters"
    )
    # A declared hook package without a mirror: its fragments are no overrides.
    assert [f["code"] for f in found] == ["FTS012"]
    assert code == 1


@pytest.mark.parametrize(
    ("caller", "judged"),
    [
        ("from flagtree_spec import spec\nspec('h', 1, 2)\n", True),
        ("from flagtree_spec import spec as call_hook\ncall_hook('h', 1, 2)\n", True),
        (
            "import flagtree_spec\nspec = flagtree_spec.for_root('hpkg').spec\nspec('h', 1, 2)\n",
            True,
        ),
        ("from flagtree_spec import for_root\nrun = for_root('hpkg').spec\nrun('h', 1, 2)\n", True),
        ("from .driver import spec\nspec('h', 1, 2)\n", True),
        ("from .driver import helper as spec\nspec('h', 1, 2)\n", False),
        ("import flagtree_spec\nflagtree_spec.spec('h', 1, 2)\n", False),
        ("from flagtree_spec import spec\nargs = (1, 2)\nspec('h', *args)\n", False),
        ("from flagtree_spec import spec\nspec('h', **{'a': 1})\n", False),
        ("from flagtree_spec import spec_func\nspec_func('h')\n", False),
        ("def spec(name, *args):\n    return None\nspec('h', 1, 2)\n", False),
    ],
    ids=[
        "imported",
        "alias",
        "for-root-attribute",
        "for-root-name",
        "trunk-forwarder",
        "trunk-other-function",
        "attribute-call",
        "star-args",
        "star-kwargs",
        "spec-func",
        "not-forwarding",
    ],
)
def test_fts012_judged_only_where_the_callee_certainly_dispatches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, caller: str, judged: bool
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            "python/hpkg/driver.py": (
                "from flagtree_spec import spec as _spec\n\n"
                "def spec(name, *args, **kwargs):\n    return _spec(name, *args, **kwargs)\n\n"
                "def helper(name, *args, **kwargs):\n    return _spec(name, *args, **kwargs)\n"
            ),
            "python/hpkg/mod.py": caller,
            VENDOR + "__init__.py": "def h(a):\n    pass\n",
        },
    )
    found = check_json(capsys, tmp_path, "--select", "FTS012")
    assert codes(found) == ([("FTS012", "mod.py", len(caller.splitlines()))] if judged else [])


@pytest.mark.parametrize(
    "hook",
    [
        "@staticmethod\ndef h(a):\n    pass\n",
        "class h:\n    def __init__(self, a):\n        pass\n",
        "import functools\nh = functools.partial(print)\n",
    ],
    ids=["decorated", "class", "not-a-function"],
)
def test_fts012_not_judged_for_hooks_that_are_no_plain_function(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, hook: str
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC
            + "from flagtree_spec import spec\nspec('h', 1, 2, 3)\n",
            VENDOR + "__init__.py": hook,
        },
    )
    assert check_json(capsys, tmp_path, "--select", "FTS012") == []


def test_fts012_lambda_hook_and_keyword_only_parameters(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC
            + "from flagtree_spec import spec\nspec('lam', 1)\nspec('kw', 1)\nspec('kw')\n"
            + "spec('kw', k=1)\n",
            VENDOR + "__init__.py": "lam = lambda: 0\n\ndef kw(*, k):\n    pass\n",
        },
    )
    found = check_json(capsys, tmp_path, "--select", "FTS012")
    assert codes(found) == [
        ("FTS012", "__init__.py", 4),
        ("FTS012", "__init__.py", 5),
        ("FTS012", "__init__.py", 6),
    ]
    assert "the hook <lambda>() at" in found[0]["message"]
    assert "takes 0 positional arguments but 1 were given" in found[1]["message"]
    assert "missing required keyword-only argument 'k'" in found[2]["message"]


def test_fts015_all_names_a_hook_never_bound_and_fragments_are_not_dead(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts015_all_unbound")
    hooks = spec("fts015_all_unbound", "allpkg", "__init__.py")
    assert only(found, "FTS015") == [("error", hooks, 4, 44)]
    utils = spec("fts015_all_unbound", "allpkg", "_utils.py")
    assert f"{utils}:5 defines it: import it into the hook module" in found[0]["message"]
    # The hook module is spec/allpkg/__init__.py (FlagTree's convention); its fragments
    # language/core.py and _utils.py load through it: no FTS001/FTS002; both trunk calls
    # find their hooks (through a star import with __all__, and through an alias).
    assert [f["code"] for f in found] == ["FTS015"]
    assert code == 1


def test_fts015_without_a_definition_elsewhere_says_define_or_drop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            VENDOR
            + "__init__.py": "from . import sub\n__all__ = ['gone', 'sub', 'fine']\nfine = 1\n",
            VENDOR + "sub.py": "",
        },
    )
    found = check_json(capsys, tmp_path, "--select", "FTS015")
    assert codes(found) == [("FTS015", "__init__.py", 2)]
    assert found[0]["message"].endswith("define or import it, or drop it from __all__")


def test_fts013_fragments_of_a_specialised_root_and_the_declaration_that_fixes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts013_fragments")
    hooks = spec("fts013_fragments", "fragpkg", "__init__.py")
    assert only(found, "FTS013") == [("error", hooks, 1, 1)]
    declaration = spec("fts013_fragments", "flagtree_spec.json")
    assert found[0]["message"].endswith(
        f"usually the case), declare it in {declaration}: "
        '{"mirror": null, "hooks": "fragpkg/__init__.py"}'
    )
    assert [f["code"] for f in found] == ["FTS013"]
    assert code == 1


def test_fts013_declared_fragment_tree_is_clean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = CHECK / "fts013_fragments"
    files = {
        str(p.relative_to(source)): p.read_text(encoding="utf-8") for p in source.rglob("*.py")
    }
    files[VENDOR + "flagtree_spec.json"] = '{"mirror": null, "hooks": "fragpkg/__init__.py"}'
    make(tmp_path, files)
    assert check_json(capsys, tmp_path) == []


def test_fts009_hooks_defined_through_fragments_are_defined(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC
            + "from flagtree_spec import spec\nspec('a')\nspec('b')\nspec('c')\nspec('d')\n",
            VENDOR + "__init__.py": (
                "from functools import wraps\nfrom ._frag import *\nfrom ._more import b as c\n"
                "d = None\n"
            ),
            VENDOR + "_frag.py": "def a():\n    pass\n\ndef unused():\n    pass\n",
            VENDOR + "_more.py": "def b():\n    pass\n",
        },
    )
    found = check_json(capsys, tmp_path, "--select", "FTS009")
    # 'b' is bound as 'c' only; 'd' is a literal, no hook; 'unused' is never called;
    # 'wraps' is merely imported, so it is no hook this backend defines.
    assert codes(found) == [
        ("FTS009", "__init__.py", 5),
        ("FTS009", "__init__.py", 7),
        ("FTS009", "_frag.py", 4),
    ]
    assert [f["severity"] for f in found] == ["info", "info", "warning"]


def test_fts009_no_finding_where_the_answer_is_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC + "from flagtree_spec import spec\nspec('anything')\n",
            VENDOR + "__init__.py": "def __getattr__(name):\n    raise AttributeError(name)\n",
        },
    )
    assert check_json(capsys, tmp_path, "--select", "FTS009") == []


def test_hook_package_that_fails_to_import_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC + "from flagtree_spec import spec\nspec('h')\n",
            VENDOR + "__init__.py": "from ._frag import h\nfrom ._bad import *\n",
            VENDOR + "_frag.py": "g = 1\n",
        },
    )
    found = check_json(capsys, tmp_path)
    assert codes(found) == [("FTS004", "__init__.py", 1)]
    assert "fails to import, so every spec() call raises SpecImportError" in found[0]["message"]
    make(tmp_path, {VENDOR + "_frag.py": "def h(:\n"})
    found = check_json(capsys, tmp_path)
    assert codes(found) == [("FTS010", "_frag.py", 1)]
    assert found[0]["message"].startswith("hook package module does not parse")
