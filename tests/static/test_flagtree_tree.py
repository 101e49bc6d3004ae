"""The static commands on a tree of FlagTree's shape (``fixtures/flagtree_dropin``).

The same markers as the run time (the ``FLAGTREE_BACKEND`` text file beside a
``_flagtree_backend.py`` that computes the value), ``--spec-root DIR`` given
with ``-b B`` as B's spec root, the hook package and its fragments listed as
what they are, and FTS002's advice where the trunk's ``spec_path`` is its own.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_support import run
from conftest import FIXTURES, run_python

# The commands print absolute paths from there (text shows paths below the working folder
# relative to it: tests/static/test_output.py).
pytestmark = pytest.mark.usefixtures("outside_the_trees")

DROPIN = FIXTURES / "flagtree_dropin"
SOURCE = DROPIN / "source"
SPEC = "third_party/mthreads/backend/spec"


@pytest.fixture(autouse=True)
def no_backend_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLAGTREE_BACKEND", raising=False)


def test_status_without_backend_reads_the_marker_file_beside_a_module_that_computes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "status", "--repo", str(SOURCE), "--format", "json")
    assert code == 0
    status = json.loads(out)
    assert status["stack"] == ["mthreads"]
    assert status["stack_source"] == f"marker {SOURCE / 'python/triton/FLAGTREE_BACKEND'}"
    code, out, _ = run(capsys, "which", "--repo", str(SOURCE), "triton.runtime.jit")
    assert code == 0 and f"{SOURCE / SPEC}/triton/runtime/jit.py" in out


def test_commands_without_backend_and_without_the_marker_file_see_no_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "source"
    shutil.copytree(SOURCE, repo)
    (repo / "python/triton/FLAGTREE_BACKEND").unlink()
    code, out, _ = run(capsys, "status", "--repo", str(repo), "--format", "json")
    assert code == 0 and json.loads(out)["stack"] == []


def list_rows(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str]:
    code, out, err = run(capsys, "list", "--format", "json", *argv)
    assert code == 0, err
    return {row["module"]: row["state"] for row in json.loads(out)}


@pytest.mark.parametrize(
    "where",
    [("--repo", str(SOURCE)), ("--trunk", str(DROPIN / "installed/site-packages/triton"))],
    ids=["source", "installed"],
)
def test_list_shows_the_hook_package_and_its_fragments_as_hook_and_hook_fragment(
    capsys: pytest.CaptureFixture[str], where: tuple[str, str]
) -> None:
    assert list_rows(capsys, *where) == {
        "triton": "hook",  # <spec root>/triton/__init__.py, FlagTree's hook package
        "triton._utils": "hook fragment",  # imported by the hook package
        "triton.language": "hook fragment",  # imported by the hook package
        # imported by a hook function when it runs (from .. import _language_ext)
        "triton._language_ext": "hook fragment",
        "triton.runtime.jit": "override",
        "triton.language.core": "override",
    }
    code, out, _ = run(capsys, "check", *where)
    assert code == 0  # one FTS009 warning: the fixture's trunk never calls apply_with_path
    assert "FTS001" not in out and "FTS002" not in out, out


def test_spec_root_given_with_one_backend_is_that_backend_spec_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The spec tree lies outside the repository: only --spec-root names it.
    trunk = tmp_path / "trunk" / "triton"
    shutil.copytree(SOURCE / "python/triton", trunk)
    spec = tmp_path / "elsewhere" / "spec"
    shutil.copytree(SOURCE / SPEC, spec)
    argv = ("--trunk", str(trunk), "-b", "mthreads", "--spec-root", str(spec))
    code, out, err = run(capsys, "status", *argv, "--format", "json")
    assert code == 0, err
    roots = json.loads(out)["spec_roots"]
    assert [(r["path"], r["backend"]) for r in roots] == [(str(spec), "mthreads")]
    assert roots[0]["hooks"] == str(spec / "triton" / "__init__.py")
    assert list_rows(capsys, *argv)["triton.runtime.jit"] == "override"
    code, out, err = run(capsys, "check", *argv)
    assert code == 0, out + err
    # A backend given with no spec root anywhere is still the usage error it was.
    code, _, err = run(capsys, "check", "--trunk", str(trunk), "-b", "mthreads")
    assert code == 2 and "mthreads" in err


def own_spec_path_tree(tmp_path: Path, forwarder: bool) -> Path:
    """The installed tree with a trunk package triton.language.extra (its __init__ calls
    spec_path, as FlagTree's do) and a package-init override of it that is a copy of the
    trunk's (it calls spec_path, no inherit); FlagTree's own spec_path unless *forwarder*."""
    site = tmp_path / "site-packages"
    shutil.copytree(DROPIN / "installed/site-packages", site)
    triton = site / "triton"
    if not forwarder:
        shutil.copyfile(DROPIN / "own_spec_path.py", triton / "flagtree_spec.py")
    extra = triton / "language/extra"
    extra.mkdir()
    (extra / "__init__.py").write_text(
        "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
    )
    (extra / "libdevice.py").write_text('WHERE = "trunk"\n')
    mirror = triton / "backends/mthreads/spec/triton/language/extra"
    mirror.mkdir()
    shutil.copyfile(extra / "__init__.py", mirror / "__init__.py")
    return site


IMPORT_LIBDEVICE = """
import json

try:
    import triton.language.extra.libdevice as a
except ImportError as exc:
    print(json.dumps(type(exc).__name__))
else:
    print(json.dumps(a.WHERE))
"""


def test_fts002_advice_where_the_trunk_spec_path_is_not_this_library_says_what_it_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = own_spec_path_tree(tmp_path, forwarder=False)
    code, out, _ = run(capsys, "check", "--trunk", str(site / "triton"))
    assert code == 1
    (line,) = [x for x in out.splitlines() if "FTS002" in x]
    assert line.startswith(
        f"{site}/triton/backends/mthreads/spec/triton/language/extra/__init__.py:1:1"
    )
    assert f"calls the spec_path of {site}/triton/flagtree_spec.py, not flagtree_spec's" in line
    assert "FlagTree's own" in line and "never adds a package's trunk folders" in line
    assert "trunk modules libdevice cannot be imported" in line
    assert "'flagtree-spec adopt' does it" in line and "spec_path(__path__) does not help" in line
    # What it says is what happens: libdevice cannot be imported.
    run_python(IMPORT_LIBDEVICE, path=[site])  # no backend: imports
    out = run_python(IMPORT_LIBDEVICE, path=[site], env={"FLAGTREE_BACKEND": "mthreads"})
    assert out.stdout.strip().splitlines()[-1] == '"ModuleNotFoundError"'
    # And its advice for FlagTree's own file, taken word for word, works there.
    first, second = re.findall(r"call '(from flagtree_spec import inherit)' and '(.*?)'", line)[0]
    override = site / "triton/backends/mthreads/spec/triton/language/extra/__init__.py"
    override.write_text(f"{first}\n{second}\n")
    out = run_python(IMPORT_LIBDEVICE, path=[site], env={"FLAGTREE_BACKEND": "mthreads"})
    assert out.stdout.strip().splitlines()[-1] == '"trunk"'
    code, out, _ = run(capsys, "check", "--trunk", str(site / "triton"))
    assert "FTS002" not in out


def test_fts002_silent_for_the_same_override_under_the_forwarder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = own_spec_path_tree(tmp_path, forwarder=True)
    code, out, _ = run(capsys, "check", "--trunk", str(site / "triton"))
    assert code == 0 and "FTS002" not in out, out
    out = run_python(IMPORT_LIBDEVICE, path=[site], env={"FLAGTREE_BACKEND": "mthreads"})
    assert out.stdout.strip().splitlines()[-1] == '"trunk"'


def test_fts002_advice_for_an_override_without_spec_path_names_the_trunk_own_spec_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = own_spec_path_tree(tmp_path, forwarder=False)
    override = site / "triton/backends/mthreads/spec/triton/language/extra/__init__.py"
    override.write_text('WHERE = "mthreads"\n')
    code, out, _ = run(capsys, "check", "--trunk", str(site / "triton"))
    assert code == 1
    (line,) = [x for x in out.splitlines() if "FTS002" in x]
    assert "does not call spec_path(__path__)" in line
    assert f"The trunk's spec_path, from {site}/triton/flagtree_spec.py, would not help" in line
    assert "add 'spec_path(__path__)' to it" not in line
    out = run_python(IMPORT_LIBDEVICE, path=[site], env={"FLAGTREE_BACKEND": "mthreads"})
    assert out.stdout.strip().splitlines()[-1] == '"ModuleNotFoundError"'


def test_fts002_advice_names_the_trunk_own_spec_path_below_an_override_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # triton.language.extra's override calls no spec_path, so its path is the mirror folder
    # only and the override of extra.cuda has no lower version there; the trunk's own
    # extra/cuda/__init__.py tells which spec_path the trunk calls.
    site = own_spec_path_tree(tmp_path, forwarder=False)
    mirror = site / "triton/backends/mthreads/spec/triton/language/extra"
    (mirror / "__init__.py").write_text('WHERE = "mthreads"\n')
    trunk = site / "triton/language/extra/cuda"
    trunk.mkdir()
    (trunk / "__init__.py").write_text(
        "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
    )
    (trunk / "utils.py").write_text('WHERE = "trunk"\n')
    (mirror / "cuda").mkdir()
    (mirror / "cuda" / "__init__.py").write_text('WHERE = "mthreads"\n')
    code, out, _ = run(capsys, "check", "--trunk", str(site / "triton"))
    assert code == 1
    lines = [x for x in out.splitlines() if "FTS002" in x and "extra.cuda" in x]
    assert len(lines) == 1, out
    assert "trunk modules utils cannot be imported" in lines[0]
    assert f"The trunk's spec_path, from {site}/triton/flagtree_spec.py, would not help" in lines[0]


def test_the_spec_file_is_read_from_its_syntax_whatever_it_holds(tmp_path: Path) -> None:
    """Each kind of file a trunk may hold under FlagTree's names: the forwarder, a file of
    none of FlagTree's names, FlagTree's own in a variant never seen, and one that does not
    parse (no spec file at all, unless the other name holds one that does)."""
    from flagtree_spec._tools.model.flagtree import spec_file, spec_files

    rdir = tmp_path / "triton"
    rdir.mkdir()
    own = rdir / "_flagtree_spec.py"
    own.write_text("from flagtree_spec.flagtree import *  # noqa: F403\n")
    found = spec_file(str(rdir), "triton")
    assert found is not None and found.kind == "forwarder"
    assert found.describe("triton") == "_flagtree_spec.py forwards to flagtree_spec"
    own.write_text("VERSION = 1\n")
    found = spec_file(str(rdir), "triton")
    assert found is not None and found.kind == "other"
    assert found.describe("triton") == "_flagtree_spec.py defines none of FlagTree's names"
    own.write_text(
        "import importlib\n\n"
        "def spec(name, *args):\n"
        "    return getattr(importlib.import_module('elsewhere'), name)(*args)\n\n"
        "def spec_path(path):\n"
        "    pass\n"
    )
    found = spec_file(str(rdir), "triton")
    assert found is not None and (found.kind, found.variant) == ("flagtree", None)
    assert found.describe("triton") == (
        "_flagtree_spec.py is FlagTree's own (a variant not seen before): its spec_path puts "
        "no folder in front of a package's __path__ (found by searching __path__[0] for "
        "'/triton'), and its hooks come from elsewhere"
    )
    own.write_text("def spec(:\n")
    assert spec_file(str(rdir), "triton") is None and spec_files(str(rdir), "triton") == []
    (rdir / "flagtree_spec.py").write_text("from flagtree_spec.flagtree import *\n")
    assert [f.kind for f in spec_files(str(rdir), "triton")] == []  # the newer name fails
    own.unlink()
    assert [f.kind for f in spec_files(str(rdir), "triton")] == ["forwarder"]
