"""docs/architecture.md names every module of the package, so a reader finds the file to open."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "flagtree_spec"
TOOLS = PACKAGE / "_tools"


def _text() -> str:
    return (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_architecture_doc_names_every_module_of_the_runtime() -> None:
    text = _text()
    modules = {
        p.relative_to(PACKAGE)
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and "_tools" not in p.relative_to(PACKAGE).parts
    }
    # A subpackage is named by its folder (`_hooks/`), its modules one by one.
    named = {f"`{m.parts[0]}/`" if len(m.parts) > 1 else f"`{m.name}`" for m in modules}
    assert len(named) > 15, sorted(named)
    missing = sorted(n for n in named if n not in text)
    assert missing == [], f"docs/architecture.md has no row for {missing}"


def test_architecture_doc_has_a_table_per_tool_folder_naming_each_of_its_modules() -> None:
    text = _text()
    assert f"`{PACKAGE.name}/_tools/`" in text
    folders = sorted(p for p in TOOLS.iterdir() if (p / "__init__.py").is_file())
    assert [f.name for f in folders] == ["adopt", "check", "cli", "migrate", "model", "upgrade"]
    for folder in folders:
        heading = f"### `_tools/{folder.name}/`"
        assert heading in text, heading
        section = text.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        rows = set(re.findall(r"^\| `([a-z_]+\.py)` \|", section, flags=re.MULTILINE))
        modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
        assert rows == modules, (folder.name, sorted(rows ^ modules))
        assert len(modules) <= 20, (folder.name, len(modules))
        # Each folder says in its own docstring which module holds what.
        doc = (folder / "__init__.py").read_text(encoding="utf-8")
        assert [m for m in sorted(modules) if f"``{m[:-3]}``" not in doc] == [], folder.name


def test_no_tool_folder_holds_a_family_of_prefix_named_modules() -> None:
    for folder in [TOOLS, *(p for p in TOOLS.iterdir() if p.is_dir())]:
        stems = {p.stem for p in folder.glob("*.py")} - {"__init__"}
        pairs = sorted((a, b) for a in stems for b in stems if b.startswith(a + "_"))
        assert pairs == [], (folder, pairs)
    assert not any(TOOLS.glob("*.py")) or {p.name for p in TOOLS.glob("*.py")} == {"__init__.py"}


def test_no_module_of_the_package_is_over_700_lines() -> None:
    """A module past 700 lines holds more than one concept: split it by concept."""
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert len(sizes) > 90, len(sizes)
    assert {name: n for name, n in sizes.items() if n > 700} == {}
