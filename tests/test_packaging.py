"""What an index shows of a release: project URLs, a maintainer, a README whose links work there.

The artifacts themselves (sdist and wheel built, ``twine check --strict``, the
sdist free of tests, the demo run from the wheel in a fresh environment) are
checked by ``scripts/test`` on CPython 3.11, which builds them.
"""

from __future__ import annotations

import re
from importlib.metadata import metadata
from pathlib import Path

import flagtree_spec

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def project_urls() -> dict[str, str]:
    found = metadata("flagtree-spec").get_all("Project-URL") or []
    return dict(entry.split(", ", 1) for entry in found)


def mkdocs_setting(name: str) -> str:
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    match = re.search(rf"^{name}: (\S+)$", text, re.M)
    assert match is not None, f"mkdocs.yml has no {name}"
    return match.group(1)


def test_metadata_names_source_documentation_changelog_issues_and_a_maintainer():
    urls = project_urls()
    assert sorted(urls) == ["Changelog", "Documentation", "Issues", "Source"]
    source = urls["Source"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", source)
    assert urls["Issues"] == f"{source}/issues"
    assert urls["Changelog"] == f"{source}/blob/main/CHANGELOG.md"
    # The site mkdocs.yml builds is the one the metadata names, of the same repository.
    assert urls["Documentation"] == mkdocs_setting("site_url")
    assert mkdocs_setting("repo_url") == source
    assert re.fullmatch(r".+ <[^@\s]+@[^@\s]+\.\w+>", metadata("flagtree-spec")["Maintainer-email"])


def test_version_is_written_once_and_the_metadata_reads_it():
    assert metadata("flagtree-spec")["Version"] == flagtree_spec.__version__
    written = [
        str(path.relative_to(REPO))
        for path in [REPO / "pyproject.toml", *(REPO / "flagtree_spec").rglob("*.py")]
        if re.search(r"""^\s*(__)?version(__)?\s*=\s*["']""", path.read_text("utf-8"), re.M)
    ]
    assert written == ["flagtree_spec/__init__.py"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{flagtree_spec.__version__}] - " in changelog


def test_readme_links_are_absolute_to_files_the_repository_holds():
    # An index renders the README away from the repository: a relative link breaks there.
    base = project_urls()["Source"] + "/blob/main/"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = LINK.findall(readme)
    assert links
    for link in links:
        assert re.match(r"https?://", link), f"README.md links to {link!r}, a relative link"
        if link.startswith(base):
            target = link[len(base) :].partition("#")[0]
            assert (REPO / target).exists(), f"README.md links to {link}, not in the repository"
    assert project_urls()["Documentation"] in readme
