"""``migrate``: the less common inputs (odd statements, layouts, options)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import make, run
from conftest import FIXTURES

from flagtree_spec._tools.migrate.apply import insert_spec_path
from flagtree_spec._tools.migrate.files import same_tree
from flagtree_spec._tools.migrate.minimize import minimize

REPO = FIXTURES / "migrate_repo"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"

EVERY_BINDING = """\
import os.path
from json import *
a, [b, *c] = 1, [2, 3]
d: int = 4
e: int
for f in range(2):
    pass
with open(os.devnull) as (g, h):
    pass
try:
    import zlib
except ImportError as exc:
    zlib = None
if (i := 5):
    global j
def k(x: int) -> int:
    return x
"""


def test_every_kind_of_module_level_binding_is_seen() -> None:
    copy = EVERY_BINDING + "\n\ndef extra():\n    return os.path.sep\n"
    result = minimize(copy, EVERY_BINDING, EVERY_BINDING, has_base=True)
    assert result.kept == ("extra",)
    assert result.text is not None and "import os.path" in result.text


def test_match_statement_bindings_are_seen() -> None:
    if sys.version_info < (3, 10):
        pytest.skip("match needs Python 3.10")
    trunk = "match 1:\n    case 1:\n        m = 1\n\n\ndef f():\n    return 1\n"
    result = minimize(trunk.replace("return 1", "return 2"), trunk, trunk, has_base=True)
    assert result.kept == ("f",)


def test_annotations_run_at_import_time_without_future_annotations() -> None:
    trunk = "class A:\n    pass\n\n\ndef f() -> A:\n    return A()\n"
    copy = trunk.replace("pass", "x = 1")
    assert minimize(copy, trunk, trunk, has_base=True).kept == ("A",)
    result = minimize(copy, trunk, trunk, has_base=True)
    assert result.text is not None and "def f() -> A" in result.text  # captured: kept too
    lazy = "from __future__ import annotations\n" + trunk
    result = minimize(lazy.replace("pass", "x = 1"), lazy, lazy, has_base=True)
    assert result.text is not None and "def f()" not in result.text


def test_added_by_both_sides_differently_is_reported() -> None:
    base = "def f():\n    return 1\n"
    result = minimize(base + "def g():\n    return 2\n", base + "def g():\n    return 3\n", base,
                      has_base=True)  # fmt: skip
    assert "g: added by both sides, differently: merge by hand" in result.notes


def test_base_without_the_file_counts_every_difference_as_both() -> None:
    trunk = "def f():\n    return 1\n"
    result = minimize(trunk.replace("1", "2"), trunk, None, has_base=True)
    assert result.kept == ("f",)
    assert result.notes[0].startswith("the base has no such file")


def test_star_import_that_differs_keeps_the_file_whole() -> None:
    trunk = "def f():\n    return 1\n"
    result = minimize("from os import *\n" + trunk, trunk, trunk, has_base=True)
    assert result.text is None and "effects differ" in result.reason


def test_kept_name_also_bound_by_a_block_keeps_the_file_whole() -> None:
    trunk = "try:\n    X = 1\nexcept ImportError:\n    pass\n\nX = 2\n"
    result = minimize(trunk.replace("X = 2", "X = 3"), trunk, trunk, has_base=True)
    assert result.text is None and "binds a kept name with effects" in result.reason


def test_kept_statement_sharing_a_line_keeps_the_file_whole() -> None:
    trunk = "def f():\n    return 1\nY = 2; Z = 3\n"
    result = minimize(trunk.replace("Y = 2", "Y = 5"), trunk, trunk, has_base=True)
    assert result.text is None and "shares a line" in result.reason


def test_comments_above_a_kept_definition_go_with_it() -> None:
    trunk = "# helper\n# more\ndef f():\n    return 1\n"
    result = minimize(trunk.replace("1", "2"), trunk, trunk, has_base=True)
    assert result.text is not None and "# helper\n# more\ndef f():" in result.text


def test_only_the_needed_names_of_an_import_are_repeated() -> None:
    trunk = "from os import sep, getcwd\n\n\ndef f():\n    return sep\n"
    result = minimize(trunk.replace("return sep", "return sep * 2"), trunk, trunk, has_base=True)
    assert result.text is not None and "from os import sep\n" in result.text


def test_same_tree_compares_like_ast_dump() -> None:
    import ast

    assert same_tree(ast.parse("x = [1, 2]"), ast.parse("x = [1,\n  2]  # c"))
    assert not same_tree(ast.parse("x = [1, 2]"), ast.parse("x = [1, 2, 3]"))
    assert not same_tree(ast.parse("x = 0.0"), ast.parse("x = -0.0 + 0"))
    assert not same_tree(ast.parse("x = 1"), ast.parse("x = 1.0"))


# --------------------------------------------------------------------------- plan and apply


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    shutil.copytree(REPO, top, symlinks=True)
    return top


def plan(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> dict[str, object]:
    code, out, err = run(capsys, "migrate", "--repo", str(repo), "-b", "acme", *extra,
                         "--format", "json")  # fmt: skip
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def test_odd_entries_of_a_copy(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make(
        repo / COPY,
        {
            "runtime/broken.py": "def (:\n",
            "runtime/__pycache__/jit.cpython-311.pyc": b"\0",
            "language/newpkg/__init__.py": "",
            "language/newpkg/deep/mod.py": "X = 1\n",
            "fast.so": b"\x7fELF",
        },
    )
    (repo / "python/minitri/runtime/broken.py").write_text("def f(:\n")
    data = plan(capsys, repo)
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    assert entries["runtime/broken.py"]["action"] == "move"
    assert entries["runtime/__pycache__"]["reason"] == "bytecode cache: removed"
    assert entries["fast.so"]["action"] == "keep"
    assert "compiled file" in entries["fast.so"]["reason"]
    assert entries["language/newpkg/deep/mod.py"]["action"] == "add"
    code, out, err = run(
        capsys, "migrate", "--repo", str(repo), "-b", "acme", "--apply", "--add-spec-path"
    )
    assert code == 1, out + err  # check: FTS010, the moved file does not parse
    assert "runtime/broken.py:1:5: FTS010 does not parse" in out
    assert not (repo / COPY).exists()
    assert (repo / "third_party/acme/migrate-leftovers/minitri/fast.so").read_bytes() == b"\x7fELF"


def test_root_init_that_does_not_parse_or_only_lacks_statements(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    init = repo / COPY / "__init__.py"
    init.write_text("def (:\n")
    entries = {e["path"]: e for e in plan(capsys, repo)["entries"]}  # type: ignore[attr-defined]
    assert "(it does not parse)" in entries["__init__.py"]["reason"]
    init.write_text('"""minitri: a tiny kernel language."""\n')
    entries = {e["path"]: e for e in plan(capsys, repo)["entries"]}  # type: ignore[attr-defined]
    assert "(it lacks some of trunk's statements)" in entries["__init__.py"]["reason"]


def test_declared_mirror_folder_and_check_of_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make(repo, {"third_party/acme/backend/spec/flagtree_spec.json": '{"mirror": "tree"}'})
    data = plan(capsys, repo)
    assert data["into"] == str(repo / "third_party/acme/backend/spec/tree")
    argv = ("migrate", "--repo", str(repo), "-b", "acme", "--apply", "--no-verify")
    code, out, _ = run(capsys, *argv)
    assert code == 1 and "FTS001" in out  # check honours the declaration: the tree is seen


def test_into_not_named_like_the_root_skips_check(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "migrate", "--fork", str(repo / COPY), "--trunk", str(repo / "python/minitri"),
        "--into", str(repo / "elsewhere" / "tree"), "--apply", "--no-verify",
    )  # fmt: skip
    assert code == 0
    assert "check: skipped" in out


def test_text_plan_prints_warnings(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init = repo / COPY / "runtime/__init__.py"
    init.write_text(init.read_text() + "X = 1\n")
    code, out, _ = run(capsys, "migrate", "--repo", str(repo), "-b", "acme")
    assert code == 0
    assert "warning: runtime/__init__.py: a package __init__ override" in out


def bad(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _, err = run(capsys, "migrate", *argv)
    assert code == 2
    return err


def test_more_unusable_inputs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trunk = str(repo / "python/minitri")
    assert "is not one backend name" in bad(capsys, "--repo", str(repo), "-b", "a,b")
    assert "has no python/R/__init__.py" in bad(capsys, "--repo", str(repo / "python"), "-b", "x")
    assert "not a directory" in bad(capsys, "--fork", str(repo / "nope"), "--trunk", trunk,
                                    "--into", str(repo / "i"))  # fmt: skip
    assert "has no __init__.py" in bad(capsys, "--fork", str(repo / COPY), "--trunk",
                                       str(repo / "python"), "--into", str(repo / "i"))  # fmt: skip
    assert "lies inside --trunk" in bad(capsys, "--fork", trunk + "/runtime", "--trunk", trunk,
                                        "--into", str(repo / "i"))  # fmt: skip
    assert "lies inside the trunk" in bad(capsys, "--fork", str(repo / COPY), "--trunk", trunk,
                                          "--into", trunk + "/spec")  # fmt: skip
    assert "not both" in bad(capsys, "--repo", str(repo), "-b", "acme", "--minimize",
                             "--base", "x", "--base-rev", "y")  # fmt: skip
    make(repo, {"third_party/acme/backend/spec/flagtree_spec.json": '{"bogus": 1}'})
    assert "bogus" in bad(capsys, "--repo", str(repo), "-b", "acme")
    make(repo, {"third_party/acme/backend/spec/flagtree_spec.json": '{"base": ["acme"]}'})
    assert "cycle" in bad(capsys, "--repo", str(repo), "-b", "acme")


def test_insert_spec_path_into_unusual_files(tmp_path: Path) -> None:
    from flagtree_spec._tools.model.model import InputError

    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    with pytest.raises(InputError, match="cannot add spec_path"):
        insert_spec_path(str(broken))
    bare = tmp_path / "bare.py"
    bare.write_text('"""Doc."""')
    assert insert_spec_path(str(bare))
    assert bare.read_text().startswith('"""Doc."""\n\ntry:\n')


def test_json_apply_reports_the_changes_and_the_check(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "migrate", "--repo", str(repo), "-b", "acme", "--apply",
                         "--no-verify", "--format", "json")  # fmt: skip
    assert code == 1, err  # FTS001: no spec_path calls yet
    data = json.loads(out)
    assert len(data["applied"]) == len(data["entries"]) == 15
    assert "FTS001" in {f["code"] for f in data["check"]}


def test_base_sharing_no_module_with_trunk_is_not_an_older_trunk(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "old" / "minitri"
    make(other, {"__init__.py": "", "unrelated.py": "X = 1\n"})
    err = bad(capsys, "--repo", str(repo), "-b", "acme", "--minimize", "--base", str(other))
    assert "shares no module with the trunk" in err


def test_minimized_file_keeps_the_copys_encoding(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trunk = '# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\n\n\ndef f():\n    return 1\n'
    (repo / "python/minitri/runtime/latin.py").write_bytes(trunk.encode("latin-1"))
    copy = trunk.replace("return 1", "return '\xe9'")
    (repo / COPY / "runtime/latin.py").write_bytes(copy.encode("latin-1"))
    base = tmp_path / "base" / "minitri"
    shutil.copytree(FIXTURES / "migrate_base" / "minitri", base)
    (base / "runtime/latin.py").write_bytes(trunk.encode("latin-1"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "copy"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       check=True, capture_output=True)  # fmt: skip
    code, out, err = run(capsys, "migrate", "--repo", str(repo), "-b", "acme", "--minimize",
                         "--base", str(base), "--apply", "--add-spec-path")  # fmt: skip
    assert code == 0, out + err
    written = (repo / MIRROR / "runtime/latin.py").read_bytes()
    assert written.startswith(b"# -*- coding: latin-1 -*-\n")
    assert b"return '\xe9'" in written  # latin-1, as its coding line says


def test_counterpart_of_a_base_backend_is_compared_two_ways(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jit = (repo / "python/minitri/runtime/jit.py").read_text()
    make(
        repo,
        {
            "third_party/acme/backend/spec/flagtree_spec.json": '{"base": ["tileir"]}',
            "third_party/tileir/backend/spec/minitri/runtime/jit.py": jit + "\nTILE = 1\n",
        },
    )
    data = plan(capsys, repo, "--minimize", "--base", str(FIXTURES / "migrate_base/minitri"))
    entries = {e["path"]: e for e in data["entries"]}  # type: ignore[attr-defined]
    assert entries["runtime/jit.py"]["notes"][0].startswith("the counterpart is /")
    assert "tileir" in entries["runtime/jit.py"]["notes"][0]


def test_leftovers_go_beside_the_copys_spec_root(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fork = tmp_path / "a" / "copies" / "minitri"
    shutil.copytree(repo / COPY, fork, symlinks=True)
    into = tmp_path / "b" / "spec" / "minitri"
    trunk = str(repo / "python/minitri")
    argv = ["migrate", "--fork", str(fork), "--trunk", trunk, "--into", str(into)]
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0
    assert json.loads(out)["leftovers"] == str(tmp_path / "a" / "migrate-leftovers")
    inside = tmp_path / "b" / "spec" / "old" / "minitri"
    shutil.copytree(repo / COPY, inside, symlinks=True)
    err = bad(capsys, "--fork", str(inside), "--trunk", str(repo / "python/minitri"),
              "--into", str(into))  # fmt: skip
    assert "would lie inside" in err
