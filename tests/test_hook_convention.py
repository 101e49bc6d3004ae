"""FlagTree's hook convention: ``<spec root>/R/__init__.py`` is the hook module.

Without an ``__init__.py`` in the spec root and without a declaration naming
the hooks, the installed and source layouts take ``<spec root>/R/__init__.py``
as the hook package (FlagTree imports ``triton.backends.B.spec.triton``),
unless it is a byte- or AST-identical copy of the trunk's root ``__init__.py``.
The fixture ``fixtures/hook_convention`` is shaped like FlagTree's backends:
the hook package imports a fragment from its own folder (``from ._utils import
apply_with_path``), and the trunk has a module ``hcpkg._utils`` of that name.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, scenario

from flagtree_spec._discovery import CONVENTION_KINDS, HookModule, hook_module_name, hook_module_of

REPO = FIXTURES / "hook_convention"
PY = REPO / "python"
TRUNK = PY / "hcpkg"
INSTALLED = TRUNK / "backends" / "inst" / "spec"


def spec_root(backend: str) -> Path:
    return REPO / "third_party" / backend / "backend" / "spec"


REPORT = """
    import json, sys, hcpkg.language, hcpkg._utils, flagtree_spec
    state = flagtree_spec.active("hcpkg")
    print(json.dumps({
        "extra": hcpkg.language.EXTRA,
        "language_who": hcpkg.language.WHO,
        "utils_who": hcpkg._utils.WHO,
        "utils_file": hcpkg._utils.__spec__.origin,
        "hook_modules": list(state.hook_modules),
        "hooks": [r.hooks for r in state.spec_roots],
        "loaded": sorted(n for n in sys.modules if n.endswith("._utils")),
    }))
"""


def run(backend: str, code: str = REPORT, **env: str) -> dict:
    return scenario(code, env={"FLAGTREE_BACKEND": backend, **env}, path=[PY])


def test_root_init_convention_hook_package_found_and_called_in_source_layout():
    out = run("flag")
    hooks = spec_root("flag") / "hcpkg" / "__init__.py"
    name = hook_module_name("flag", str(hooks))
    assert out["hooks"] == [str(hooks)]
    assert out["hook_modules"] == [name]
    # The hook ran, and its fragment loaded through the hook package, by relative import.
    assert out["extra"] == f"flag:hcpkg.language:{name}._utils"
    assert out["language_who"] == "flag"  # the mirror is the same folder, and still works


def test_root_init_convention_hook_package_found_and_called_in_installed_layout():
    out = run("inst")
    assert out["hooks"] == [str(INSTALLED / "hcpkg" / "__init__.py")]
    # Inside the root package: imported under its real dotted name, as FlagTree does.
    assert out["hook_modules"] == ["hcpkg.backends.inst.spec.hcpkg"]
    assert out["extra"] == "inst:hcpkg.language:hcpkg.backends.inst.spec.hcpkg._utils"
    assert out["language_who"] == "inst"


@pytest.mark.parametrize("backend", ["flag", "inst"])
def test_root_init_convention_fragments_are_no_overrides_while_root_is_not_specialised(backend):
    out = run(backend)
    assert out["utils_who"] == "trunk"
    assert out["utils_file"] == str(TRUNK / "_utils.py")
    # Two modules of two files: the trunk's and the hook package's fragment.
    assert "hcpkg._utils" in out["loaded"] and len(out["loaded"]) == 2


def test_root_init_convention_fragment_acts_as_override_once_root_is_specialised():
    # Auto mode specialises the root package itself: the mirror's root folder,
    # which is the hook package's folder, comes first on hcpkg.__path__, so the
    # fragment shadows the trunk module and loads twice, under two names.
    out = run(
        "flag",
        "import flagtree_spec; flagtree_spec.install('hcpkg')\n" + textwrap.dedent(REPORT),
    )
    fragment = spec_root("flag") / "hcpkg" / "_utils.py"
    assert out["utils_who"] == "flag fragment"
    assert out["utils_file"] == str(fragment)
    name = hook_module_name("flag", str(spec_root("flag") / "hcpkg" / "__init__.py"))
    assert out["loaded"] == sorted(["hcpkg._utils", f"{name}._utils"])


def test_root_init_convention_with_no_mirror_keeps_fragments_off_a_specialised_root():
    # The remedy the docs give: {"mirror": null} makes spec/hcpkg/ the hook package only.
    out = run(
        "nomirror",
        "import flagtree_spec; flagtree_spec.install('hcpkg')\n" + textwrap.dedent(REPORT),
    )
    name = hook_module_name("nomirror", str(spec_root("nomirror") / "hcpkg" / "__init__.py"))
    assert out["extra"] == f"nomirror:hcpkg.language:{name}._utils"
    assert out["utils_who"] == "trunk"
    assert out["language_who"] == "trunk"


@pytest.mark.parametrize("backend", ["stray", "strayast"])
def test_root_init_convention_ignores_a_stray_copy_of_the_trunk_root_init(backend):
    out = run(backend)
    assert out["hooks"] == [None]
    assert out["hook_modules"] == []
    assert out["extra"] is None


def test_root_init_convention_byte_identical_copy_does_not_import_ast():
    out = run(
        "stray",
        """
        import json, sys
        sys.modules.pop("ast", None)  # a coverage tracer may have imported it at start-up
        import hcpkg.language
        print(json.dumps("ast" in sys.modules))
        """,
    )
    assert out is False


def test_root_init_convention_never_applies_to_a_legacy_whole_tree_copy():
    out = run("legacyb")
    assert out["hooks"] == [None]
    assert out["extra"] is None


def test_root_init_convention_declaration_naming_hooks_wins():
    out = run("declared")
    assert out["hooks"] == [str(spec_root("declared") / "hooks.py")]
    assert out["extra"] == "declared hooks.py"


def test_root_init_convention_declaration_with_null_hooks_means_none():
    out = run("hookless")
    assert out["hooks"] == [None]
    assert out["extra"] is None


def test_root_init_convention_spec_root_init_wins():
    out = run("both")
    assert out["hooks"] == [str(spec_root("both") / "__init__.py")]
    assert out["extra"] == "both __init__.py"


def test_root_init_convention_stack_uses_first_hook_package():
    out = run("flag,inst")
    assert out["extra"].startswith("flag:")
    assert len(out["hook_modules"]) == 2


@pytest.mark.parametrize("kind", ["FLAGTREE_SPEC_PATH", "activate", "entry point", "legacy"])
def test_root_init_convention_not_for_roots_outside_installed_and_source_layouts(kind):
    assert kind not in CONVENTION_KINDS
    found = hook_module_of(str(spec_root("flag")), kind, "hcpkg", str(TRUNK), None)
    assert found[:3] == HookModule(None, False)[:3]
    assert found.rule  # what status prints: why there is none


def test_root_init_convention_not_for_flagtree_spec_path_root_at_run_time():
    out = scenario(
        REPORT,
        env={"FLAGTREE_SPEC_PATH": str(spec_root("flag"))},
        path=[PY],
    )
    assert out["hooks"] == [None]
    assert out["extra"] is None


@pytest.mark.parametrize("kind", sorted(CONVENTION_KINDS))
def test_hook_module_of_applies_root_init_convention_in_each_layout(kind):
    found = hook_module_of(str(spec_root("flag")), kind, "hcpkg", str(TRUNK), None)
    assert found[:3] == HookModule(str(spec_root("flag") / "hcpkg" / "__init__.py"), True)[:3]
    assert found.rule.startswith("FlagTree's convention hcpkg/__init__.py")


@pytest.mark.parametrize("backend", ["stray", "strayast"])
def test_hook_module_of_reports_the_stray_copy(backend):
    found = hook_module_of(str(spec_root(backend)), "source", "hcpkg", str(TRUNK), None)
    stray = str(spec_root(backend) / "hcpkg" / "__init__.py")
    assert found[:3] == HookModule(None, False, stray)[:3]
    assert "is a copy of the trunk's root __init__.py" in found.rule


def test_hook_module_of_a_candidate_that_does_not_parse_is_the_hook_module(tmp_path):
    root = tmp_path / "spec"
    (root / "hcpkg").mkdir(parents=True)
    (root / "hcpkg" / "__init__.py").write_text("def broken(:\n")
    found = hook_module_of(str(root), "source", "hcpkg", str(TRUNK), None)
    assert found[:3] == HookModule(str(root / "hcpkg" / "__init__.py"), True)[:3]


def test_hook_module_of_without_trunk_root_init_takes_the_candidate(tmp_path):
    found = hook_module_of(str(spec_root("flag")), "installed", "hcpkg", str(tmp_path), None)
    assert found.file == str(spec_root("flag") / "hcpkg" / "__init__.py")


def test_hook_module_of_unreadable_trunk_root_init_is_config_error(tmp_path):
    from flagtree_spec import SpecConfigError

    (tmp_path / "__init__.py").mkdir()  # not readable as a file, whoever runs the test
    with pytest.raises(SpecConfigError, match=r"cannot read .*__init__\.py"):
        hook_module_of(str(spec_root("flag")), "source", "hcpkg", str(tmp_path), None)


@pytest.mark.parametrize(
    ("candidate", "stray"),
    [
        ("# a comment\nVERSION = ('1.0')  # parentheses and comments do not count\n", True),
        ("VERSION = '2.0'\n", False),  # another constant
        ("VERSION = '1.0'\nEXTRA = 1\n", False),  # one statement more
        ("VERSION = b'1.0'\n", False),  # another type of constant
        ("VERSION: str = '1.0'\n", False),  # another kind of statement
    ],
)
def test_hook_module_of_compares_syntax_trees_without_positions(tmp_path, candidate, stray):
    trunk = tmp_path / "trunk"
    trunk.mkdir()
    (trunk / "__init__.py").write_text("VERSION = '1.0'\n")
    root = tmp_path / "spec"
    (root / "hcpkg").mkdir(parents=True)
    (root / "hcpkg" / "__init__.py").write_text(candidate)
    found = hook_module_of(str(root), "source", "hcpkg", str(trunk), None)
    init = str(root / "hcpkg" / "__init__.py")
    assert found[:3] == (HookModule(None, False, init) if stray else HookModule(init, True))[:3]


@pytest.mark.parametrize("target", ["hooks.txt", "folder"])
def test_hook_module_of_declared_hooks_that_are_no_module_is_config_error(tmp_path, target):
    from flagtree_spec import SpecConfigError
    from flagtree_spec._config import read_declaration

    (tmp_path / "hooks.txt").write_text("")
    (tmp_path / "folder").mkdir()  # no __init__.py
    (tmp_path / "flagtree_spec.json").write_text(f'{{"hooks": "{target}"}}')
    decl = read_declaration(str(tmp_path))
    with pytest.raises(SpecConfigError, match=f"hooks '{target}' is neither a .py file"):
        hook_module_of(str(tmp_path), "source", "hcpkg", str(TRUNK), decl)


def test_hook_module_of_unreadable_file_error_names_why_it_is_read_and_the_fix(tmp_path):
    from flagtree_spec import SpecConfigError

    (tmp_path / "__init__.py").mkdir()
    candidate = spec_root("flag") / "hcpkg" / "__init__.py"
    with pytest.raises(SpecConfigError) as caught:
        hook_module_of(str(spec_root("flag")), "source", "hcpkg", str(tmp_path), None)
    message = str(caught.value)
    assert message.startswith(f"cannot read {str(tmp_path / '__init__.py')!r}: "), message
    assert f"whether {candidate} is a hook package or a copy" in message
    assert message.endswith("make it a readable file"), message
