"""trunk_path(package, *parts) and fingerprint(root)."""

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
        ("'fixpkg.runtime.jit.deeper'", "cannot find it"),
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


# --------------------------------------------------------------------------- fingerprint
# fingerprint(): a stable digest of the active stack and of every file in its mirror
# trees and hook modules; computed once, invalidated by activate().


@pytest.fixture
def repo(tmp_path):
    import shutil

    target = tmp_path / "repo"
    shutil.copytree(
        SOURCE_PY.parent, target, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True
    )
    return target


def fingerprints(repo, steps: str, backend: str = "alpha") -> list:
    """Run *steps* (Python lines using fp(), edit(rel, text), refresh()) in a fresh process."""
    code = f"""
import json, os, pathlib, flagtree_spec, fixpkg
REPO = pathlib.Path({str(repo)!r})
out = []
def fp():
    out.append(flagtree_spec.fingerprint("fixpkg"))
def edit(rel, text):
    (REPO / rel).parent.mkdir(parents=True, exist_ok=True)
    (REPO / rel).write_text(text)
def refresh(backend={backend!r}):
    flagtree_spec.activate(backend)
{steps}
print(json.dumps(out))
"""
    return scenario(code, env={"FLAGTREE_BACKEND": backend}, path=[repo / "python"])


ALPHA_SPEC = "third_party/alpha/backend/spec"


def test_fingerprint_is_a_stable_hex_digest_wherever_the_tree_lies(repo, tmp_path):
    import shutil

    first = fingerprints(repo, "fp()\nfp()")
    assert first[0] == first[1] and len(first[0]) == 64 and int(first[0], 16) >= 0
    assert fingerprints(repo, "fp()") == first[:1]  # another process
    moved = tmp_path / "elsewhere"
    shutil.copytree(repo, moved)
    assert fingerprints(moved, "fp()") == first[:1]


def test_fingerprint_changes_when_a_mirror_file_changes(repo):
    out = fingerprints(
        repo, f"fp()\nedit('{ALPHA_SPEC}/fixpkg/runtime/jit.py', 'WHERE = 1\\n')\nrefresh()\nfp()"
    )
    assert out[0] != out[1]


def test_fingerprint_changes_when_a_mirror_file_is_added(repo):
    out = fingerprints(
        repo, f"fp()\nedit('{ALPHA_SPEC}/fixpkg/runtime/new.py', '')\nrefresh()\nfp()"
    )
    assert out[0] != out[1]


def test_fingerprint_changes_when_a_hook_module_changes(repo):
    out = fingerprints(
        repo, f"fp()\nedit('{ALPHA_SPEC}/__init__.py', 'def hook(): pass\\n')\nrefresh()\nfp()"
    )
    assert out[0] != out[1]


def test_fingerprint_changes_only_then_not_for_trunk_pycache_or_mtime(repo):
    out = fingerprints(
        repo,
        f"""
fp()
edit('python/fixpkg/runtime/jit.py', 'WHERE = "changed trunk"\\n')
edit('{ALPHA_SPEC}/fixpkg/runtime/__pycache__/jit.cpython-311.pyc', 'stale bytes')
os.utime(REPO / '{ALPHA_SPEC}/fixpkg/runtime/jit.py', (0, 0))
edit('third_party/beta/backend/spec/fixpkg/runtime/jit.py', 'inactive backend\\n')
refresh()
fp()
""",
    )
    assert out[0] == out[1]


def test_fingerprint_is_computed_once_until_activate(repo):
    out = fingerprints(
        repo, f"fp()\nedit('{ALPHA_SPEC}/fixpkg/runtime/jit.py', 'WHERE = 1\\n')\nfp()"
    )
    assert out[0] == out[1]


def test_fingerprint_depends_on_the_backend_stack(repo):
    out = fingerprints(repo, "fp()\nrefresh('beta,alpha')\nfp()\nrefresh(None)\nfp()")
    assert len(set(out)) == 3


def test_fingerprint_of_a_name_that_is_not_a_root_package_is_spec_error():
    out = scenario(
        """
        import json, flagtree_spec
        try:
            flagtree_spec.fingerprint("fixpkg.runtime")
        except flagtree_spec.SpecError as exc:
            print(json.dumps(str(exc)))
        """
    )
    assert "give a top-level package name" in out


def test_fingerprint_changes_when_the_declaration_or_a_single_file_hook_module_changes(repo):
    out = fingerprints(
        repo,
        f"""
edit('{ALPHA_SPEC}/flagtree_spec.json', '{{"hooks": "hooks.py"}}')
edit('{ALPHA_SPEC}/hooks.py', 'def h(): pass\\n')
refresh()
fp()
edit('{ALPHA_SPEC}/hooks.py', 'def h(): return 1\\n')
refresh()
fp()
edit('{ALPHA_SPEC}/flagtree_spec.json', '{{"hooks": "hooks.py", "exclude": ["runtime"]}}')
refresh()
fp()
""",
    )
    assert len(set(out)) == 3


def test_fingerprint_ignores_the_lock_file_at_the_top_of_a_spec_root(repo):
    out = fingerprints(
        repo,
        f"""
fp()
edit('{ALPHA_SPEC}/flagtree_spec.lock', '{{"format": 1, "overrides": {{}}}}\\n')
refresh()
fp()
edit('{ALPHA_SPEC}/fixpkg/flagtree_spec.lock', 'not at the top: a file of the mirror tree')
refresh()
fp()
""",
    )
    assert out[0] == out[1] != out[2]


def test_fingerprint_follows_the_overrides_that_run_under_disable_and_exclude(repo):
    # fixpkg.runtime.jit has an override in alpha's mirror; fixpkg.nothing has none.
    steps = """
import os
fp()
os.environ["FLAGTREE_SPEC_DISABLE"] = "fixpkg.runtime.jit"
refresh()
fp()
os.environ["FLAGTREE_SPEC_DISABLE"] = "fixpkg.nothing"
refresh()
fp()
os.environ["FLAGTREE_SPEC_DISABLE"] = ""
refresh()
import fixpkg.runtime
flagtree_spec.spec_path(fixpkg.runtime.__path__, exclude=["jit"])
fp()
"""
    out = fingerprints(repo, steps)
    assert out[0] != out[1]  # a disabled override never runs: the digest changes
    assert out[2] == out[0]  # disabling a module no mirror overrides changes nothing
    assert out[3] == out[1]  # spec_path(exclude=...) later in the process: the same
