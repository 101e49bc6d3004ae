"""Each check code on its fixture tree under fixtures/check/, through the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from flagtree_spec._cli import main

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
    from flagtree_spec._static.check import CODES

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
    assert [(f["code"], f["path"], f["line"], f["col"]) for f in found] == [("FTS010", low, 1, 12)]
    assert code == 1
    code, out, _ = run(capsys, "list", "--repo", str(repo), "-b", "high", "-b", "low")
    assert out.splitlines() == [
        f"override  stackpkg.mod  {high}  (shadows {low})",
        f"shadowed  stackpkg.mod  {low}",
    ]
    assert code == 0


def test_check_without_a_spec_root_says_so_and_reports_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "check", "--repo", str(CHECK / "fts009_hooks"))
    assert (code, out) == (0, "")
    assert err.startswith(
        "flagtree-spec check: no spec root for hookpkg (backend stack none, no backend set)"
    )


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
