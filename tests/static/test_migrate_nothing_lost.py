"""``migrate --apply``: nothing of a generated whole-tree copy is lost.

Every file of the copy ends in one of three states: identical to its
counterpart (and removed), present afterwards with the same bytes (moved
into the mirror, or under ``migrate-leftovers/``), or minimized into an
override that the static proof accepts against trunk's file.  Nothing under
the old copy can load afterwards.
"""

from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path
from typing import Union

from cli_support import git, make
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flagtree_spec._cli import main
from flagtree_spec._tools.migrate.render import prove

MODULES = ("a.py", "b.py", "pkg/__init__.py", "pkg/c.py", "pkg/sub/__init__.py", "pkg/sub/d.py")
DATA = ("pkg/table.json",)
CHANGES = ("identical", "ast-identical", "changed", "deleted", "linked")


def module(name: str, version: int, extra: str = "") -> str:
    return (
        f'"""Module {name}."""\n\nimport os\n\n\n'
        f"def f():\n    return {version}\n\n\n"
        f"def g():\n    return os.sep\n{extra}"
    )


Files = dict[str, Union[str, bytes]]
Case = tuple[Files, Files, dict[str, str]]


@st.composite
def copies(draw: st.DrawFn) -> Case:
    """(trunk files, copy files, copy links): the copy made from trunk, then changed."""
    trunk: dict[str, str | bytes] = {"__init__.py": '"""Root."""\n'}
    for rel in MODULES:
        trunk[rel] = module(rel, 1)
    for rel in DATA:
        trunk[rel] = b'{"x": 1}\n'
    copy: dict[str, str | bytes] = {}
    links: dict[str, str] = {}
    for rel, text in trunk.items():
        change = draw(st.sampled_from(CHANGES))
        if change == "identical" or (rel == "__init__.py" and change == "linked"):
            copy[rel] = text
        elif change == "ast-identical" and isinstance(text, str):
            copy[rel] = text.replace("import os\n", "import os  # copied\n")
        elif change in ("changed", "ast-identical"):
            copy[rel] = (
                text + "\nBACKEND = True\n"
                if isinstance(text, str)
                else b'{"x": 2}\n'
            )  # fmt: skip
        elif change == "linked":
            links[rel] = rel
    for j in range(draw(st.integers(0, 2))):
        copy[f"pkg/added{j}.py"] = module("added", 9)
    if draw(st.booleans()):
        copy["native.so"] = b"\x7fELF"
    return trunk, copy, links


def files(top: Path) -> dict[str, bytes]:
    found = {}
    for folder, _, names in os.walk(top):
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink():
                found[str(path.relative_to(top))] = path.read_bytes()
    return found


def _trunk() -> Files:
    trunk: Files = {"__init__.py": '"""Root."""\n'}
    trunk.update({rel: module(rel, 1) for rel in MODULES})
    trunk.update({rel: b'{"x": 1}\n' for rel in DATA})
    return trunk


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=copies(), minimized=st.booleans())
@example(case=(_trunk(), {}, {}), minimized=False)  # every file deleted: no copy at all
def test_every_file_of_the_copy_is_kept_identical_or_proven(case: Case, minimized: bool) -> None:
    trunk_files, copy_files, links = case
    with tempfile.TemporaryDirectory() as where:
        top = Path(where)
        trunk = top / "python" / "root"
        fork = top / "third_party" / "b" / "python" / "root"
        into = top / "third_party" / "b" / "backend" / "spec" / "root"
        make(trunk, trunk_files)
        make(fork, copy_files)
        for rel in links:
            (fork / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(trunk / rel, fork / rel)
        git(top, "init", "-q")
        git(top, "add", "-A")
        git(top, "commit", "-qm", "copy")
        before = files(fork)
        argv = [
            "migrate",
            "--repo",
            str(top),
            "-b",
            "b",
            "--apply",
            "--no-verify",
            "--format",
            "json",
        ]
        if not copy_files and not links:
            # A copy with no file leaves no folder (git keeps none): there is nothing to
            # migrate, and naming a folder that does not exist is an input error.
            assert main(argv + (["--minimize"] if minimized else [])) == 2
            return
        # 1: check finds the packages do not call spec_path yet (FTS001); 2 would be an error.
        assert main(argv + (["--minimize"] if minimized else [])) in (0, 1)
        # Nothing under the old copy can load: no Python file, no link.
        assert not fork.exists() or not any(
            p.suffix == ".py" or p.is_symlink() for p in fork.rglob("*")
        )
        leftovers = top / "third_party" / "b" / "migrate-leftovers" / "root"
        for rel, data in before.items():
            counterpart = trunk / rel
            if counterpart.is_file() and counterpart.read_bytes() == data:
                continue  # identical: trunk holds it
            moved = into / rel
            kept = leftovers / rel
            if kept.is_file():
                assert kept.read_bytes() == data, rel
                continue
            if not moved.is_file():  # dropped: AST-identical, the counterpart holds the code
                assert rel.endswith(".py") and counterpart.is_file(), rel
                assert ast.dump(ast.parse(data)) == ast.dump(ast.parse(counterpart.read_bytes()))
                continue
            if moved.read_bytes() == data:
                continue
            assert minimized and rel.endswith(".py") and counterpart.is_file(), rel
            override = moved.read_text()
            assert "inherit(globals())" in override, rel
            assert prove(data.decode(), counterpart.read_text(), override, (), ()) == "", rel
