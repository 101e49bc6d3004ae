"""The static model's rules (the path finder's, copied), each on a small tree built for it.

Trees are FlagTree-style repositories written to ``tmp_path``: the trunk is
``python/pkg`` and the backend ``vendor`` has its mirror tree in
``third_party/vendor/backend/spec/pkg``.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import make, run

from flagtree_spec._tools.model.facts import extract as _extract

SPEC = "from flagtree_spec import spec_path\nspec_path(__path__)\n"
T = "python/pkg/"
M = "third_party/vendor/backend/spec/pkg/"


def which(capsys: pytest.CaptureFixture[str], repo: Path, *names: str) -> dict[str, Any]:
    code, out, err = run(
        capsys, "which", *names, "--repo", str(repo), "-b", "vendor", "--format", "json"
    )
    assert code in (0, 1), err  # 1: a module named would not import
    return {a["module"]: (a["file"], a["candidates"]) for a in json.loads(out)}


def check(
    capsys: pytest.CaptureFixture[str], repo: Path, *extra: str
) -> tuple[int, list[tuple[str, str, int, int]], list[str]]:
    """Exit code, (code, path, line, col) of each finding, and their messages."""
    code, out, _ = run(
        capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json", *extra
    )
    found = json.loads(out)["findings"]
    return (
        code,
        [(f["code"], f["path"], f["line"], f["col"]) for f in found],
        [f["message"] for f in found],
    )


# --------------------------------------------------------------------------- path finder


def test_which_package_folder_beats_module_of_same_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "mod.py": "X = 1\n",
            M + "mod.py": "X = 2\n",
            M + "mod/__init__.py": "X = 3\n",
        },
    )
    package = str(tmp_path / M / "mod/__init__.py")
    assert which(capsys, tmp_path, "pkg.mod") == {
        "pkg.mod": (package, [str(tmp_path / T / "mod.py")])
    }
    code, found, messages = check(capsys, tmp_path, "--select", "FTS001")
    assert found == [("FTS001", str(tmp_path / M / "mod.py"), 1, 1)]
    assert f"pkg.mod loads {package} instead" in messages[0]
    assert code == 1


def test_which_extension_module_beats_py_beats_pyc_in_one_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "fast.py": "X = 1\n",
            T + f"fast{ext}": b"\x7fELF",
            T + "slow.py": "X = 1\n",
            T + "slow.pyc": b"\0\0\0\0",
            T + "old.pyc": b"\0\0\0\0",
            T + "old": "not a module: no suffix\n",
            M + "added.py": "",
        },
    )
    assert which(capsys, tmp_path, "pkg.fast", "pkg.slow", "pkg.old") == {
        "pkg.fast": (str(tmp_path / T / f"fast{ext}"), []),
        "pkg.slow": (str(tmp_path / T / "slow.py"), []),
        "pkg.old": (str(tmp_path / T / "old.pyc"), []),
    }


def test_mirror_folder_without_init_never_shadows_a_trunk_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {T + "__init__.py": SPEC, T + "util.py": "X = 1\n", M + "util/extra.py": "Y = 1\n"},
    )
    assert which(capsys, tmp_path, "pkg.util", "pkg.util.extra") == {
        "pkg.util": (str(tmp_path / T / "util.py"), []),
        "pkg.util.extra": (None, []),
    }
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS001", str(tmp_path / M / "util/extra.py"), 1, 1)]
    assert "pkg.util is a module" in messages[0]
    assert "a mirror folder without __init__.py never shadows a module" in messages[0]
    assert code == 1


def test_mirror_folder_without_init_is_a_namespace_portion_when_trunk_lacks_the_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(tmp_path, {T + "__init__.py": SPEC, M + "extra/kernel.py": "K = 1\n"})
    code, out, _ = run(capsys, "which", "pkg.extra", "--repo", str(tmp_path), "-b", "vendor")
    assert out == f"pkg.extra: namespace package, portions {tmp_path / M / 'extra'}\n"
    assert code == 0
    kernel = str(tmp_path / M / "extra/kernel.py")
    assert which(capsys, tmp_path, "pkg.extra.kernel") == {"pkg.extra.kernel": (kernel, [])}
    assert check(capsys, tmp_path)[1] == [("FTS008", kernel, 1, 1)]


def test_stray_pyc_and_extension_files_in_a_mirror_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = Path(__file__).resolve().parent.parent.parent / "fixtures/check/fts011_compiled"
    mirror = repo / "third_party/vendor/backend/spec/binpkg"
    trunk = repo / "python/binpkg"
    assert which(capsys, repo, "binpkg.fast", "binpkg.helper") == {
        "binpkg.fast": (str(mirror / "fast.so"), [str(trunk / "fast.py")]),
        "binpkg.helper": (str(mirror / "helper.pyc"), [str(trunk / "helper.py")]),
    }


def test_nested_package_below_an_unimportable_package_is_dead_override(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "plain/__init__.py": "",
            M + "plain/deeper/mod.py": "X = 1\n",
        },
    )
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS001", str(tmp_path / M / "plain/deeper/mod.py"), 1, 1)]
    assert "its package pkg.plain.deeper does not import" in messages[0]
    assert code == 1


# --------------------------------------------------------------------------- specialisation


@pytest.mark.parametrize(
    "handler",
    ["except ImportError:", "except:", "except (KeyError, ModuleNotFoundError):"],
)
def test_guarded_spec_path_idiom_specialises_the_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, handler: str
) -> None:
    init = f"try:\n    from flagtree_spec import spec_path\n{handler}\n    pass\nelse:\n"
    make(
        tmp_path,
        {
            T + "__init__.py": init + "    spec_path(__path__)\n",
            T + "mod.py": "X = 1\n",
            M + "mod.py": "X = 2\n",
        },
    )
    assert which(capsys, tmp_path, "pkg.mod")["pkg.mod"][0] == str(tmp_path / M / "mod.py")


def test_package_init_override_inheriting_a_spec_path_init_is_specialised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "sub/__init__.py": SPEC,
            T + "sub/a.py": "A = 1\n",
            T + "sub/b.py": "B = 1\n",
            M + "sub/__init__.py": "from flagtree_spec import inherit\ninherit(globals())\n",
            M + "sub/a.py": "A = 2\n",
        },
    )
    assert which(capsys, tmp_path, "pkg.sub.a", "pkg.sub.b") == {
        "pkg.sub.a": (str(tmp_path / M / "sub/a.py"), [str(tmp_path / T / "sub/a.py")]),
        "pkg.sub.b": (str(tmp_path / T / "sub/b.py"), []),
    }
    _, out, _ = run(capsys, "which", "pkg.sub", "--repo", str(tmp_path), "-b", "vendor")
    assert f"package, specialised; __path__: {tmp_path / M / 'sub'}, {tmp_path / T / 'sub'}" in out
    assert check(capsys, tmp_path)[:2] == (0, [])


def test_package_init_override_is_fine_when_every_trunk_module_is_overridden_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "sub/__init__.py": SPEC,
            T + "sub/a.py": "A = 1\n",
            T + "sub/README.txt": "not a module\n",
            T + "sub/__pycache__/a.cpython-311.pyc": "",
            M + "sub/__init__.py": "B = 2\n",
            M + "sub/a.py": "A = 2\n",
            M + "sub/__pycache__/a.cpython-311.pyc": "",  # bytecode cache: not FTS011
            M + "sub/my-data/x.py": "",  # not a package name
        },
    )
    code, found, _ = check(capsys, tmp_path, "--select", "FTS002,FTS011")
    assert (code, found) == (0, [])


def test_package_init_override_inheriting_an_init_without_spec_path_hides_trunk_modules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "sub/__init__.py": "",
            T + "sub/b.py": "B = 1\n",
            M + "sub/__init__.py": "from flagtree_spec import inherit\ninherit(globals())\n",
        },
    )
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS002", str(tmp_path / M / "sub/__init__.py"), 1, 1)]
    assert "trunk modules b cannot be imported" in messages[0]
    assert code == 1


def test_compiled_package_init_is_specialised_only_in_auto_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "sub/__init__.pyc": b"\0\0\0\0",
            T + "sub/a.py": "A = 1\n",
            M + "sub/a.py": "A = 2\n",
        },
    )
    trunk, mirror = str(tmp_path / T / "sub/a.py"), str(tmp_path / M / "sub/a.py")
    assert which(capsys, tmp_path, "pkg.sub.a")["pkg.sub.a"][0] == trunk
    assert check(capsys, tmp_path)[1] == [("FTS001", mirror, 1, 1)]
    code, out, _ = run(
        capsys, "which", "pkg.sub.a", "--repo", str(tmp_path), "-b", "vendor", "--auto"
    )
    assert out.split()[:2] == ["pkg.sub.a:", mirror]
    assert code == 0


def test_package_init_override_that_does_not_parse_is_fts010_not_an_input_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "sub/__init__.py": SPEC,
            M + "sub/__init__.py": "def broken(:\n",
        },
    )
    code, out, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert out.startswith(f"{tmp_path / M / 'sub/__init__.py'}:1:12: FTS010 does not parse")
    assert "input error" not in err
    assert code == 1


def test_excludes_of_every_spec_path_call_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": "from flagtree_spec import spec_path\n"
            "spec_path(__path__, exclude=['a'])\n"
            "spec_path(__path__, name='pkg', exclude=('b',))\n",
            M + "a.py": "",
            M + "b.py": "",
            M + "c.py": "",
        },
    )
    code, out, _ = run(capsys, "list", "--repo", str(tmp_path), "-b", "vendor", "--format", "json")
    assert {row["module"]: row["state"] for row in json.loads(out)} == {
        "pkg.a": "excluded",
        "pkg.b": "excluded",
        "pkg.c": "added",
    }
    assert code == 0


@pytest.mark.parametrize("exclude", ["NAMES", "['a', NAME]", "'a'"])
def test_spec_path_with_a_computed_exclude_still_specialises(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, exclude: str
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": f"from flagtree_spec import spec_path\n"
            f"spec_path(__path__, exclude={exclude})\n",
            M + "a.py": "",
        },
    )
    assert which(capsys, tmp_path, "pkg.a")["pkg.a"][0] == str(tmp_path / M / "a.py")


# --------------------------------------------------------------------------- PEP 263


def test_override_decoded_per_its_coding_declaration_is_fine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "text.py": "NAME = 'e'\n",
            M + "text.py": "# -*- coding: latin-1 -*-\nNAME = '\xe9'\n".encode("latin-1"),
        },
    )
    assert check(capsys, tmp_path)[:2] == (0, [])


def test_fts010_unknown_coding_declaration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "odd.py": "X = 1\n",
            M + "odd.py": "# -*- coding: no-such-codec -*-\nX = 1\n",
        },
    )
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS010", str(tmp_path / M / "odd.py"), 1, 1)]
    assert messages[0].startswith("bad source encoding: unknown encoding")
    assert code == 1


def test_fts010_null_byte_in_override(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    make(tmp_path, {T + "__init__.py": SPEC, T + "nul.py": "X = 1\n", M + "nul.py": b"X = 1\0\n"})
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS010", str(tmp_path / M / "nul.py"), 1, 1)]
    assert messages == ["does not parse: source code string cannot contain null bytes"]
    assert code == 1


# --------------------------------------------------------------------------- imports (FTS004)


@pytest.mark.parametrize(
    ("handler", "checked"),
    [
        ("except ImportError:", False),
        ("except:", False),
        ("except (KeyError, ModuleNotFoundError):", False),
        ("except builtins.ImportError:", False),
        ("except Exception:", False),
        ("except KeyError:", True),
        ("except (KeyError, ValueError):", True),
    ],
)
def test_fts004_skips_imports_in_a_try_that_catches_import_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, handler: str, checked: bool
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "core.py": "A = 1\n",
            M + "user.py": f"try:\n    from pkg.core import gone\n{handler}\n    gone = None\n",
        },
    )
    _, found, _ = check(capsys, tmp_path, "--select", "FTS004")
    assert found == ([("FTS004", str(tmp_path / M / "user.py"), 2, 5)] if checked else [])


def test_fts004_follows_imports_inside_functions_and_their_blocks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    user = (
        "def f():\n"  # 1
        "    global G\n"  # 2
        "    if True:\n"  # 3
        "        from pkg.core import in_if\n"  # 4
        "    try:\n"  # 5
        "        from pkg.core import guarded\n"  # 6
        "    except ImportError:\n"  # 7
        "        from pkg.core import in_handler\n"  # 8
        "    for _ in ():\n"  # 9
        "        pass\n"  # 10
        "    else:\n"  # 11
        "        from .core import in_else\n"  # 12
        "class C:\n"  # 13
        "    from ....too.far import beyond\n"  # 14: above the root package
        "    from . import core, missing\n"  # 15
    )
    make(tmp_path, {T + "__init__.py": SPEC, T + "core.py": "A = 1\n", M + "user.py": user})
    _, found, messages = check(capsys, tmp_path, "--select", "FTS004")
    path = str(tmp_path / M / "user.py")
    assert found == [
        ("FTS004", path, 4, 9),
        ("FTS004", path, 8, 9),
        ("FTS004", path, 12, 9),
        ("FTS004", path, 14, 5),
        ("FTS004", path, 15, 5),
    ]
    assert "beyond the root package" in messages[3]
    assert "'missing' from pkg," in messages[4]


def test_fts004_skips_imports_it_cannot_judge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    user = (
        "from pkg.ns import anything\n"  # a namespace package has no file
        "from pkg.lazy import anything\n"  # a module __getattr__ defines every name
        "from pkg.fast import anything\n"  # an extension module cannot be read
        "from pkg import sub\n"  # a submodule, not a name
        "from pkg.core import A\n"
        "from pkg.core import really_missing\n"
    )
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "core.py": "A = 1\n",
            T + "lazy.py": "def __getattr__(name):\n    return name\n",
            T + "ns/part.py": "",
            T + f"fast{ext}": b"\x7fELF",
            T + "sub/__init__.py": "",
            T + "trunk_user.py": "from pkg.core import trunk_missing\n",
            M + "user.py": user,
        },
    )
    _, found, _ = check(capsys, tmp_path, "--select", "FTS004")
    assert found == [("FTS004", str(tmp_path / M / "user.py"), 6, 1)]


# --------------------------------------------------------------------------- names (FTS005)


def _facts(source: str) -> Any:
    return _extract(ast.parse(source), source)


def test_public_names_are_top_level_bindings_not_imports_nor_private() -> None:
    facts = _facts(
        "import os.path\n"
        "from json import loads as load_json\n"
        "a, (b, *c) = 1, (2, 3)\n"
        "d: int = 1\n"
        "annotated_only: int\n"
        "e += 1\n"
        "global f\n"
        "for g in ():\n    pass\nelse:\n    h = 1\n"
        "while False:\n    i = 1\n"
        "with open('x') as (j, k):\n    pass\n"
        "try:\n    m = 1\nexcept Exception as n:\n    o = 1\nfinally:\n    p = 1\n"
        "async def q():\n    r = 1\n"
        "class S:\n    t = 1\n"
        "with lock:\n    pass\n"
        "obj.attr = table['key'] = 1\n"
        "_private = 1\n"
    )
    # g, a module-level loop variable, is bound but is no API (FTS005 skips it).
    assert facts.public() == ["S", *"abcdefhijkmnopq"]
    assert not facts.defines_all


def test_public_names_leave_out_loop_variables_and_names_bound_only_under_main() -> None:
    facts = _facts(
        "for item in range(3):\n    table = item\n"
        "def api():\n    pass\n"
        "if __name__ == '__main__':\n    main_only = 1\n    def cli():\n        pass\n"
        "elif 1:\n    other = 1\n"
    )
    assert facts.public() == ["api", "other", "table"]
    assert "item" in facts.defined and "main_only" not in facts.defined


def test_public_names_are_a_literal_all_when_given() -> None:
    assert _facts("__all__ = ['x', 'y']\nz = 1\n").public() == ["x", "y"]
    assert _facts("__all__: list = ('x',)\nz = 1\n").public() == ["x"]
    assert _facts("__all__ = names()\nz = 1\n").public() == ["z"]


def test_public_names_are_a_literal_all_extended_by_literal_lists() -> None:
    assert _facts("__all__ = ['x']\n__all__ += ['y']\nz = 1\n").public() == ["x", "y"]
    assert _facts("__all__ = ['x']\n__all__ += other.__all__\nz = 1\n").public() == ["z"]
    assert _facts("__all__ = f()\n__all__ += ['y']\nz = 1\n").public() == ["z"]


@pytest.mark.parametrize(
    ("source", "defines_all"),
    [
        ("from pkg.core import *\n", True),
        ("from flagtree_spec import inherit\ninherit(globals())\n", True),
        ("import flagtree_spec\nflagtree_spec.inherit(globals())\n", True),
        ("def __getattr__(name):\n    return name\n", True),
        ("bind_symbols(lib, sys.modules[__name__])\n", True),
        ("globals().update(table)\n", True),
        ("vars().update(table)\n", True),
        ("table.update(other)\n", False),
        ("make()()\n", False),
        ("x = inherit\n", False),
    ],
)
def test_inherit_star_import_getattr_and_globals_update_define_every_name(
    source: str, defines_all: bool
) -> None:
    assert _facts(source).defines_all is defines_all


def test_fts005_uses_the_shadowed_modules_all(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "api.py": "__all__ = ['run']\ndef run(): pass\ndef helper(): pass\n",
            M + "api.py": "def other(): pass\n",
        },
    )
    code, found, messages = check(capsys, tmp_path)
    assert found == [("FTS005", str(tmp_path / M / "api.py"), 1, 1)]
    assert "missing here: run (API drift)" in messages[0]
    assert code == 0


def test_fts005_is_silent_when_the_override_inherits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            T + "__init__.py": SPEC,
            T + "api.py": "def run(): pass\n",
            M + "api.py": "from flagtree_spec import inherit\ninherit(globals())\n",
        },
    )
    assert check(capsys, tmp_path)[:2] == (0, [])
