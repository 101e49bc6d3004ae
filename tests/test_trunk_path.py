"""DESIGN §6: trunk_path(package, *parts)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, SOURCE_PY, scenario

TRUNK = SOURCE_PY / "fixpkg"
INHERIT_PY = FIXTURES / "inherit_repo" / "python"
LOW = FIXTURES / "inherit_repo" / "third_party" / "low" / "backend" / "spec" / "inhpkg"


def trunk_paths(*calls: str, backend: str = "", path=(SOURCE_PY,)) -> list:
    code = "\n".join(
        [
            "import json, flagtree_spec",
            "out = []",
            *(
                f"try:\n    out.append(flagtree_spec.trunk_path({call}))\n"
                "except flagtree_spec.SpecError as exc:\n    out.append('SpecError: ' + str(exc))"
                for call in calls
            ),
            "print(json.dumps(out))",
        ]
    )
    return scenario(code, env={"FLAGTREE_BACKEND": backend}, path=path)


@pytest.mark.parametrize("backend", ["", "alpha", "beta,alpha"])
def test_trunk_path_is_trunk_directory_whatever_backends_are_active(backend):
    out = trunk_paths("'fixpkg'", "'fixpkg.runtime'", "'fixpkg.runtime.driver'", backend=backend)
    assert out == [str(TRUNK), str(TRUNK / "runtime"), str(TRUNK / "runtime" / "driver")]


def test_trunk_path_joins_parts_inside_the_trunk_directory():
    out = trunk_paths("'fixpkg.runtime', 'data', 'table.json'", backend="alpha")
    assert out == [str(TRUNK / "runtime" / "data" / "table.json")]


def test_trunk_path_of_package_init_override_is_trunk_not_mirror():
    # Backend beta overrides fixpkg/compiler/__init__.py.
    out = trunk_paths("'fixpkg.compiler'", backend="beta")
    assert out == [str(TRUNK / "compiler")]


def test_trunk_path_of_package_not_specialised_is_its_directory():
    out = trunk_paths("'fixpkg.plain'", "'json'", backend="alpha")
    import json

    assert out == [str(TRUNK / "plain"), json.__path__[0]]


def test_trunk_path_reaches_trunk_data_from_a_mirror_module():
    out = scenario(
        "import json, inhpkg.reader as r; print(json.dumps([r.TABLE, r.__file__]))",
        env={"FLAGTREE_BACKEND": "low"},
        path=[INHERIT_PY],
    )
    assert out == ["trunk table", str(LOW / "reader.py")]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "'fixpkg.runtime.jit'",
            "is a module, not a package; use trunk_path('fixpkg.runtime', 'jit.py')",
        ),
        ("'fixpkg.nothing'", "no such package"),
        ("'nonexistent_top'", "no such package"),
        ("'not a name'", "give a dotted package name"),
        ("3", "give a dotted package name"),
    ],
)
def test_trunk_path_of_a_name_that_is_not_a_package_is_spec_error(call, message):
    (out,) = trunk_paths(call, backend="alpha")
    assert out.startswith("SpecError: ") and message in out


def test_trunk_path_of_package_only_in_a_mirror_is_spec_error():
    (out,) = trunk_paths("'inhpkg.newpkg'", backend="low", path=(INHERIT_PY,))
    assert out.startswith("SpecError: ") and "no trunk directory" in out
