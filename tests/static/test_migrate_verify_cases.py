"""``migrate --verify`` that cannot be fooled, on the shapes that fooled it.

Each fixture under ``fixtures/migrate_verify/`` is a small checkout (trunk
``python/minitri``, backend ``acme``'s copy ``third_party/acme/python/minitri``
and, where the case needs one, the trunk the copy was made from,
``base/minitri``).  Each test migrates a committed copy of it with
``--apply`` (which imports the result next to the copy in fresh
interpreters and compares them, module by module) and checks what the
verification says, and where it matters runs the result against the copy.

The verifier itself is tested by planting faults into a correct migration
(``test_the_verifier_rejects_each_planted_non_equivalence``): each one must
be rejected, in the module that holds it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import as_migrated, git, run, tree_files
from cli_support import as_the_copy as copy_run
from conftest import FIXTURES

from flagtree_spec._tools.migrate import apply as migrate_apply
from flagtree_spec._tools.migrate.apply import apply
from flagtree_spec._tools.migrate.overlay import copy_overlay
from flagtree_spec._tools.migrate.plan import BaseTree, Plan, make_plan
from flagtree_spec._tools.migrate.verify import verify

CASES = FIXTURES / "migrate_verify"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"


def checkout(tmp_path: Path, case: str) -> Path:
    """The fixture of *case*, copied (links kept) and committed in git."""
    top = tmp_path / case
    shutil.copytree(CASES / case, top, symlinks=True)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "whole-tree copy")
    return top


def migrate(
    capsys: pytest.CaptureFixture[str], top: Path, *extra: str, code: int = 0
) -> dict[str, Any]:
    """``migrate --repo TOP -b acme --apply --format json EXTRA``: its report (exit *code*)."""
    argv = ["migrate", "--repo", str(top), "-b", "acme", *extra, "--apply", "--format", "json"]
    got, out, err = run(capsys, *argv)
    assert got == code, out + err
    data: dict[str, Any] = json.loads(out)
    return data


def as_the_copy(case: str, code: str) -> Any:
    return copy_run(CASES / case, code)


def differences(data: dict[str, Any]) -> dict[str, list[str]]:
    return {
        m["module"]: m["differences"]
        for m in data["verification"]["modules"]
        if m["differences"] and not m["expected"]
    }


def test_a_changed_literal_is_never_accepted_for_an_unrelated_module_of_trunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trunk's conf.DEBUG is False, the copy's True, and other.VERBOSE (False) is left
    # alone.  Without --add-spec-path no override loads: the verification must say so.
    top = checkout(tmp_path, "pooled_trunk_digests")
    data = migrate(capsys, top, "--minimize", code=1)
    found = differences(data)
    assert found["minitri.conf"][0].startswith("the override conf.py never loads")
    assert any(d.startswith("DEBUG: not the copy's") for d in found["minitri.conf"])
    assert data["verification"]["undone"] is True
    data = migrate(capsys, top, "--minimize", "--add-spec-path")
    assert data["verification"]["status"] == "equivalent"
    code = "import json, minitri\nprint(json.dumps([minitri.conf.DEBUG, minitri.other.VERBOSE]))"
    assert as_migrated(top, code) == [True, False] == as_the_copy("pooled_trunk_digests", code)


def test_an_absolute_star_import_rebinds_after_the_imports_it_follows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "absolute_star_rebinding"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top, "--minimize", "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    text = (top / MIRROR / "language" / "math.py").read_text()
    assert text.index("from minitri.language.c import f") < text.index(
        "from minitri.language.n import *"
    )
    code = "import json\nfrom minitri.language import math\nprint(json.dumps(math.g()))"
    assert as_migrated(top, code) == ["acme", "n"] == as_the_copy(case, code)


def test_nothing_imported_on_both_sides_is_static_only_and_what_was_compared_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The copy needs the backend's device library, which is not installed: every
    # module fails the same way as the copy, so nothing is compared.
    top = checkout(tmp_path, "nothing_imported")
    argv = ["migrate", "--repo", str(top), "-b", "acme", "--minimize", "--add-spec-path"]
    code, out, err = run(capsys, *argv, "--verify")
    assert code == 0, out + err
    assert (
        "verify: STATIC ONLY: nothing imported on both sides, so nothing was compared; 5 fail "
        "the same way as the copy and are not compared (minitri: ModuleNotFoundError: No "
        "module named 'acme_device_runtime'); only the static proof holds"
    ) in out
    assert "equivalent" not in out
    assert "warning: nothing imported on both sides" in err
    # Where the library is installed, four modules are compared, and the one that
    # fails on both sides (a profiler nobody has) is counted apart.
    monkeypatch.setenv("PYTHONPATH", str(top / "site"))
    data = migrate(capsys, top, "--minimize", "--add-spec-path")
    verification = data["verification"]
    assert verification["status"] == "equivalent"
    assert verification["compared"] == {
        "modules": 5,
        "compared": 4,
        "failing": 1,
        "fixed_by_trunk": 0,
        "names": 7,
        "deleted_by_trunk": 0,
        "stranded": 0,
        "trunks_changes": 0,
    }
    assert verification["reason"].startswith(
        "4 of 5 modules imported on both sides and match the copy (7 names compared); 1 fails "
        "the same way as the copy and is not compared (minitri.tools.profile: "
    )


def test_a_trunk_folder_that_is_a_link_keeps_its_files_in_the_copy_overlay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # python/minitri/_C -> ../../build/_C, and the copy has a real _C holding stubs.
    case = "symlinked_trunk_folder"
    top = checkout(tmp_path, case)
    assert (top / "python" / "minitri" / "_C").is_symlink()
    data = migrate(capsys, top, "--minimize", "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    assert data["verification"]["compared"]["compared"] == 3


def test_an_apply_that_cannot_finish_changes_nothing_and_says_how_to_finish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sparse checkout without third_party/acme/migrate-leftovers: git mv of the
    # root __init__ into it would fail after other files had moved.
    top = checkout(tmp_path, "pooled_trunk_digests")
    git(top, "sparse-checkout", "set", "--no-cone", "/python/", "/third_party/acme/python/")
    git(top, "sparse-checkout", "add", "/third_party/acme/backend/")
    (top / COPY / "__init__.py").write_text('"""minitri."""\n\nfrom . import conf, other\nX = 1\n')
    git(top, "commit", "-qam", "the root __init__ differs")
    before = tree_files(top)
    for _ in range(2):  # and again: the same answer, nothing changed
        code, out, err = run(capsys, "migrate", "--repo", str(top), "-b", "acme", "--apply")
        assert code == 2, out + err
        assert "lies outside the sparse checkout" in err
        assert "git sparse-checkout add third_party/acme/migrate-leftovers" in err
        assert tree_files(top) == before and git(top, "status", "--porcelain") == ""
    # A step that fails half-way (here: the disk is full) rolls back what was done.
    git(top, "sparse-checkout", "disable")

    def full(k: int) -> None:
        if k == 3:
            raise OSError(28, "No space left on device")

    migrate_apply.after_step = full
    try:
        code, out, err = run(capsys, "migrate", "--repo", str(top), "-b", "acme", "--apply")
    finally:
        migrate_apply.after_step = None
    assert code == 2, out + err
    assert "failed half-way (No space left on device) and was rolled back" in err
    assert tree_files(top) == before and git(top, "status", "--porcelain") == ""


def test_a_base_newer_than_trunk_or_off_its_history_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top = checkout(tmp_path, "base_newer_than_trunk")
    argv = ["migrate", "--repo", str(top), "-b", "acme", "--minimize"]
    code, out, err = run(capsys, *argv, "--base", str(top / "base" / "minitri"))
    assert code == 2, out + err
    assert "its __version__ 1.1.0 is later than trunk's 1.0.0, so it is newer than trunk" in err
    # A base that is a commit of another branch (not an ancestor of HEAD), given as a
    # folder, is refused as --base-rev refuses it.
    git(top, "checkout", "-qb", "side")
    jit = top / "python" / "minitri" / "runtime" / "jit.py"
    jit.write_text(jit.read_text() + "\n\ndef side():\n    return 1\n")
    git(top, "commit", "-qam", "a side branch")
    side = git(top, "rev-parse", "HEAD").strip()
    shutil.copytree(top / "python" / "minitri", tmp_path / "side" / "minitri")
    git(top, "checkout", "-q", "-")
    code, out, err = run(capsys, *argv, "--base", str(tmp_path / "side" / "minitri"))
    assert code == 2, out + err
    assert f"it is commit {side[:10]}'s trunk, which is not an ancestor of HEAD" in err
    code, out, err = run(capsys, *argv, "--base-rev", side)
    assert code == 2 and "is not an ancestor of HEAD" in err


def test_trunks_deletion_gives_way_to_a_module_kept_whole_by_a_later_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trunk deleted helper from amd/c3 (dropped: the copy's equals the base's); amd/c4,
    # kept whole because trunk's imports what the whole-kept c5 lacks, imports it.
    case = "cross_module_deletion"
    top = checkout(tmp_path, case)
    base = str(top / "base" / "minitri")
    data = migrate(capsys, top, "--minimize", "--base", base, "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    actions = {e["path"]: e["action"] for e in data["entries"]}
    assert actions["amd/c4.py"] == "move" and actions["amd/c3.py"] == "minimize"
    code = "import json\nfrom minitri.amd import c4\nprint(json.dumps([c4.use(), c4.device()]))"
    assert as_migrated(top, code) == ["helper", "acme"] == as_the_copy(case, code)


def test_a_kept_definition_calling_a_trunk_definition_that_cannot_take_the_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The copy's JITFunction (changed by both) calls KernelParam with 4 arguments;
    # trunk's KernelParam, changed by trunk only, takes 3.
    case = "kept_definition_calls_changed_trunk_definition"
    top = checkout(tmp_path, case)
    base = str(top / "base" / "minitri")
    data = migrate(capsys, top, "--minimize", "--base", base, "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    (entry,) = [e for e in data["entries"] if e["path"] == "runtime/jit.py"]
    assert entry["reason"].endswith("2 changed name(s): JITFunction, KernelParam")
    assert (
        "JITFunction: calls KernelParam with 4 positional arguments (line 15), which trunk's "
        "KernelParam(num, param, do_not_specialize) cannot take (takes 3 positional arguments "
        "but 4 were given); the copy's KernelParam(num, param, do_not_specialize, "
        "do_not_specialize_on_alignment) can: the override keeps the copy's KernelParam; merge "
        "by hand"
    ) in entry["notes"]
    code = """
        import json, minitri
        k = minitri.runtime.DEFAULT
        print(json.dumps([k.device, k.params[0].flags]))
    """
    assert as_migrated(top, code) == ["acme", [False, False]] == as_the_copy(case, code)


def test_names_imported_from_a_compiled_module_are_judged_without_importing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trunk's gluon.py imports minitri._C.libminitri.gluon_ir, a submodule the
    # extension registers when it loads (never a file).  The plan is the same with
    # the extension built, with only a non-Python folder _C, and with no _C at all.
    top = checkout(tmp_path, "compiled_module_imports")
    trunk = top / "python" / "minitri"
    fork, into = top / COPY, top / MIRROR

    def actions() -> dict[str, str]:
        plan = make_plan(str(fork), str(trunk), str(into), minimize_files=True)
        return {s.path: s.action for s in plan.steps}

    unbuilt = actions()
    (trunk / "_C" / "include").mkdir(parents=True)
    (trunk / "_C" / "include" / "libminitri.h").write_text("/* the build's headers */\n")
    headers = actions()
    shutil.copy(top / "build" / "libminitri.py", trunk / "_C" / "libminitri.py")
    built = actions()
    assert unbuilt == headers == built
    assert built["language/gluon.py"] == "minimize"
    git(top, "add", "-A")
    git(top, "commit", "-qm", "the compiled part, built")
    data = migrate(capsys, top, "--minimize", "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    code = "import json\nfrom minitri.language import gluon\nprint(json.dumps(gluon.layout()))"
    assert as_migrated(top, code) == "acme"


def test_a_name_trunk_deleted_stays_deleted_where_only_base_identical_code_imports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The copy's root __init__ (kept in migrate-leftovers) equals the base's and
    # imports old_name, which trunk deleted from runtime/driver.py.
    top = checkout(tmp_path, "root_init_equal_to_the_base")
    base = str(top / "base" / "minitri")
    data = migrate(capsys, top, "--minimize", "--base", base, "--add-spec-path")
    assert data["verification"]["status"] == "equivalent", data["verification"]
    (entry,) = [e for e in data["entries"] if e["path"] == "runtime/driver.py"]
    assert (
        "old_name: trunk deleted it since the base: the override leaves it deleted"
        in (entry["notes"])
    )
    code = """
        import json
        from minitri.runtime import driver
        print(json.dumps([driver.active(), hasattr(driver, "old_name")]))
    """
    assert as_migrated(top, code) == ["acme", False]


FAULTS = {
    # name: (file, what to replace, by what, the module that must differ, what it says)
    "a changed literal left to trunk": (
        f"{MIRROR}/conf.py",
        "DEBUG = True\n",
        "",
        "minitri.conf",
        "DEBUG: not the copy's (True vs False)",
    ),
    "a lost star rebinding": (
        f"{MIRROR}/language/math.py",
        "from minitri.language.n import *  # noqa: F403\n",
        "",
        "minitri.language.math",
        "f: the backend left it alone, so trunk's may stand, but it is neither",
    ),
    "a lost trunk-deleted name": (
        f"{MIRROR}/runtime/jit.py",
        "from .driver import old_name\n",
        "",
        "minitri.runtime.jit",
        "its functions read old_name, which the spec tree's module does not bind",
    ),
    "an override that never loads": (
        "python/minitri/runtime/__init__.py",
        "    spec_path(__path__)\n",
        "    pass\n",
        "minitri.runtime.jit",
        "the override runtime/jit.py never loads",
    ),
}


def applied_with_base(tmp_path: Path, case: str) -> tuple[Path, Plan, str, BaseTree]:
    """*case* migrated with --minimize against its base and applied with --add-spec-path,
    not yet verified: its checkout, the plan, the copy overlay and the base."""
    top = checkout(tmp_path, case)
    trunk = top / "python" / "minitri"
    base = BaseTree(str(trunk), str(top / "base" / "minitri"), None)
    plan = make_plan(str(top / COPY), str(trunk), str(top / MIRROR), minimize_files=True, base=base)
    overlay = copy_overlay(plan, str(tmp_path / "overlay"))
    apply(plan, add_spec_path=True)
    return top, plan, overlay, base


def test_the_verifier_rejects_each_planted_non_equivalence(tmp_path: Path) -> None:
    top, plan, overlay, base = applied_with_base(tmp_path, "planted_faults")
    env = {"FLAGTREE_BACKEND": "acme"}
    correct = verify(plan, overlay, env, base=base)
    assert correct.status == "equivalent", correct
    assert correct.counts == {
        "modules": 10,
        "compared": 10,
        "failing": 0,
        "fixed_by_trunk": 0,
        "names": 22,
        "deleted_by_trunk": 0,
        "stranded": 0,
        "trunks_changes": 0,
    }
    for fault, (rel, old, new, module, says) in FAULTS.items():
        path = top / rel
        text = path.read_text()
        assert old in text, fault
        path.write_text(text.replace(old, new))
        try:
            found = verify(plan, overlay, env, base=base)
        finally:
            path.write_text(text)
        assert found.status == "differs", fault
        wrong = {m["module"]: m["differences"] for m in found.modules if m["differences"]}
        assert any(d.startswith(says) for d in wrong.get(module, ())), (fault, wrong)


def test_an_added_init_over_a_namespace_package_is_refused_saying_where_its_code_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top = tmp_path / "repo"
    shutil.copytree(FIXTURES / "migrate_cases" / "added_init_over_namespace_package", top)
    init = top / COPY / "_C" / "__init__.py"
    assert init.read_text().strip() == ""  # as FlagTree's cambricon copy has it
    argv = ("migrate", "--repo", str(top), "-b", "acme")
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert "it holds no code, so nothing is lost: delete it from the copy, then run again" in err
    init.write_text('"""Compiled parts."""\n\nACME_LIB = "libacme.so"\n')
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert (
        f"its code (line 3) goes into a module beside it in the mirror ({top / MIRROR}/_C/"
        "<name>.py, a portion of the namespace package, imported by its full name) or into the "
        "backend's hook module"
    ) in err


@pytest.mark.parametrize("base", [False, True], ids=["no-base", "base"])
def test_a_copied_module_that_can_never_import_leaves_trunks_importers_working(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: bool
) -> None:
    # The copy's tools/disasm.py imports minitri.common, which exists nowhere; the
    # copy's compiler does not import it, trunk's does when it loads.
    case = "copy_module_that_cannot_import"
    top = checkout(tmp_path, case)
    extra = ("--base", str(top / "base" / "minitri")) if base else ()
    data = migrate(capsys, top, "--minimize", *extra, "--add-spec-path")
    verification = data["verification"]
    assert verification["status"] == "equivalent", verification
    (entry,) = [e for e in data["entries"] if e["path"] == "tools/disasm.py"]
    if base:  # the copy holds the base's version: trunk's fix is what runs
        assert entry["action"] == "drop"
        assert verification["compared"]["fixed_by_trunk"] == 1
    else:
        assert entry["action"] == "keep"
        assert entry["reason"].startswith(
            "the copy's version imports minitri.common.backend (line 3), which exists nowhere"
        )
        assert (top / "third_party/acme/migrate-leftovers/minitri/tools/disasm.py").is_file()
    code = "import json, minitri\nprint(json.dumps(minitri.compiler.compile('k')))"
    assert as_migrated(top, code) == ["acme", "k"] == as_the_copy(case, code)


def test_a_name_trunk_added_that_re_exports_a_definition_is_judged_where_it_is_defined() -> None:
    # Trunk's language/__init__ gained "from .core import advance"; the copy's lacks
    # it and its core.py (kept) defines its own advance: the new tree's
    # language.advance is the copy's core.advance, judged in core.
    from flagtree_spec._tools.migrate.compare import Facts, Sides, judge

    def report(names: dict[str, str], origins: dict[str, str]) -> dict[str, Any]:
        return {"names": names, "origins": origins, "file": ""}

    mine, theirs = "def advance 1111", "def advance 2222"
    lang, core = "minitri.language", "minitri.language.core"
    sides = Sides(
        copy={
            lang: report({}, {}),
            core: report({"advance": mine}, {"advance": f"{core}:advance"}),
        },
        trunk={
            lang: report({"advance": theirs}, {"advance": f"{core}:advance"}),
            core: report({"advance": theirs}, {"advance": f"{core}:advance"}),
        },
        new={
            lang: report({"advance": mine}, {"advance": f"{core}:advance"}),
            core: report({"advance": mine}, {"advance": f"{core}:advance"}),
        },
        facts={
            lang: Facts({}, {"advance": "import"}, False, None),
            core: Facts({"advance": "def 1"}, {"advance": "def 2"}, False, None),
        },
    )
    assert judge(lang, sides).differences == []
    assert judge(core, sides).differences == []
    # From another module than trunk's statement names, it is not trunk's addition.
    sides.new[lang]["origins"]["advance"] = "minitri.other:advance"
    assert judge(lang, sides).differences == [
        "advance: a name the copy never had (def advance 1111)"
    ]


def test_modules_left_behind_by_a_root_that_fails_on_both_sides_are_not_evidence() -> None:
    # Where the root package fails to import on both sides (the copy needs a compiled
    # part that is not here), a submodule may still be in sys.modules on one side only,
    # left by the failed import in an order the two root __init__ files decide.
    from flagtree_spec._tools.migrate.steps import Plan
    from flagtree_spec._tools.migrate.verify import verdict

    plan = Plan("/f/minitri", "/t/minitri", "/i/minitri", "/l", [], [], [], [], True)
    modules = ["minitri", "minitri.runtime", "minitri.tools"]
    failed = {"error": "ImportError: cannot import name 'mlu' from 'minitri._C.libminitri'"}
    names: dict[str, Any] = {"names": {"x": "1"}, "file": ""}
    copy = {"minitri": failed, "minitri.runtime": names, "minitri.tools": names}
    new = {"minitri": failed, "minitri.runtime": failed, "minitri.tools": names}
    found = verdict(plan, modules, copy, {"minitri": {"names": {}}}, new, {})
    assert found.status == "equivalent", found.reason
    assert found.counts is not None and found.counts["stranded"] == 1
    assert "1 imports on one side only, left behind by the root package's failed import" in (
        found.reason
    )
    # Where the root imports, the same one-sided failure is a difference.
    copy["minitri"] = new["minitri"] = names
    found = verdict(plan, modules, copy, {"minitri": {"names": {}}}, new, {})
    assert found.status == "differs"
    assert found.modules[1]["differences"] == [
        "imports as the copy, fails from trunk and the spec tree: " + failed["error"]
    ]


def test_differences_that_trunks_changes_since_the_base_make_are_counted_as_such(
    tmp_path: Path,
) -> None:
    """Trunk's newer loader (Triton 3.2's ``language/extra/__init__``: every package found
    on ``__path__``, executed by hand) sets no submodule attribute on the backend's added
    package and computes another ``__all__``; the backend left that module alone, so its
    trunk's version is what the migration must bring.  The merged copy (the copy with
    trunk's version of the modules the backend left alone) differs from the copy the same
    way: those differences are trunk's changes, not the migration's; a planted fault is
    still rejected with that side in use."""
    top, plan, overlay, base = applied_with_base(tmp_path, "trunks_newer_loader")
    trunk = top / "python" / "minitri"
    env = {"FLAGTREE_BACKEND": "acme"}
    found = verify(plan, overlay, env, base=base)
    assert found.status == "equivalent", found
    by_trunk = {m["module"]: m["differences"] for m in found.modules if m["trunks_change"]}
    assert sorted(by_trunk) == ["minitri.language.extra", "minitri.language.extra.accel"]
    assert (
        "__all__: the backend left it alone, so trunk's may stand, but it is neither "
        "trunk's (list[]) nor the copy's (list['accel']): list['minitri.language.extra.accel']"
    ) in by_trunk["minitri.language.extra"]
    assert by_trunk["minitri.language.extra.accel"] == [
        "utils: the copy has it, trunk and the spec tree lose it"
    ]
    assert found.counts is not None and found.counts["trunks_changes"] == 2
    assert found.reason.startswith("5 of 7 modules imported on both sides and match the copy")
    assert "; 2 differ from the copy only as the copy with trunk's changes" in found.reason
    # The backend's own change still has to load: without the root's spec_path call the
    # override of conf never does, and the merged copy (which holds it) says so.
    init = trunk / "__init__.py"
    text = init.read_text()
    assert "spec_path(__path__)" in text
    init.write_text(text.replace("spec_path(__path__)", "pass"))
    planted = verify(plan, overlay, env, base=base)
    assert planted.status == "differs", planted
    wrong = {m["module"]: m["differences"] for m in planted.modules if m["differences"]}
    assert any("never loads" in d for d in wrong["minitri.conf"]), wrong
    assert not any(m["trunks_change"] for m in planted.modules if m["module"] == "minitri.conf")


def _table_sides(helper_changed: bool, origin: str = "p.lib:f", masked: str = "") -> Any:
    """Reports of module ``p.m`` holding ``T = [f]``, ``f`` defined in ``p.lib``, whose
    code is trunk's newer ``f`` in the new tree; *helper_changed*: the backend changed
    ``p.lib.f`` itself (its copy's binding differs from the base's)."""
    from flagtree_spec._tools.migrate.compare import Facts, Sides

    def table(digest: str, where: str = "p.lib:f", shown: str = "") -> dict[str, Any]:
        return {
            "names": {"T": f"list[{digest}]"},
            "references": {
                "T": {"masked": shown or f"list[ref {where}]", "items": [[0, where, digest]]}
            },
        }

    copy = {"p.m": table("old f"), "p.lib": {"names": {"f": "old f"}}}
    new = {"p.m": table("new f", origin, masked), "p.lib": {"names": {"f": "new f"}}}
    trunk = {"p.lib": {"names": {"f": "new f"}}}
    lib = Facts({"f": "changed" if helper_changed else "same"}, {"f": "same"}, True, None)
    facts = {"p.m": Facts({"T": "t"}, {"T": "t"}, True, None), "p.lib": lib}
    return Sides(copy, trunk, new, facts)


def test_a_table_of_definitions_holds_trunks_function_only_where_the_backend_left_it() -> None:
    """``T = [f]`` whose ``f`` is trunk's newer one in its own module is trunk's change;
    the same table where the backend changed ``f``, where the item now comes from another
    module, or where the table's other items differ, is not."""
    from flagtree_spec._tools.migrate.compare import judge

    assert judge("p.m", _table_sides(helper_changed=False)).differences == []
    for sides in (
        _table_sides(helper_changed=True),
        _table_sides(helper_changed=False, origin="p.other:f"),
        _table_sides(helper_changed=False, masked="list[ref p.lib:f, 3]"),
    ):
        found = judge("p.m", sides).differences
        assert len(found) == 1 and found[0].startswith("T: not the copy's"), found


def test_the_merged_copy_never_excuses_a_module_that_fails_or_a_name_the_backend_binds(
    tmp_path: Path,
) -> None:
    """Trunk deleted ``foo`` from ``lib`` (which the backend left alone) while the backend's
    ``user`` still imports it: the migration keeps ``foo`` in an override of ``lib``.  The
    merged copy (trunk's ``lib``) fails to import ``user`` exactly as a migration that lost
    ``foo`` would, and must not excuse it; nor a changed value of a name a statement of
    the backend's module binds."""
    top, plan, overlay, base = applied_with_base(tmp_path, "trunk_deleted_name_still_imported")
    env = {"FLAGTREE_BACKEND": "acme"}
    assert verify(plan, overlay, env, base=base).status == "equivalent"
    mirror = top / MIRROR
    kept = (mirror / "lib.py").read_text()
    assert "def foo():" in kept
    (mirror / "lib.py").write_text(kept.replace("def foo():\n    return 1\n", ""))
    lost = verify(plan, overlay, env, base=base)
    assert lost.status == "differs", lost
    user = next(m for m in lost.modules if m["module"] == "minitri.user")
    assert (
        user["new"].startswith("ImportError: cannot import name 'foo'")
        and not user["trunks_change"]
    )
    (mirror / "lib.py").write_text(kept)
    own = (mirror / "user.py").read_text()
    (mirror / "user.py").write_text(own.replace("foo() + 10", "foo() + 11"))
    changed = verify(plan, overlay, env, base=base)
    assert changed.status == "differs", changed
    assert [m["module"] for m in changed.modules if m["differences"]] == ["minitri.user"]
