"""The probe that ``migrate --verify`` runs in each fresh interpreter: what "the same
code" means for each kind of value, and its report of a tree.

The probe is run in this process here (its digests are pure functions of the
values; ``main`` imports a small tree and the import state is restored
exactly afterwards); ``test_migrate_verify.py`` runs it as ``--verify`` does,
in fresh interpreters.
"""

from __future__ import annotations

import functools
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flagtree_spec._tools.migrate import probe


def namespace(source: str, name: str = "m") -> dict[str, Any]:
    """The namespace of *source* run as a fresh module (a code object of its own)."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module.__dict__


def test_functions_with_the_same_code_digest_equal_whatever_their_file_and_line() -> None:
    a = namespace("def f(x):\n    return x + 1\n", "a")["f"]
    b = namespace("\n\n\ndef f(x):\n    return x + 1\n", "b")["f"]
    changed = namespace("def f(x):\n    return x + 2\n", "c")["f"]
    assert probe.digest(a) == probe.digest(b)
    assert probe.digest(a) != probe.digest(changed)
    assert probe.digest(a).startswith("def f ")


def test_nested_code_and_set_constants_digest_by_content_not_by_hash_order() -> None:
    source = (
        "def f(x):\n    def g():\n        return x in {'a', 'b', 'c'}\n    return (g, (1, 2))\n"
    )
    again = namespace(source, "again")["f"]
    assert probe.digest(namespace(source)["f"]) == probe.digest(again)
    other = namespace(source.replace("'c'", "'d'"))["f"]
    assert probe.digest(again) != probe.digest(other)


def test_a_decorated_function_digests_as_the_function_it_wraps() -> None:
    def plain(x: int) -> int:
        return x

    @functools.wraps(plain)
    def wrapper(*args: Any) -> Any:
        return plain(*args)

    assert probe.digest(wrapper) == probe.digest(plain)
    assert probe.digest(wrapper) != probe.digest(lambda x: x)


def test_descriptors_modules_and_classes() -> None:
    ns = namespace(
        "class Base:\n    pass\n"
        "class K(Base):\n"
        "    attr = 1\n"
        "    def m(self):\n        return 1\n"
        "    @classmethod\n    def c(cls):\n        return 2\n"
        "    @staticmethod\n    def s():\n        return 3\n"
        "    @property\n    def p(self):\n        return 4\n"
    )
    k = vars(ns["K"])
    assert probe.digest(k["c"]).startswith("classmethod def ")
    assert probe.digest(k["s"]).startswith("staticmethod def ")
    assert probe.digest(k["p"]).startswith("property def ")
    assert probe.digest(sys) == "module sys"
    other = namespace(
        "class Base:\n    pass\nclass K(Base):\n    attr = 2\n    def m(self):\n        return 1\n"
    )
    assert probe.digest(ns["K"]).startswith("class K ")
    assert probe.digest(ns["K"]) != probe.digest(other["K"])
    # Deep inside a value, a class is named, not described.
    assert probe.digest(ns["K"], depth=2) == "class m.K"


def test_containers_data_and_values_without_a_stable_repr() -> None:
    assert probe.digest([1, "a"]) == "list[1, 'a']"
    assert probe.digest({3, 1, 2}) == probe.digest({2, 3, 1}) == "set[1, 2, 3]"
    assert probe.digest({"b": 2, "a": 1}) == "{'a': 1, 'b': 2}"
    assert probe.digest(dict.fromkeys(range(300), 0)) == "dict of int values"
    assert probe.digest(len) == "builtin_function_or_method builtins.len"
    assert probe.digest(object()) == "object of builtins.object"
    assert probe.digest("x" * 400) == "object of builtins.str"

    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert probe.digest(Unprintable()) == "?"


@pytest.fixture()
def import_state() -> Iterator[None]:
    """Restore sys.path, sys.modules and the probe's folders to strip exactly."""
    path, modules, strip = list(sys.path), dict(sys.modules), list(probe._STRIP)
    try:
        yield
    finally:
        sys.path[:] = path
        for name in [n for n in sys.modules if n not in modules]:
            del sys.modules[name]
        sys.modules.update(modules)
        probe._STRIP[:] = strip


def test_main_reports_each_module_its_file_its_names_and_its_class_members(
    tmp_path: Path, import_state: None
) -> None:
    tree = tmp_path / "tree"
    (tree / "probedpkg").mkdir(parents=True)
    (tree / "probedpkg" / "__init__.py").write_text("from .mod import K\n")
    (tree / "probedpkg" / "mod.py").write_text(
        "import os\nWHERE = os.path.dirname(__file__)\n\n\nclass K:\n    def m(self):\n"
        "        return 1\n"
    )
    (tree / "probedpkg" / "broken.py").write_text("raise ValueError('at ' + __file__)\n")
    report = tmp_path / "report.json"
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "folder": str(tree),
                "modules": ["probedpkg", "probedpkg.mod", "probedpkg.broken", "probedpkg.nope"],
                "strip": [str(tree)],
                "report": str(report),
            }
        )
    )
    assert probe.main([str(config)]) == 0
    found = json.loads(report.read_text())
    assert found["probedpkg.mod"]["file"] == str(tree / "probedpkg" / "mod.py")
    names = found["probedpkg.mod"]["names"]
    assert names["WHERE"] == "'<root>/probedpkg'"
    assert names["os"] == "module os"
    assert names["K"].startswith("class K ")
    # 3.13 also records the attributes the methods assign (__static_attributes__).
    assert set(found["probedpkg.mod"]["members"]["K"]) - {"__static_attributes__"} == {"m"}
    assert found["probedpkg"]["names"]["K"] == names["K"]
    assert found["probedpkg.broken"] == {
        "error": "ValueError: at <root>/probedpkg/broken.py",
    }
    assert found["probedpkg.nope"]["error"].startswith("ModuleNotFoundError: ")


def test_origin_names_where_a_function_or_class_is_defined_through_its_wrappers() -> None:
    ns = namespace(
        """
import functools

def base(x):
    return x

@functools.wraps(base)
def wrapper(x):
    return base(x)

class K:
    @classmethod
    def make(cls):
        return cls()

    @staticmethod
    def helper():
        return 1
""",
        name="mod_a",
    )
    assert probe.origin(ns["wrapper"]) == "mod_a:base"  # the function it wraps
    assert probe.origin(ns["K"]) == "mod_a:K"
    assert probe.origin(vars(ns["K"])["make"]) == "mod_a:K.make"
    assert probe.origin(vars(ns["K"])["helper"]) == "mod_a:K.helper"
    assert probe.origin(42) is None and probe.origin([ns["base"]]) is None

    def nameless() -> None: ...

    nameless.__module__ = None  # type: ignore[assignment]
    assert probe.origin(nameless) is None


def test_references_describe_a_table_of_definitions_and_nothing_else() -> None:
    ns = namespace("def f():\n    return 1\n\nclass C:\n    pass\n", name="mod_t")
    table = probe.references({"f": ns["f"], "n": 3})
    assert table is not None
    assert table["masked"] == "dict['f', ref mod_t:f, 'n', 3]"
    assert [item[:2] for item in table["items"]] == [[1, "mod_t:f"]]
    assert probe.references([ns["C"], ns["f"]])["items"][0][:2] == [0, "mod_t:C"]  # type: ignore[index]
    assert probe.references([1, "a"]) is None  # a container of plain data
    assert probe.references(ns["f"]) is None  # no container
    assert probe.references({i: i for i in range(201)}) is None  # too large to describe


def test_unbound_finds_global_reads_nothing_binds_in_functions_methods_and_closures() -> None:
    module = types.ModuleType("mod_u")
    source = """
import os

def uses_gone():
    return GONE + os.sep

def outer():
    def inner():
        return NESTED_GONE
    return inner

class K:
    @property
    def p(self):
        return PROP_GONE

    @classmethod
    def c(cls):
        return CLS_GONE

    def fine(self):
        return len(os.sep)

borrowed = os.path.join  # defined elsewhere: its reads are not this module's
"""
    exec(compile(source, "<mod_u>", "exec"), module.__dict__)
    assert probe.unbound(module) == ["CLS_GONE", "GONE", "NESTED_GONE", "PROP_GONE"]
