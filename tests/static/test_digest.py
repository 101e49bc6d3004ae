"""Token digests: version-stable (a committed golden file), layout-blind, per definition."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from flagtree_spec._tools.upgrade.digest import analyse, digest_text

DIGEST = Path(__file__).resolve().parent.parent.parent / "fixtures" / "digest"


def _read(name: str) -> str:
    return (DIGEST / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["kitchen_sink.py", "kitchen_sink_layout.py", "inheriting.py"])
def test_digests_are_version_stable_equal_to_the_golden_file_on_every_python(name: str) -> None:
    # The golden file was written once; CI recomputes it on CPython 3.9-3.13,
    # whose tokenizers differ (f-strings are one token before 3.12, several after).
    golden = json.loads((DIGEST / "digests.json").read_text(encoding="utf-8"))[name]
    found = analyse(_read(name))
    assert found.digest == golden["file"]
    assert {n: d.digest for n, d in found.definitions.items()} == golden["definitions"]


def test_digest_is_layout_blind_comments_blank_lines_indentation_docstrings() -> None:
    plain, layout = analyse(_read("kitchen_sink.py")), analyse(_read("kitchen_sink_layout.py"))
    assert plain.digest == layout.digest
    assert {n: d.digest for n, d in plain.definitions.items()} == {
        n: d.digest for n, d in layout.definitions.items()
    }


def test_a_code_change_changes_the_file_digest_and_only_that_definition() -> None:
    before = analyse("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
    after = analyse("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return b * a\n")
    assert before.digest != after.digest
    assert before.definitions["add"].digest == after.definitions["add"].digest
    assert before.definitions["mul"].digest != after.definitions["mul"].digest


def test_a_string_that_is_no_docstring_counts() -> None:
    assert digest_text("x = 1\n'not a docstring'\n") != digest_text("x = 1\n'other'\n")
    assert digest_text("def f():\n    x = 1\n    'value'\n") != digest_text(
        "def f():\n    x = 1\n    'other'\n"
    )
    assert digest_text("def f():\n    'doc'\n    return 1\n") == digest_text(
        "def f():\n    return 1\n"
    )


def test_the_end_of_a_nested_block_belongs_to_the_definition_it_closes() -> None:
    # DEDENT tokens sit on the next statement's line; they must not make the
    # next definition's digest depend on how deeply the previous one nests.
    shallow = analyse("def f():\n    return 1\ndef g():\n    return 2\n")
    deep = analyse(
        "def f():\n    if x:\n        if y:\n            return 1\ndef g():\n    return 2\n"
    )
    assert shallow.definitions["g"].digest == deep.definitions["g"].digest
    assert shallow.definitions["f"].digest != deep.definitions["f"].digest


def test_definitions_cover_decorators_and_compound_statements() -> None:
    source = textwrap.dedent(
        """\
        import os

        @cache
        def f():
            return 1

        if os.name == "nt":
            def sep():
                return "\\\\"
        else:
            sep = "/"

        a = b = 3
        x: int
        """
    )
    found = analyse(source)
    assert sorted(found.definitions) == ["a", "b", "f", "sep"]
    assert found.definitions["f"].start == 3 and found.definitions["f"].kind == "def"
    assert found.segment(found.definitions["f"]) == "@cache\ndef f():\n    return 1\n"
    assert found.definitions["sep"].kind == "block"
    assert found.definitions["a"].digest == found.definitions["b"].digest


def test_inheriting_module_names_what_it_replaces_deletes_and_captures() -> None:
    found = analyse(_read("inheriting.py"))
    assert found.inherit_line == 4
    assert sorted(found.after) == ["_helper_only_here", "_lower_add", "add", "mul"]
    assert found.deleted == (("sub", 22),)
    # add is read ("_lower_add = add") before it is replaced: a wrapper of the
    # lower version's add.  mul is read only inside a lambda, later: not captured.
    assert found.captured == frozenset({"add"})


def test_default_arguments_and_decorators_capture_the_lower_object() -> None:
    found = analyse(
        "from flagtree_spec import inherit\ninherit(globals())\n"
        "def f(x, _lower=f):\n    return _lower(x)\n"
        "@wraps(g)\ndef g():\n    pass\n"
        "def h():\n    return h\n"
    )
    assert found.captured == frozenset({"f", "g", "wraps"})
    assert found.inherit_line == 2


def test_lambdas_do_not_capture_and_class_statements_do() -> None:
    found = analyse(
        "import flagtree_spec\nflagtree_spec.inherit(globals())\n"
        "later = lambda: f()\n"
        "class Shape(Base, metaclass=Meta):\n    pass\n"
        "def f():\n    pass\n"
        "class Base:\n    pass\n"
    )
    assert found.inherit_line == 2
    assert found.captured == frozenset({"Base", "Meta"})


def test_a_module_without_inherit_has_no_after_part() -> None:
    found = analyse("def f():\n    pass\n")
    assert found.inherit_line is None and found.after == {} and found.captured == frozenset()


def test_source_that_does_not_parse_raises_syntax_error() -> None:
    with pytest.raises(SyntaxError):
        analyse("def (:\n")
