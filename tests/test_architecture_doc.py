"""docs/architecture.md names every module of the package, so a reader finds the file to open."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "flagtree_spec"


def test_architecture_doc_names_every_module_of_the_runtime_and_the_tools() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = {
        p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
    }
    # A subpackage is named by its folder (`_hooks/`), its modules one by one.
    named = {
        f"`{m.parts[0]}/`" if m.parts[0] in ("_hooks", "_startup") else f"`{m.name}`"
        for m in modules
        if m.parts != ("_tools", "__init__.py")
    }
    assert f"`{PACKAGE.name}/_tools/`" in text
    assert len(named) > 40, sorted(named)
    missing = sorted(n for n in named if n not in text)
    assert missing == [], f"docs/architecture.md has no row for {missing}"
