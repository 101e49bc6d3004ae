"""Hook names bound as the import system binds them: one construct per test."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional

import pytest

from flagtree_spec._tools.model.finder import Folder
from flagtree_spec._tools.model.hooks import (
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


def test_hook_assignment_forms(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": (
                "def f(): pass\n"
                "neg = -1\n"
                "text = 'a' + 'b'\n"
                "a, b = f, 2\n"
                "c, d = make()\n"
                "first, *rest = [f, f]\n"
                "e: object = f\n"
                "g = (h := f)\n"
                "p = print\n"
                "n = 1\nn += 1\n"
                "m = f\nm += 1\n"
                "with open(__file__) as handle:\n    pass\n"
                "def make():\n    return f, f\n"
            )
        },
    )
    assert module.answer("neg")[0] == NOT_DEFINED
    assert module.answer("text")[0] == NOT_DEFINED
    assert state(module, "a") == (DEFINED, ("__init__.py", 1))
    assert module.answer("b")[0] == NOT_DEFINED
    assert module.answer("c")[0] == DEFINED  # a value: presumably callable
    assert module.answer("rest")[0] == NOT_DEFINED  # a starred target is a list
    assert state(module, "e") == (DEFINED, ("__init__.py", 1))
    assert state(module, "g") == (DEFINED, ("__init__.py", 1))
    assert module.answer("p")[0] == DEFINED  # a builtin
    assert module.answer("n")[0] == NOT_DEFINED
    assert module.answer("m")[0] == DEFINED
    assert module.answer("handle")[0] == DEFINED


@pytest.mark.parametrize(
    "text",
    [
        "globals()['hook'] = print\n",
        "bind_symbols(other, None)\n",
        "for hook in [print]:\n    pass\n",
        "while False:\n    hook = print\n",
        "try:\n    pass\nfinally:\n    del missing_name_is_fine_here\n",
    ],
    ids=["globals-subscript", "bind-symbols", "for", "while", "finally"],
)
def test_hook_more_unknown_constructs(tmp_path: Path, text: str) -> None:
    module = hooks(tmp_path, {"__init__.py": "other = None\n" + text})
    if "finally" in text:
        assert module.broken is not None  # finally always runs: the del is a NameError
    else:
        assert module.answer("hook")[0] == UNKNOWN


def test_hook_conditional_delete_is_unknown(tmp_path: Path) -> None:
    module = hooks(tmp_path, {"__init__.py": "X = 1\ndef hook(): pass\nif X:\n    del hook\n"})
    assert module.answer("hook")[0] == UNKNOWN


def test_hook_name_read_after_globals_update_is_uncertain(tmp_path: Path) -> None:
    module = hooks(tmp_path, {"__init__.py": "globals().update({})\nhook = maybe\n"})
    assert module.broken is None and module.uncertain
    assert first_hook([module], "anything")[0] == UNKNOWN


def test_hook_all_forms_that_are_not_literal(tmp_path: Path) -> None:
    for text in (
        "__all__ = names()\n",
        "__all__ = []\n__all__ += names()\n",
        "__all__ = []\n__all__.append(name)\n",
        "__all__ = []\n__all__.remove('x')\n",
        "__all__ = []\nif X:\n    __all__ += ['y']\n",
    ):
        module = hooks(tmp_path, {"__init__.py": "X = 1\nnames = name = print\n" + text})
        assert module.all_entries() is None, text
        assert list(module.declared()) == [], text


def test_hook_star_import_of_a_module_with_an_unknown_all(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {"__init__.py": "from ._f import *\n", "_f.py": "__all__ = list('ab')\na = b = print\n"},
    )
    assert module.answer("a")[0] == UNKNOWN


def test_hook_compiled_fragment_makes_its_names_unknown(tmp_path: Path) -> None:
    (tmp_path / "_fast.pyc").write_bytes(b"")
    module = hooks(tmp_path, {"__init__.py": "from ._fast import *\nfrom ._fast import hook\n"})
    assert module.uncertain and module.answer("hook")[0] == UNKNOWN
    assert [Path(m.path or "").name for m in module.files()] == ["__init__.py", "_fast.pyc"]


def test_hook_imports_outside_the_hook_package(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": "from ... import far\nfrom pkg.other import near\n",
        },
    )
    assert module.answer("far")[0] == DEFINED  # beyond the hook package: an import
    assert module.answer("near")[0] == DEFINED
    # A hook module that is a plain file has no package: its relative imports leave it.
    plain = tmp_path / "hooks.py"
    plain.write_text("from . import sibling\n", encoding="utf-8")
    module = HookModule(str(plain), False, None, tree_of, Folder)
    assert module.answer("sibling")[0] == DEFINED
    plain.write_text("from .x import *\n", encoding="utf-8")
    module = HookModule(str(plain), False, None, tree_of, Folder)
    assert module.answer("other")[0] == UNKNOWN


def test_hook_from_a_package_with_getattr(tmp_path: Path) -> None:
    module = hooks(
        tmp_path,
        {
            "__init__.py": "from .lazy import hook\n",
            "lazy/__init__.py": "def __getattr__(name):\n    return print\n",
        },
    )
    assert module.uncertain and module.answer("hook")[0] == UNKNOWN
