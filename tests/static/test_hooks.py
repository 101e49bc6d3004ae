"""Hook names bound as the import system binds them: one construct per test."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional

import pytest

from flagtree_spec._static.finder import Folder
from flagtree_spec._static.hooks import (
    DEFINED,
    NOT_DEFINED,
    UNKNOWN,
    HookModule,
    first_hook,
)


def tree_of(path: str) -> Optional[ast.Module]:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None


def hooks(tmp_path: Path, files: dict[str, str], hook_name: Optional[str] = None) -> HookModule:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    init = tmp_path / "__init__.py"
    return HookModule(str(init), True, hook_name, tree_of, Folder)


def state(module: HookModule, name: str) -> tuple[str, Optional[tuple[str, int]]]:
    found, binding = module.answer(name)
    if found != DEFINED:
        return found, None
    assert binding is not None
    return found, (Path(binding.path).name, binding.line)


def test_hook_star_import_with_all_binds_only_all(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": "from .runtime.jit import *\n",
            "runtime/jit.py": (
                "__all__ = ['hook']\n\ndef hook():\n    pass\n\ndef other():\n    pass\n"
            ),
        },
    )
    assert state(module, "hook") == (DEFINED, ("jit.py", 3))
    assert state(module, "other") == (NOT_DEFINED, None)
    # Importing runtime.jit bound the sub-package 'runtime' on the hook package: a module.
    assert state(module, "runtime") == (NOT_DEFINED, None)


def test_hook_star_import_without_all_binds_public_names_and_imports(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": "from ._frag import *\n",
            "_frag.py": (
                "from functools import wraps\nfrom ._more import *\n"
                "def hook():\n    pass\ndef _private():\n    pass\n"
            ),
            "_more.py": "def deeper():\n    pass\n",
        },
    )
    assert state(module, "hook") == (DEFINED, ("_frag.py", 3))
    assert state(module, "deeper") == (DEFINED, ("_more.py", 1))
    assert state(module, "wraps")[0] == DEFINED  # imported, presumably callable
    assert state(module, "_private") == (NOT_DEFINED, None)
    # Declared hooks: public functions defined inside the hook package, not imports.
    assert sorted(name for name, _ in module.declared()) == ["deeper", "hook"]


def test_hook_alias_and_last_binding_wins(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": (
                "from ._utils import apply as apply_with_path\n"
                "def twice():\n    pass\n"
                "twice = None\n"
                "def gone():\n    pass\n"
                "del gone\n"
                "same = apply_with_path\n"
                "anon = lambda x: x\n"
            ),
            "_utils.py": "def apply(x):\n    return x\n",
        },
    )
    assert state(module, "apply_with_path") == (DEFINED, ("_utils.py", 1))
    assert state(module, "same") == (DEFINED, ("_utils.py", 1))
    assert state(module, "apply") == (NOT_DEFINED, None)
    assert state(module, "twice") == (NOT_DEFINED, None)  # a literal is no hook
    assert state(module, "gone") == (NOT_DEFINED, None)
    assert state(module, "anon") == (DEFINED, ("__init__.py", 9))
    assert state(module, "_utils") == (NOT_DEFINED, None)  # the submodule, bound on import


def test_hook_submodule_binding_replaces_an_earlier_definition(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": "def jit():\n    pass\nfrom .jit import helper\n",
            "jit.py": "def helper():\n    pass\n",
        },
    )
    assert state(module, "jit") == (NOT_DEFINED, None)
    assert state(module, "helper") == (DEFINED, ("jit.py", 1))


@pytest.mark.parametrize(
    "text",
    [
        "def __getattr__(name):\n    raise AttributeError(name)\n",
        "globals().update({'hook': print})\n",
        "from os.path import *\n",
        "try:\n    from ._x import hook\nexcept ImportError:\n    pass\n",
        "if FLAG:\n    def hook():\n        pass\nFLAG = 1\n",
    ],
    ids=["getattr", "globals-update", "star-outside", "try", "if"],
)
def test_hook_unknown_constructs(tmp_path: Path, text: str) -> None:
    module = hooks(tmp_path, {"__init__.py": "FLAG = 1\n" + text, "_x.py": "def hook(): pass\n"})
    assert module.answer("hook")[0] == UNKNOWN


def test_hook_unconditional_binding_after_unknown_is_defined(tmp_path: Path) -> None:
    module = hooks(
        tmp_path, {"__init__.py": "globals().update({})\ndef hook():\n    pass\nx = 1\n"}
    )
    assert state(module, "hook") == (DEFINED, ("__init__.py", 2))
    assert state(module, "x") == (NOT_DEFINED, None)
    assert module.answer("other")[0] == UNKNOWN


def test_hook_type_checking_block_never_runs(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {"__init__.py": "if TYPE_CHECKING:\n    def hook(): pass\nelse:\n    def other(): pass\n"},
    )
    assert module.answer("hook")[0] == NOT_DEFINED
    assert module.answer("other")[0] == DEFINED


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"__init__.py": "from ._frag import hook\n", "_frag.py": "x = 1\n"}, "does not bind"),
        ({"__init__.py": "from ._missing import hook\n"}, "no module ._missing"),
        ({"__init__.py": "hook = nowhere\n"}, "'nowhere' is not defined"),
        ({"__init__.py": "from ._bad import *\n", "_bad.py": "def (:\n"}, "cannot be read"),
        (
            {"__init__.py": "from ._frag import *\n", "_frag.py": "__all__ = ['gone']\n"},
            "does not bind 'gone'",
        ),
    ],
    ids=["missing-name", "missing-module", "name-error", "syntax", "all-names-missing"],
)
def test_hook_module_that_cannot_import_is_broken(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    module = hooks(tmp_path, files)
    assert module.broken is not None and message in module.broken[3]
    assert module.answer("hook")[0] == UNKNOWN
    assert first_hook([module], "hook")[0] == UNKNOWN


def test_hook_nested_packages_namespace_and_absolute_self_import(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": (
                "from .lang import *\nfrom pkg.backends.x.spec.ns.mod import deep as absolute\n"
            ),
            "lang/__init__.py": "from .core import *\nfrom . import extra\n",
            "lang/core.py": "def core_hook():\n    pass\n",
            "lang/extra.py": "",
            "ns/mod.py": "def deep():\n    pass\n",
        },
        hook_name="pkg.backends.x.spec",
    )
    assert state(module, "core_hook") == (DEFINED, ("core.py", 1))
    assert state(module, "core") == (NOT_DEFINED, None)  # lang.core: a module, star-exported
    assert state(module, "absolute") == (DEFINED, ("mod.py", 1))
    assert [Path(m.path or "").name for m in module.files()] == [
        "__init__.py",
        "__init__.py",
        "core.py",
        "extra.py",
        "mod.py",
    ]


def test_hook_all_extended_and_declared(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": (
                "__all__ = ['a']\n__all__ += ['b']\n__all__.append('c')\n__all__.extend(['d'])\n"
                "def a(): pass\ndef b(): pass\nc = None\n"
            )
        },
    )
    assert module.all_entries() == [
        ("a", 1, 12),
        ("b", 2, 13),
        ("c", 3, 16),
        ("d", 4, 17),
    ]
    assert [name for name, _ in module.declared()] == ["a", "b", "c"]


def test_first_hook_takes_the_first_backend_that_defines_it(tmp_path: Path) -> None:
    high = hooks(tmp_path / "high", {"__init__.py": "def shared(): pass\nunique = 1\n"})
    low = hooks(tmp_path / "low", {"__init__.py": "def shared(): pass\ndef unique(): pass\n"})
    found, binding, owner = first_hook([high, low], "shared")
    assert found == DEFINED and owner is high and binding is not None
    found, binding, owner = first_hook([high, low], "unique")
    assert found == DEFINED and owner is low
    assert first_hook([high, low], "none")[0] == NOT_DEFINED
