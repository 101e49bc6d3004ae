"""The docs stand alone: no citation of documents the repository does not hold, honest set-up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted([REPO / "README.md", REPO / "SECURITY.md", *(REPO / "docs").glob("*.md")])
# Everything a reader of the project sees: docs, module docstrings, comments, tests, tools.
TEXTS = sorted(
    {
        *DOCS,
        REPO / "CHANGELOG.md",
        REPO / "pyproject.toml",
        *(REPO / "flagtree_spec").rglob("*.py"),
        *(REPO / "tests").rglob("*.py"),
        *(REPO / "benchmarks").glob("*.py"),
        *(REPO / "examples").rglob("*.py"),
        *(REPO / "examples").rglob("*.md"),
        *(REPO / "scripts").iterdir(),
    }
    - {Path(__file__).resolve()}
)
# A design document's sections, house-keeping documents, numbered work items.
CITATION = re.compile(r"DESIGN|§|STYLE\.md|PROTOCOL\.md|(?i:\bissues? #?\d+|\(issue\b)")


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(REPO)))
def test_docs_and_docstrings_cite_no_document_the_repository_does_not_hold(path):
    cited = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CITATION.search(line)
    ]
    assert not cited, "say it in place instead:\n" + "\n".join(cited)


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_in_docs_point_to_files_the_repository_holds(path):
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        assert (path.parent / target).exists(), f"{path.relative_to(REPO)} links to {target}"


def test_installation_instructions_name_no_unpublished_release():
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install (-U )?flagtree[-_]spec\b", text), path
        assert not re.search(r"rev: v\d", text), path  # no tag exists to pin
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install ." in readme and "docs/tutorial.md" in readme


def test_package_metadata_names_authors_license_and_every_supported_python():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.9"' in text
    assert re.search(r"^authors = \[\{ name = \"[^\"]+\" \}\]$", text, re.MULTILINE)
    assert 'license = "MIT"' in text and (REPO / "LICENSE").is_file()
    for minor in range(9, 14):
        assert f'"Programming Language :: Python :: 3.{minor}",' in text
