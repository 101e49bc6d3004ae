"""[tool.flagtree-spec] in pyproject.toml, read with tomllib (tomli on Python < 3.11)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import make, run

from flagtree_spec._tools.model.settings import (
    SettingsError,
    find_pyproject,
    read_settings,
    read_table,
)

# (document, the table TOML gives it): read_table must give exactly this.
AGREE = [
    ("[project]\nname = 'x'\n", None),
    ('[tool.flagtree-spec]\nbackend = "mthreads"\n', {"backend": "mthreads"}),
    (
        """
        [build-system]
        requires = ["flit_core"]

        [tool.flagtree-spec]  # the defaults of check
        backend = ["a", 'b']
        root = "triton"
        select = [
            "FTS0",   # every code
            'FTS1',
        ]
        ignore = []

        [tool.flagtree-spec.per-file-ignores]
        "third_party/*/backend/spec/triton/legacy/*.py" = ["FTS005", "FTS003"]
        'literal\\path.py' = ["FTS007"]

        [tool.ruff]
        line-length = 100
        """,
        {
            "backend": ["a", "b"],
            "root": "triton",
            "select": ["FTS0", "FTS1"],
            "ignore": [],
            "per-file-ignores": {
                "third_party/*/backend/spec/triton/legacy/*.py": ["FTS005", "FTS003"],
                "literal\\path.py": ["FTS007"],
            },
        },
    ),
    (
        """
        [tool.other]
        text = '''
        [tool.flagtree-spec]
        backend = "not a table: inside a string"
        '''
        [tool."flagtree-spec"]
        per-file-ignores = { "a.py" = ["FTS001"], b = [] }
        select = ["tab\\there", "\\u00e9"]
        """,
        {"per-file-ignores": {"a.py": ["FTS001"], "b": []}, "select": ["tab\there", "é"]},
    ),
    (
        '[project.scripts]\nflagtree-spec = "flagtree_spec._cli:main"\n'
        '[tool.flagtree-spec]\nroot = "r"\n[[tool.x]]\nflagtree-spec = 1\n',
        {"root": "r"},
    ),
    (
        '[tool.flagtree-spec]\nper-file-ignores."x.py" = ["FTS002"]\nauto = true\n',
        {"per-file-ignores": {"x.py": ["FTS002"]}, "auto": True},
    ),
]


@pytest.mark.parametrize(("document", "expected"), AGREE)
def test_the_table_is_read_as_toml_reads_it(document, expected):
    assert read_table(textwrap.dedent(document), "pyproject.toml") == expected


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="tomllib is in the standard library")
def test_without_tomli_a_table_is_an_error_saying_to_install_it_and_other_commands_work(
    tmp_path,
):
    """Python < 3.11 reads the table with tomli; a vendored copy without it still runs
    every command that needs no table."""
    blocked = "import sys; sys.modules['tomli'] = None\n"
    no_table = tmp_path / "plain" / "pyproject.toml"
    no_table.parent.mkdir()
    no_table.write_text("[project]\nname = 'x'\n[tool.ruff]\nline-length = 100\n")
    with_table = tmp_path / "table" / "pyproject.toml"
    with_table.parent.mkdir()
    with_table.write_text('[tool.flagtree-spec]\nbackend = "x"\n')
    code = blocked + (
        "from flagtree_spec._tools.model.settings import SettingsError, read_settings\n"
        f"assert read_settings({str(no_table)!r}) is None\n"
        "try:\n"
        f"    read_settings({str(with_table)!r})\n"
        "except SettingsError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{with_table} has a [tool.flagtree-spec] table" in proc.stdout
    assert "needs the tomli package: pip install tomli" in proc.stdout


def test_settings_unknown_key_is_an_error_naming_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flagtree-spec]\nbackends = "x"\n')
    with pytest.raises(SettingsError, match="unknown key 'backends'; the keys are backend, root"):
        read_settings(str(tmp_path / "pyproject.toml"))


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("select = 'FTS001'", 'select = "FTS001": a list of strings is expected'),
        ("root = ['a']", 'root = ["a"]: a string is expected, the package name'),
        ("per-file-ignores = ['x']", 'per-file-ignores = ["x"]: a table of glob = [codes]'),
        (
            "per-file-ignores = { x = 'FTS001' }",
            "per-file-ignores 'x' = \"FTS001\": a list of strings is expected",
        ),
        ("backend = 3", "backend = 3: a string or a list of strings is expected"),
        ("backend = ['a', 1]", 'backend = ["a", 1]: a string or a list of strings is expected'),
        ("backend = true", "backend = true: a string or a list of strings is expected"),
    ],
)
def test_settings_of_the_wrong_type_are_errors(tmp_path, body, why):
    (tmp_path / "pyproject.toml").write_text(f"[tool.flagtree-spec]\n{body}\n")
    with pytest.raises(SettingsError, match=re.escape(why)):
        read_settings(str(tmp_path / "pyproject.toml"))


def test_settings_are_validated_and_found_in_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flagtree-spec]\nbackend = "a,b"\nselect = ["FTS0"]\n'
        '[tool.flagtree-spec.per-file-ignores]\n"spec/*.py" = ["FTS005"]\n'
    )
    below = tmp_path / "python" / "pkg"
    below.mkdir(parents=True)
    found = find_pyproject(str(below))
    assert found == str(tmp_path / "pyproject.toml")
    settings = read_settings(found)
    assert settings is not None
    assert settings.backend == ("a,b",) and settings.select == ("FTS0",)
    assert settings.per_file_ignores == (("spec/*.py", ("FTS005",)),)
    assert settings.folder == str(tmp_path)


def test_a_pyproject_without_the_table_gives_no_settings(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert read_settings(str(tmp_path / "pyproject.toml")) is None


def test_invalid_toml_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.flagtree-spec]\nroot = \n")
    with pytest.raises(SettingsError, match=str(path)):
        read_settings(str(path))


# --------------------------------------------------------------------------- check reads the table

SPEC = "from flagtree_spec import spec_path\nspec_path(__path__)\n"
VENDOR = "third_party/vendor/backend/spec/"


def make_repo(base: Path, table: str) -> None:
    make(
        base,
        {
            "pyproject.toml": f"[project]\nname = 'x'\n\n[tool.flagtree-spec]\n{table}",
            "python/hpkg/__init__.py": SPEC,
            "python/hpkg/api.py": "def a():\n    pass\n\ndef b():\n    pass\n",
            "python/hpkg/legacy/__init__.py": SPEC,
            "python/hpkg/legacy/old.py": "def a():\n    pass\n\ndef b():\n    pass\n",
            VENDOR + "hpkg/api.py": "def a():\n    return 1\n",  # FTS005: b missing
            VENDOR + "hpkg/legacy/old.py": "def a():\n    return 1\n",  # FTS005 as well
            VENDOR + "hpkg/added.py": "X = 1\n",  # FTS008
        },
    )


def codes_and_files(out: str) -> list[tuple[str, str]]:
    return [(f["code"], Path(f["path"]).name) for f in json.loads(out)["findings"]]


def test_pyproject_table_sets_check_defaults_backend_ignore_and_per_file_ignores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_repo(
        tmp_path,
        'backend = "vendor"\nignore = ["FTS008"]\n'
        '[tool.flagtree-spec.per-file-ignores]\n"third_party/*/backend/spec/hpkg/legacy/*.py" '
        '= ["FTS005"]\n',
    )
    code, out, err = run(capsys, "check", "--repo", str(tmp_path), "--format", "json")
    assert codes_and_files(out) == [("FTS005", "api.py")]
    assert code == 0 and err.splitlines()[-1] == "0 errors, 1 warning, 0 info in 3 files"


def test_command_line_options_win_over_the_pyproject_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_repo(tmp_path, 'backend = "nosuchvendor"\nselect = ["FTS005"]\n')
    argv = ["check", "--repo", str(tmp_path), "--format", "json"]
    code, _, err = run(capsys, *argv)
    assert code == 2  # the table's backend exists nowhere, and says where it came from
    assert f"backend 'nosuchvendor' ([tool.flagtree-spec] in {tmp_path / 'pyproject.toml'})" in err
    code, out, _ = run(capsys, *argv, "-b", "vendor", "--select", "FTS008")
    assert codes_and_files(out) == [("FTS008", "added.py")]
    assert code == 0


def test_pyproject_table_with_an_unknown_key_is_exit_2_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_repo(tmp_path, 'backend = "vendor"\nper_file_ignores = {}\n')
    code, out, err = run(capsys, "check", "--repo", str(tmp_path))
    assert (code, out) == (2, "")
    assert "unknown key 'per_file_ignores'; the keys are backend, root, select" in err


def test_pyproject_table_codes_are_checked_like_the_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_repo(tmp_path, 'backend = "vendor"\nignore = ["E501"]\n')
    code, _, err = run(capsys, "check", "--repo", str(tmp_path))
    assert code == 2
    assert f"[tool.flagtree-spec] in {tmp_path / 'pyproject.toml'}: ignore 'E501' is not" in err


def test_pyproject_root_chooses_the_package_of_a_checkout_with_several(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_repo(tmp_path, 'backend = "vendor"\nroot = "hpkg"\nselect = ["FTS008"]\n')
    make(tmp_path, {"python/otherpkg/__init__.py": ""})
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "--format", "json")
    assert codes_and_files(out) == [("FTS008", "added.py")] and code == 0
    make(tmp_path, {"pyproject.toml": '[tool.flagtree-spec]\nroot = "nopkg"\n'})
    code, _, err = run(capsys, "check", "--repo", str(tmp_path))
    assert code == 2 and "root 'nopkg' is not a package folder in" in err
