"""Which backend is active — names, stacks, markers, mismatch."""

from __future__ import annotations

import textwrap

import pytest
from conftest import FIXTURES, scenario

from flagtree_spec import SpecConfigError
from flagtree_spec._config import parse_stack

JIT = "import json, mkpkg.runtime.jit as j; print(json.dumps(j.WHERE))"
ERR = """
    import json
    try:
        import {pkg}
    except Exception as exc:
        print(json.dumps([type(exc).__name__, str(exc)]))
    else:
        print(json.dumps(None))
"""


def site(kind):
    return [FIXTURES / kind / "site-packages"]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("../x", "is not a backend name"),
        ("a/b", "is not a backend name"),
        ("a\\b", "is not a backend name"),
        ("..", "is not a backend name"),
        ("a,,b", "empty element"),
        ("a,", "empty element"),
        (",a", "empty element"),
        ("a,a", "twice"),
        ("a, a", "twice"),
        ("a\x00b", "is not a backend name"),
        ("a\nb", "is not a backend name"),
        ("a b", "is not a backend name"),
        ("a\tb", "is not a backend name"),
        ("x" * 65, "is not a backend name"),
        ("caf\u00e9", "is not a backend name"),
        ("\u0661", "is not a backend name"),
        ("1abc", "is not a backend name"),
        ("-a", "is not a backend name"),
        ("a,none", "'none' means no backend"),
    ],
)
def test_invalid_backend_name_is_config_error_naming_variable_and_value(value, why):
    with pytest.raises(SpecConfigError, match=why) as info:
        parse_stack(value, "FLAGTREE_BACKEND")
    message = str(info.value)
    assert message.startswith("FLAGTREE_BACKEND=")
    assert repr(value)[:40] in message or "characters)" in message


def test_very_long_value_is_quoted_shortened():
    with pytest.raises(SpecConfigError, match=r"\(10000 characters\)"):
        parse_stack("x" * 10000, "FLAGTREE_BACKEND")


@pytest.mark.parametrize(
    ("value", "stack"),
    [
        ("", ()),
        ("   ", ()),
        ("none", ()),
        (" a ", ("a",)),
        ("a , b", ("a", "b")),
        ("alpha\n", ("alpha",)),
        ("A_b-9", ("A_b-9",)),
        ("x" * 64, ("x" * 64,)),
    ],
)
def test_valid_backend_values(value, stack):
    assert parse_stack(value, "FLAGTREE_BACKEND") == stack


def test_invalid_backend_in_environment_fails_the_import():
    out = scenario(ERR.format(pkg="fixpkg"), env={"FLAGTREE_BACKEND": "../x"})
    assert out == [
        "SpecConfigError",
        "FLAGTREE_BACKEND='../x': '../x' is not a backend name (letters, digits, '_' and '-' "
        "only, starting with a letter or '_', at most 64)",
    ]


def test_marker_file_selects_backend():
    assert scenario(JIT, path=site("marker_file")) == "gamma"


def test_marker_module_is_read_not_executed():
    assert scenario(JIT, path=site("marker_module")) == "gamma"


def test_marker_module_with_code_is_config_error_under_strict_mode_and_never_executed():
    strict = {"FLAGTREE_SPEC_STRICT": "1"}
    out = scenario(
        textwrap.dedent(ERR.format(pkg="mkpkg"))
        + "import os; print(json.dumps(os.environ.get('PWNED')))",
        path=site("marker_bad"),
        env=strict,
    )
    assert out is None  # PWNED was never set by the marker module
    out = scenario(ERR.format(pkg="mkpkg"), path=site("marker_bad"), env=strict)
    assert out[0] == "SpecConfigError" and "never executed" in out[1]
    # Without strict mode the import goes on with no backend (tests/test_markers.py).
    assert scenario(JIT, path=site("marker_bad")) == "trunk"


def test_empty_marker_means_no_backend():
    assert scenario(JIT, path=site("marker_empty")) == "trunk"


def test_environment_repeating_marker_is_fine():
    assert scenario(JIT, path=site("marker_file"), env={"FLAGTREE_BACKEND": "gamma"}) == "gamma"


def test_marker_contradicted_by_env_is_config_error():
    out = scenario(
        ERR.format(pkg="mkpkg"), path=site("marker_file"), env={"FLAGTREE_BACKEND": "alpha"}
    )
    assert out[0] == "SpecConfigError"
    assert (
        "'alpha'" in out[1] and "'gamma'" in out[1] and "FLAGTREE_SPEC_ALLOW_MISMATCH=1" in out[1]
    )


def test_mismatch_allowed_by_switch():
    out = scenario(
        JIT,
        path=site("marker_file"),
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_ALLOW_MISMATCH": "1"},
    )
    assert out == "trunk"  # alpha has no spec root in this tree


def test_env_none_is_allowed_against_marker():
    assert scenario(JIT, path=site("marker_file"), env={"FLAGTREE_BACKEND": "none"}) == "trunk"


def test_empty_environment_variable_means_not_set():
    assert scenario(JIT, path=site("marker_file"), env={"FLAGTREE_BACKEND": "  "}) == "gamma"


def test_switch_with_bad_value_is_config_error():
    out = scenario(
        ERR.format(pkg="mkpkg"),
        path=site("marker_file"),
        env={"FLAGTREE_BACKEND": "alpha", "FLAGTREE_SPEC_ALLOW_MISMATCH": "yes"},
    )
    assert out[0] == "SpecConfigError" and "FLAGTREE_SPEC_ALLOW_MISMATCH='yes'" in out[1]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\xff\xfe\x00binary", "not UTF-8"),
        (b"a" * 5000, "larger than 4096 bytes"),
        (b"../evil", "is not a backend name"),
    ],
)
def test_bad_marker_file_is_config_error(tmp_path, content, why):
    from flagtree_spec._config import read_marker

    (tmp_path / "FLAGTREE_BACKEND").write_bytes(content)
    with pytest.raises(SpecConfigError, match=why):
        read_marker(str(tmp_path))


def test_markers_that_disagree_are_config_error(tmp_path):
    from flagtree_spec._config import read_marker

    (tmp_path / "FLAGTREE_BACKEND").write_text("a\n")
    (tmp_path / "_flagtree_backend.py").write_text('FLAGTREE_BACKEND = "b"\n')
    with pytest.raises(SpecConfigError, match="markers disagree"):
        read_marker(str(tmp_path))
    (tmp_path / "_flagtree_backend.py").write_text('FLAGTREE_BACKEND = "a"\n')
    assert read_marker(str(tmp_path)).stack == ("a",)


@pytest.mark.parametrize(
    "source",
    [
        'FLAGTREE_BACKEND = "a"\nFLAGTREE_BACKEND = "b"\n',
        "FLAGTREE_BACKEND = 3\n",
        "def f(:\n",
        "",
    ],
)
def test_marker_module_shapes_other_than_a_literal_or_a_computed_value_are_config_error(
    tmp_path, source
):
    from flagtree_spec._config import read_marker

    (tmp_path / "_flagtree_backend.py").write_text(source)
    with pytest.raises(SpecConfigError, match="exactly one top-level FLAGTREE_BACKEND"):
        read_marker(str(tmp_path))


def test_marker_directory_is_config_error(tmp_path):
    from flagtree_spec._config import read_marker

    (tmp_path / "FLAGTREE_BACKEND").mkdir()
    with pytest.raises(SpecConfigError, match="is a directory"):
        read_marker(str(tmp_path))
