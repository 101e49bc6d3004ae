"""The runtime never imports the offline tools, nor the modules only the tools need.

The runtime (``spec_path``, discovery, selection, hooks, ``inherit``) runs
inside every trunk import; the tools (``flagtree_spec._tools``) read files
offline and may import ``ast``, ``argparse``, ``difflib``, ``json`` and the TOML readers
freely.  Imports go one way: tools -> runtime.  The runtime imports ``json``
only to read a declaration file, ``ast`` only to read a
``_flagtree_backend.py`` marker (a ``<spec root>/R/__init__.py`` hook package
is compared with the trunk's root ``__init__.py`` through ``compile()`` and the
built-in ``_ast``), and ``difflib`` only to name close matches of a backend
that exists nowhere.
"""

from __future__ import annotations

import ast
import importlib.util
import textwrap
from pathlib import Path
from typing import Optional

import pytest
from conftest import FIXTURES, SOURCE_PY, run_python

import flagtree_spec
from flagtree_spec._discovery import hook_module_name

TOOLS = "flagtree_spec._tools"
FLAG_HOOKS = FIXTURES / "hook_convention/third_party/flag/backend/spec/hcpkg/__init__.py"
HEAVY = ("ast", "argparse", "difflib", "json", "tomllib", "tomli")

# The child forgets whatever the interpreter loaded at start-up (a coverage
# tracer may have imported json or ast already), so that every import of these
# modules from then on shows in sys.modules.
WATCH = f"""
    import sys
    WATCHED = {(TOOLS, *HEAVY)!r}
    def watched(name):
        return any(name == w or name.startswith(w + ".") for w in WATCHED)
    for name in [m for m in sys.modules if watched(m)]:
        del sys.modules[name]
"""
REPORT = """
    print(repr(sorted({m.partition(".")[0] if not m.startswith("flagtree_spec") else m
                       for m in sys.modules if watched(m)})))
"""


def imported(code: str, backend: str = "", path: Path = SOURCE_PY) -> list[str]:
    """The watched modules imported while *code* runs in a fresh interpreter."""
    env = {"FLAGTREE_BACKEND": backend} if backend else {}
    parts = (textwrap.dedent(part) for part in (WATCH, code, REPORT))
    proc = run_python("\n".join(parts), env=env, path=[path])
    found: list[str] = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    return found


def test_runtime_spec_path_and_spec_import_no_tool_and_no_heavy_module() -> None:
    found = imported(
        """
        import flagtree_spec
        import fixpkg.runtime.jit as jit
        from flagtree_spec import spec
        assert jit.WHERE == "alpha", jit.__file__
        assert spec("add_one", 41) == 42
        """,
        backend="alpha",
    )
    assert found == []


def test_runtime_inherit_imports_no_tool_and_no_heavy_module() -> None:
    found = imported(
        """
        import flagtree_spec
        import inhpkg.core as core
        assert core.__inherits__.endswith("core.py") and "top" in core.__spec__.origin
        assert core.helper().startswith("top>")
        """,
        backend="top",
        path=FIXTURES / "inherit_repo" / "python",
    )
    assert found == []


def test_runtime_imports_json_only_when_a_declaration_file_exists() -> None:
    # Backend tilebk declares base tileir in flagtree_spec.json.
    found = imported(
        """
        import fixpkg.runtime.jit as jit
        from flagtree_spec import active
        backends = [r.backend for r in active("fixpkg").spec_roots]
        assert backends == ["tilebk", "tileir"], backends
        """,
        backend="tilebk",
    )
    assert found == ["json"]


def test_runtime_imports_ast_only_for_a_flagtree_backend_module_marker() -> None:
    code = """
        import mkpkg.runtime.jit
        from flagtree_spec import active
        state = active("mkpkg")
        assert state.backends == ("gamma",) and "marker" in state.source, state
    """
    assert imported(code, path=FIXTURES / "marker_module" / "site-packages") == ["ast"]
    assert imported(code, path=FIXTURES / "marker_file" / "site-packages") == []


@pytest.mark.parametrize(
    ("backend", "extra"),
    [
        # spec/hcpkg/__init__.py differs from the trunk's hcpkg/__init__.py in bytes, and
        # spec/hcpkg/__init__.py of strayast only in comments and layout: both are parsed.
        ("flag", f"flag:hcpkg.language:{hook_module_name('flag', str(FLAG_HOOKS))}._utils"),
        ("strayast", None),
        # A byte-identical stray copy, and a spec root with its own __init__.py: never parsed.
        ("stray", None),
        ("both", "both __init__.py"),
    ],
)
def test_runtime_compares_a_hook_package_at_spec_root_r_init_without_importing_ast(
    backend: str, extra: Optional[str]
) -> None:
    code = f"""
        import hcpkg.language as language
        assert language.EXTRA == {extra!r}, language.EXTRA
    """
    path = FIXTURES / "hook_convention" / "python"
    assert imported(code, backend=backend, path=path) == []


def test_runtime_imports_difflib_only_to_warn_about_a_misspelled_backend() -> None:
    code = """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import fixpkg.runtime.jit as jit
        assert jit.WHERE == "trunk", jit.__file__
        assert "did you mean 'alpha'?" in str(caught[0].message), caught
    """
    assert imported(code, backend="alpah") == ["difflib"]


def _imports_tools(tree: ast.Module, package: str) -> list[int]:
    """Lines of *tree*, a module of *package*, that import ``flagtree_spec._tools``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        if any(n == TOOLS or n.startswith(TOOLS + ".") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_runtime_module_imports_the_tools_except_the_command_line_and_the_pytest_plugin() -> (
    None
):
    package = Path(flagtree_spec.__file__).parent
    runtime = [
        p for p in sorted(package.rglob("*.py")) if "_tools" not in p.relative_to(package).parts
    ]
    assert package / "_path.py" in runtime and package / "_cli.py" in runtime
    offenders = {}
    for path in runtime:
        parts = path.relative_to(package.parent).with_suffix("").parts
        within = ".".join(parts[:-1])  # the package a relative import starts from
        lines = _imports_tools(ast.parse(path.read_text(encoding="utf-8")), within)
        if lines:
            offenders[str(path.relative_to(package))] = lines
    # Both import the tools inside functions, for a command or a report that asks for them.
    assert list(offenders) == ["_cli.py", "pytest_plugin/_report.py"], offenders


def test_run_command_loads_no_tool_into_the_program_it_runs(tmp_path: Path) -> None:
    # "flagtree-spec run" executes the program in its own process: the offline tools
    # (and the ast, json and difflib they import) must not be loaded there.
    script = tmp_path / "probe.py"
    script.write_text(
        "import sys\n"
        "import fixpkg.runtime.jit as jit\n"
        "tools = sorted(m for m in sys.modules if m.startswith('flagtree_spec._tools'))\n"
        "print(repr((jit.WHERE, tools)))\n"
    )
    proc = run_python(
        f"""
        import sys
        from flagtree_spec._cli import main
        sys.exit(main(["run", "-b", "alpha", "--root", "fixpkg", {str(script)!r}]))
        """
    )
    assert ast.literal_eval(proc.stdout.strip().splitlines()[-1]) == ("alpha", [])
