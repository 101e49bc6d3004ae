"""Each check code on its fixture tree under fixtures/check/, through the command line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from flagtree_spec._cli import main

# The commands print absolute paths from there (text shows paths below the working folder
# relative to it: tests/static/test_output.py).
pytestmark = pytest.mark.usefixtures("outside_the_trees")

CHECK = Path(__file__).resolve().parent.parent.parent / "fixtures" / "check"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def findings(
    capsys: pytest.CaptureFixture[str], scenario: str, *extra: str
) -> tuple[int, list[Any]]:
    repo = CHECK / scenario
    code, out, _ = run(
        capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json", *extra
    )
    found: list[Any] = json.loads(out)["findings"]
    return code, found


def spec(scenario: str, *parts: str) -> str:
    return str(CHECK / scenario / "third_party" / "vendor" / "backend" / "spec" / Path(*parts))


def trunk(scenario: str, root: str, *parts: str) -> str:
    return str(CHECK / scenario / "python" / root / Path(*parts))


def only(found: list[Any], code: str) -> list[tuple[str, str, int, int]]:
    return [(f["severity"], f["path"], f["line"], f["col"]) for f in found if f["code"] == code]


def test_fts001_dead_override_package_never_specialised(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts001_dead_override")
    assert only(found, "FTS001") == [
        ("error", spec("fts001_dead_override", "deadpkg/plain/mod.py"), 1, 1)
    ]
    assert "deadpkg.plain never calls spec_path" in found[0]["message"]
    assert code == 1


def test_fts002_package_init_override_hides_trunk_modules_and_root_init_never_loads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts002_init_override")
    assert only(found, "FTS002") == [
        ("error", spec("fts002_init_override", "initpkg/__init__.py"), 1, 1),
        ("error", spec("fts002_init_override", "initpkg/sub/__init__.py"), 1, 1),
    ]
    hidden = next(f["message"] for f in found if f["path"].endswith("sub/__init__.py"))
    assert "trunk modules b cannot be imported" in hidden
    assert code == 1


def test_fts002_is_silent_in_auto_mode_where_every_package_is_specialised(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, found = findings(capsys, "fts002_init_override", "--auto")
    assert [f["path"] for f in found if f["code"] == "FTS002"] == [
        spec("fts002_init_override", "initpkg/__init__.py")
    ]


def test_fts003_override_identical_by_ast_to_trunk(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts003_identical")
    assert only(found, "FTS003") == [("warning", spec("fts003_identical", "samepkg/util.py"), 1, 1)]
    assert code == 0  # warnings only


def test_fts004_names_imported_relatively_and_absolutely_missing_from_override(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts004_missing_name")
    core = spec("fts004_missing_name", "namepkg/language/core.py")
    user = spec("fts004_missing_name", "namepkg/user.py")
    assert only(found, "FTS004") == [
        ("error", core, 1, 1),
        ("error", core, 1, 1),
        ("error", user, 2, 1),
    ]
    messages = [f["message"] for f in found if f["code"] == "FTS004"]
    assert "'async_task'" in messages[0] and "semantic.py:1" in messages[0]  # from .core import
    assert "'helper'" in messages[1] and "tools.py:1" in messages[1]  # from namepkg.language.core
    assert "'absent'" in messages[2]  # an override importing what trunk lacks
    assert code == 1


def test_fts005_public_names_of_shadowed_module_missing(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts005_api_drift")
    assert only(found, "FTS005") == [("warning", spec("fts005_api_drift", "driftpkg/api.py"), 1, 1)]
    message = found[0]["message"]
    assert (
        "compile_kernel" in message
        and "_private" not in message
        and "os" not in message.split(":")[-1]
    )
    assert code == 0


def test_fts006_override_of_name_excluded_by_declaration_or_spec_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts006_excluded")
    assert only(found, "FTS006") == [
        ("error", spec("fts006_excluded", "exclpkg/_C.py"), 1, 1),
        ("error", spec("fts006_excluded", "exclpkg/kernels.py"), 1, 1),
    ]
    assert "flagtree_spec.json" in found[0]["message"]
    assert "spec_path exclude 'kernels'" in found[1]["message"]
    assert code == 1


def test_fts007_override_derives_paths_from_own_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts007_own_file")
    assert only(found, "FTS007") == [
        ("warning", spec("fts007_own_file", "filepkg/paths.py"), 4, 37)
    ]
    assert code == 0


def test_fts007_in_an_inheriting_override_says_which_file_each_read_sees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts007_inherit_file")
    path = spec("fts007_inherit_file", "ifpkg/paths.py")
    assert only(found, "FTS007") == [
        ("warning", path, 5, 23),  # before inherit(): the override's own file
        ("warning", path, 7, 25),  # after inherit(): the lower file
        ("warning", path, 10, 28),  # a default value: runs at import time, after inherit()
        ("warning", path, 11, 41),  # in a function: the lower file
    ]
    messages = [f["message"] for f in found if f["code"] == "FTS007"]
    assert messages[0].startswith("reads __file__ before inherit(), where it is this override's")
    assert messages[1].startswith("reads __file__ after inherit(): it is then the lower version's")
    assert messages[2].startswith("reads __file__ after inherit()")
    assert messages[3].startswith("reads __file__ in a function, which runs after inherit()")
    for message in messages[1:]:
        assert f"({trunk('fts007_inherit_file', 'ifpkg', 'paths.py')})" in message
    for message in messages:
        assert "__spec__.origin" in message and "trunk_path" in message
    assert code == 0


def test_fts007_names_the_lowest_version_of_an_inheriting_chain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(CHECK / "fts007_inherit_file", repo)
    base = repo / "third_party" / "base" / "backend" / "spec" / "ifpkg"
    base.mkdir(parents=True)
    (base / "paths.py").write_text("from flagtree_spec import inherit\ninherit(globals())\n")
    code, out, _ = run(
        capsys, "check", "--repo", str(repo), "-b", "vendor,base", "--format", "json"
    )
    messages = [f["message"] for f in json.loads(out)["findings"] if f["code"] == "FTS007"]
    assert len(messages) == 4
    assert f"({repo / 'python' / 'ifpkg' / 'paths.py'})" in messages[1]
    assert code == 0


def test_fts007_in_an_inheriting_added_module_says_there_is_no_lower_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(CHECK / "fts007_inherit_file", repo)
    added = repo / "third_party" / "vendor" / "backend" / "spec" / "ifpkg" / "added.py"
    added.write_text("from flagtree_spec import inherit\ninherit(globals())\nHERE = __file__\n")
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor", "--format", "json")
    found = json.loads(out)["findings"]
    assert [f["message"] for f in found if f["code"] == "FTS007" and f["path"] == str(added)] == [
        "reads __file__ after inherit(): it is then the lower version's file (none: inherit() "
        "fails here, there is no lower version), not this override's; use "
        "os.path.dirname(__spec__.origin) for the override's own folder and "
        "flagtree_spec.trunk_path(__package__, ...) for trunk data"
    ]
    assert sorted(f["code"] for f in found if f["path"] == str(added)) == ["FTS007", "FTS017"]
    assert code == 1  # FTS017 is an error


def test_fts008_module_added_by_backend_is_info(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts008_added")
    assert only(found, "FTS008") == [("info", spec("fts008_added", "addpkg/vendor_only.py"), 1, 1)]
    assert code == 0


def test_fts009_hook_called_but_undefined_is_info_defined_but_uncalled_is_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts009_hooks")
    assert only(found, "FTS009") == [
        ("info", trunk("fts009_hooks", "hookpkg", "__init__.py"), 8, 10),
        ("warning", spec("fts009_hooks", "__init__.py"), 5, 1),
    ]
    assert "'atomic_add_int64'" in found[0]["message"] and "'init_languge'" in found[1]["message"]
    assert code == 0


def test_fts010_override_that_does_not_parse_or_decode(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts010_does_not_parse")
    assert only(found, "FTS010") == [
        ("error", spec("fts010_does_not_parse", "parsepkg/broken.py"), 3, 7),
        ("error", spec("fts010_does_not_parse", "parsepkg/latin.py"), 2, 12),
    ]
    assert "ascii" in found[1]["message"] and "PEP 263" in found[1]["message"]
    assert code == 1


def test_fts011_compiled_files_in_mirror_tree(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts011_compiled")
    assert only(found, "FTS011") == [
        ("error", spec("fts011_compiled", "binpkg/fast.so"), 1, 1),
        ("error", spec("fts011_compiled", "binpkg/helper.pyc"), 1, 1),
    ]
    assert code == 1


def test_fts013_override_also_imported_through_hook_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts013_hook_import")
    assert only(found, "FTS013") == [("error", spec("fts013_hook_import", "__init__.py"), 1, 1)]
    assert "dualpkg.runtime.autotuner" in found[0]["message"]
    assert code == 1


def test_fts014_symlink_leaving_spec_root(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "fts014_symlink")
    assert only(found, "FTS014") == [("warning", spec("fts014_symlink", "linkpkg/shared.py"), 1, 1)]
    assert code == 0


def test_noqa_comment_suppresses_named_code_only(capsys: pytest.CaptureFixture[str]) -> None:
    _, found = findings(capsys, "noqa_suppressed")
    assert found == []
    _, found = findings(capsys, "fts003_identical")
    assert [f["code"] for f in found] == ["FTS003"]  # no comment there: reported


def test_select_and_ignore_filter_codes_and_decide_exit_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts004_missing_name", "--select", "FTS005,FTS008")
    assert sorted({f["code"] for f in found}) == ["FTS005", "FTS008"]
    assert code == 0
    code, found = findings(capsys, "fts004_missing_name", "--ignore", "FTS004")
    assert "FTS004" not in {f["code"] for f in found}
    assert code == 0
    code, found = findings(capsys, "fts004_missing_name", "--select", "FTS00")
    assert code == 1


def test_clean_tree_has_no_findings_and_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = findings(capsys, "clean")
    assert (code, found) == (0, [])


def test_text_output_is_path_line_col_code_message(capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(CHECK / "fts007_own_file")
    code, out, _ = run(capsys, "check", "--repo", repo, "-b", "vendor")
    assert out.startswith(spec("fts007_own_file", "filepkg/paths.py") + ":4:37: FTS007 derives")
    assert code == 0


def test_github_format_emits_workflow_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(CHECK / "fts001_dead_override")
    code, out, _ = run(capsys, "check", "--repo", repo, "-b", "vendor", "--format", "github")
    path = spec("fts001_dead_override", "deadpkg/plain/mod.py")
    assert out.startswith(f"::error file={path},line=1,col=1,title=FTS001::")
    assert code == 1


def test_unknown_select_code_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "--repo", str(CHECK / "clean"), "--select", "E501")
    assert code == 2 and "'E501' is not a check code" in err


def test_every_documented_code_has_a_fixture() -> None:
    from flagtree_spec._tools.check.driver import CODES

    scenarios = {p.name.split("_")[0].upper() for p in CHECK.iterdir()}
    assert set(CODES) <= scenarios
    assert os.path.islink(spec("fts014_symlink", "linkpkg/shared.py"))


def test_override_shadowed_by_a_higher_backend_is_not_dead_but_is_still_parsed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "stacked_backends"
    high = str(repo / "third_party/high/backend/spec/stackpkg/mod.py")
    low = str(repo / "third_party/low/backend/spec/stackpkg/mod.py")
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "high,low", "--format", "json")
    found = json.loads(out)["findings"]
    # Parsed (FTS010), and never run: the higher override does not inherit (FTS021).
    assert [(f["code"], f["path"], f["line"], f["col"]) for f in found] == [
        ("FTS021", low, 1, 1),
        ("FTS010", low, 1, 12),
    ]
    assert code == 1
    code, out, _ = run(capsys, "list", "--repo", str(repo), "-b", "high", "-b", "low")
    assert out.splitlines() == [
        f"override  stackpkg.mod  {high}  (shadows {low})",
        f"shadowed  stackpkg.mod  {low}",
    ]
    assert code == 0


def test_check_without_a_backend_checks_the_backends_of_the_repository_not_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "check", "--repo", str(CHECK / "fts009_hooks"))
    assert code == 0
    assert "FTS009" in out
    assert "checking every backend of the repository: vendor" in err


def test_check_of_a_trunk_without_a_backend_or_spec_root_exits_2_saying_nothing_was_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trunk = CHECK / "fts009_hooks" / "python" / "hookpkg"
    code, out, err = run(capsys, "check", "--trunk", str(trunk))
    assert (code, out) == (2, "")
    assert "no spec root for hookpkg (backend stack none, no backend set)" in err
    assert "nothing was checked" in err


SPEC = "from flagtree_spec import spec_path\nspec_path(__path__)\n"
VENDOR = "third_party/vendor/backend/spec/"


def make(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_fts010_hook_module_that_does_not_parse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            VENDOR + "__init__.py": "def hook(:\n",
            VENDOR + "hpkg/added.py": "",
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert out.splitlines()[0] == (
        f"{tmp_path / VENDOR / '__init__.py'}:1:10: FTS010 hook module does not parse: "
        "invalid syntax"
    )
    assert code == 1


@pytest.mark.parametrize("hooks", ["hooks.py", "hooks"])
def test_fts009_reads_a_declared_hook_module_or_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, hooks: str
) -> None:
    hook_file = "hooks.py" if hooks == "hooks.py" else "hooks/__init__.py"
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC + "from flagtree_spec import spec\nspec('used')\n",
            VENDOR + "flagtree_spec.json": json.dumps({"hooks": hooks}),
            VENDOR + hook_file: "def used():\n    pass\n\n\ndef unused():\n    pass\n",
            VENDOR + "hpkg/mod.py": "",
        },
    )
    code, out, _ = run(
        capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--select", "FTS009,FTS013"
    )
    assert out.startswith(f"{tmp_path / VENDOR / hook_file}:5:1: FTS009 hook 'unused' is defined")
    assert len(out.splitlines()) == 1
    assert code == 0


def test_fts013_only_for_imports_that_reach_an_override_through_the_hook_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            "python/hpkg/mod.py": "X = 1\n",
            VENDOR
            + "__init__.py": "from os import path\nfrom .hpkg import mod\nfrom . import hpkg\n",
            VENDOR + "helpers/__init__.py": "",
            VENDOR + "helpers/util.py": "from ..hpkg.mod import X\nfrom ..hpkg import gone\n",
            VENDOR + "helpers/notes.txt": "from .hpkg import mod\n",
            VENDOR + "hpkg/mod.py": "X = 2\n",
        },
    )
    code, out, _ = run(
        capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--select", "FTS013"
    )
    assert [line.split(": FTS013")[0] for line in out.splitlines()] == [
        f"{tmp_path / VENDOR / '__init__.py'}:2:1",
        f"{tmp_path / VENDOR / 'helpers/util.py'}:1:1",
    ]
    assert code == 1


def test_trunk_input_error_is_reported_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC + "def broken(:\n",
            VENDOR + "hpkg/mod.py": "",
        },
    )
    code, _, err = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    init = tmp_path / "python/hpkg/__init__.py"
    assert err.count(f"{init}:3:12: input error: does not parse") == 1
    assert code == 2


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("  # noqa", True),
        ("  #noqa:FTS003", True),
        ("  # noqa: FTS005, FTS003", True),
        ("  # noqa: FTS005", False),
        ("  # a comment", False),
    ],
)
def test_noqa_forms_on_the_finding_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, comment: str, suppressed: bool
) -> None:
    make(
        tmp_path,
        {
            "python/qpkg/__init__.py": SPEC,
            "python/qpkg/util.py": "X = 1\n",
            VENDOR + "qpkg/util.py": f"X = 1{comment}\n",  # AST-identical: FTS003 on line 1
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert out == (
        ""
        if suppressed
        else f"{tmp_path / VENDOR / 'qpkg/util.py'}:1:1: FTS003 "
        + (
            f"identical to the module it shadows ({tmp_path / 'python/qpkg/util.py'}); "
            "delete the override\n"
        )
    )
    assert code == 0


def test_fts011_reports_extension_modules_built_for_another_interpreter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/cpkg/__init__.py": SPEC,
            VENDOR + "cpkg/fast.cpython-38-x86_64-linux-gnu.so": "",
            VENDOR + "cpkg/win.cp38-win_amd64.pyd": "",
            VENDOR + "cpkg/not-a-module.so": "",
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--format", "json")
    found = json.loads(out)["findings"]
    assert only(found, "FTS011") == [
        ("error", str(tmp_path / VENDOR / "cpkg/fast.cpython-38-x86_64-linux-gnu.so"), 1, 1),
        ("error", str(tmp_path / VENDOR / "cpkg/win.cp38-win_amd64.pyd"), 1, 1),
    ]
    assert code == 1


def test_fts001_under_a_namespace_package_names_the_package_that_is_not_specialised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/npkg/__init__.py": SPEC,
            "python/npkg/plain/__init__.py": "",
            "python/npkg/plain/ns/mod.py": "X = 1\n",
            VENDOR + "npkg/plain/ns/mod.py": "X = 2\n",
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--format", "json")
    found = json.loads(out)["findings"]
    assert only(found, "FTS001") == [
        ("error", str(tmp_path / VENDOR / "npkg/plain/ns/mod.py"), 1, 1)
    ]
    assert "package npkg.plain never calls spec_path(__path__)" in found[0]["message"]
    assert code == 1


def test_fts004_skips_imports_only_type_checkers_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/tpkg/__init__.py": SPEC,
            "python/tpkg/core.py": "class Tensor: pass\n",
            "python/tpkg/user.py": (
                "import typing\nfrom typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from .core import Tensor\n"
                "if typing.TYPE_CHECKING:\n    from .core import Tensor as T\n"
                "else:\n    from .core import Missing\n"
                "def f():\n    if TYPE_CHECKING:\n        from .core import Hidden\n"
                "    else:\n        pass\n"
            ),
            VENDOR + "tpkg/core.py": "class Other: pass\n",
        },
    )
    code, out, _ = run(
        capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--select", "FTS004"
    )
    assert out.splitlines() == [
        f"{tmp_path / VENDOR / 'tpkg/core.py'}:1:1: FTS004 does not define 'Missing', which "
        f"{tmp_path / 'python/tpkg/user.py'}:8 imports from it; define it or call "
        "inherit(globals())"
    ]
    assert code == 1


def test_fts017_inherit_without_lower_version_names_the_close_trunk_module(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts017_inherit_without_lower"
    code, found = findings(capsys, scenario)
    assert only(found, "FTS017") == [
        ("error", spec(scenario, "inhlpkg/extras.py"), 4, 1),
        ("error", spec(scenario, "inhlpkg/nsdir/__init__.py"), 4, 1),
        ("error", spec(scenario, "inhlpkg/opps.py"), 4, 1),
    ]
    messages = {Path(f["path"]).name: f["message"] for f in found if f["code"] == "FTS017"}
    ops = trunk(scenario, "inhlpkg", "ops.py")
    assert f"did you mean inhlpkg.ops ({ops})? Rename this file" in messages["opps.py"]
    assert "importing it raises SpecError" in messages["opps.py"]
    assert "did you mean" not in messages["extras.py"]
    assert "delete the inherit() call" in messages["extras.py"]
    assert "a mirror folder's __init__.py is a package-init override" in messages["__init__.py"]
    # An inheriting module with nothing below is not reported as an added module.
    assert not only(found, "FTS008")
    assert code == 1


def test_fts018_python_file_outside_mirror_tree_and_hook_package_names_the_path_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = "fts018_stray_file"
    code, found = findings(capsys, scenario)
    # A file meant as an override (the path it names) can never load: an error; another
    # file (a script, say) is a warning.
    assert only(found, "FTS018") == [
        ("error", spec(scenario, "straypk/sub/calc.py"), 1, 1),
        ("error", spec(scenario, "sub/calc.py"), 1, 1),
        ("warning", spec(scenario, "tools/regen.py"), 1, 1),
    ]
    messages = {f["path"]: f["message"] for f in found if f["code"] == "FTS018"}
    meant = spec(scenario, "straypkg/sub/calc.py")
    # The root package's level left out, or misspelled: the path it probably meant.
    assert messages[spec(scenario, "sub/calc.py")].endswith(f"did you mean {meant}?")
    assert messages[spec(scenario, "straypk/sub/calc.py")].endswith(f"did you mean {meant}?")
    assert "an override goes into the mirror tree" in messages[spec(scenario, "tools/regen.py")]
    # helpers.py is imported by the hook package; kernel.h and NOTES.txt are not judged.
    assert spec(scenario, "helpers.py") not in messages
    assert code == 1


def test_fts018_skips_files_that_the_hook_package_imports_through_subpackages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            VENDOR + "__init__.py": "from .impl import run\nimport os\n",
            VENDOR + "impl/__init__.py": "from .core import run\n",
            VENDOR + "impl/core.py": "from ..util import helper\n\ndef run():\n    return helper\n",
            VENDOR + "util.py": "helper = 1\n",
            VENDOR + "unused.py": "",
            VENDOR + "flagtree_spec.json": '{"exclude": []}',
        },
    )
    code, out, _ = run(
        capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--select", "FTS018"
    )
    assert out.splitlines() == [
        f"{tmp_path / VENDOR / 'unused.py'}:1:1: FTS018 belongs to no mirror tree of vendor and "
        "the hook module never imports it, so Python never loads it; an override goes into "
        f"the mirror tree {tmp_path / VENDOR / 'hpkg'}, laid out like the trunk"
    ]
    assert code == 0


def test_fts018_in_a_spec_root_whose_declaration_has_no_mirror_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": SPEC,
            VENDOR + "__init__.py": "",
            VENDOR + "hpkg/fragment.py": "",
            VENDOR + "flagtree_spec.json": '{"mirror": null}',
        },
    )
    code, out, _ = run(
        capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--select", "FTS018"
    )
    assert out.endswith(f"({tmp_path / VENDOR / 'flagtree_spec.json'} declares no mirror tree)\n")
    assert code == 0


def test_fts009_is_not_reported_for_a_hook_module_that_does_not_parse(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, found = findings(capsys, "fts009_unparsable_hooks")
    assert [f["code"] for f in found] == ["FTS010"]
    assert code == 1


def test_unmodified_installed_trunk_without_auto_is_one_finding_that_names_auto_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trunk_dir = CHECK / "unmodified_trunk" / "site-packages" / "umpkg"
    argv = ["check", "--trunk", str(trunk_dir), "-b", "vendor", "--format", "json"]
    code, out, _ = run(capsys, *argv)
    [finding] = json.loads(out)["findings"]
    assert finding["code"] == "FTS001" and code == 1
    assert finding["message"].startswith(
        "the trunk looks unmodified: no package of umpkg calls spec_path(__path__), so no "
        "override loads (2 files in the mirror trees) unless auto mode specialises the trunk; "
        "'check --auto' models 'flagtree-spec run'"
    )
    assert "The trunk is installed: editing its files is not the fix" in finding["message"]
    code, out, _ = run(capsys, *argv, "--auto")
    assert [f["code"] for f in json.loads(out)["findings"]] == ["FTS008"]
    assert code == 0


def test_unmodified_source_trunk_names_the_init_to_edit_as_well(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/hpkg/__init__.py": "",
            "python/hpkg/mod.py": "",
            VENDOR + "hpkg/mod.py": "X = 1\n",
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor")
    assert "the trunk looks unmodified" in out
    assert (
        "Or add 'spec_path(__path__)' to the 1 package init the mirror files need: "
        f"{tmp_path / 'python/hpkg/__init__.py'} "
        "('flagtree-spec spec-path -b vendor --apply' inserts it)"
    ) in out
    assert code == 1


def test_installed_layout_mirror_tree_inside_the_trunk_is_listed_and_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    installed = CHECK.parent / "installed" / "site-packages" / "instpkg"
    code, out, _ = run(capsys, "list", "--trunk", str(installed), "-b", "gamma")
    mirror = installed / "backends" / "gamma" / "spec" / "instpkg"
    assert out.splitlines() == [
        f"override  instpkg.runtime.jit  {mirror / 'runtime/jit.py'}  "
        f"(shadows {installed / 'runtime/jit.py'})"
    ]
    assert code == 0


@pytest.mark.parametrize("backend", ["stray", "strayast"])
def test_fts002_root_init_copy_of_the_trunk_root_init_says_delete_it(
    capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    # spec/hcpkg/__init__.py is byte-identical (stray) or AST-identical (strayast) to the
    # trunk's: no hook package, a root-init override that never loads, and only a copy.
    repo = CHECK.parent / "hook_convention"
    code, out, _ = run(capsys, "check", "--repo", str(repo), "-b", backend, "--format", "json")
    found = json.loads(out)["findings"]
    copy = repo / "third_party" / backend / "backend" / "spec" / "hcpkg" / "__init__.py"
    assert only(found, "FTS002") == [("error", str(copy), 1, 1)]
    message = next(f["message"] for f in found if f["code"] == "FTS002")
    trunk_init = repo / "python" / "hcpkg" / "__init__.py"
    assert message.endswith(f"it is a copy of the trunk's {trunk_init}: delete it"), message
    assert code == 1


def test_fts002_root_init_that_is_no_copy_says_move_its_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, found = findings(capsys, "fts002_init_override")
    message = next(f["message"] for f in found if f["path"].endswith("initpkg/__init__.py"))
    assert message.endswith("never in a mirror; move its code into a module"), message
