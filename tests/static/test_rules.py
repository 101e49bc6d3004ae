"""The registry of check rules, and the code table of docs/check.md that states it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import make, run

from flagtree_spec._tools.check.driver import CODES, RULES

SPEC = "from flagtree_spec import spec_path\n\nspec_path(__path__)\n"
DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "check.md"


def doc_table() -> list[tuple[str, str, str]]:
    """``(code, severity, summary)`` of every row of the code table, backticks removed."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if re.match(r"\| FTS\d{3} \|", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((cells[0], cells[1], cells[2].replace("`", "")))
    return rows


def test_code_table_of_docs_check_md_equals_the_rule_registry() -> None:
    registry = [(r.code, r.severity, r.summary) for r in RULES.values()]
    assert doc_table() == registry


def test_registry_declares_each_code_once_in_code_order_with_a_known_severity() -> None:
    codes = list(RULES)
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    assert all(re.fullmatch(r"FTS\d{3}", code) for code in codes)
    assert {r.severity for r in RULES.values()} <= {"error", "warning", "info"}
    assert all(rule.code == code for code, rule in RULES.items())
    assert {r.code: (r.severity, r.summary) for r in RULES.values()} == CODES


def test_fts002_package_init_override_below_a_package_never_specialised_is_dead(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/deadinit/__init__.py": SPEC,
            "python/deadinit/plain/__init__.py": "",
            "python/deadinit/plain/sub/__init__.py": "",
            "third_party/vendor/backend/spec/deadinit/plain/sub/__init__.py": "X = 1\n",
        },
    )
    code, out, _ = run(capsys, "check", "--repo", str(tmp_path), "-b", "vendor", "--format", "json")
    found = [(f["code"], f["path"], f["message"]) for f in json.loads(out)["findings"]]
    override = str(tmp_path / "third_party/vendor/backend/spec/deadinit/plain/sub/__init__.py")
    assert [(c, p) for c, p, _ in found] == [("FTS002", override)]
    assert "package deadinit.plain never calls spec_path(__path__)" in found[0][2]
    assert code == 1


def test_fts001_dead_override_in_a_spec_root_without_backend_is_named_by_its_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/namedpkg/__init__.py": SPEC,
            "python/namedpkg/plain/__init__.py": "",
            "python/namedpkg/plain/mod.py": "X = 1\n",
            "extra/namedpkg/plain/mod.py": "X = 2\n",
        },
    )
    code, out, _ = run(
        capsys,
        "check",
        "--trunk",
        str(tmp_path / "python/namedpkg"),
        "--spec-root",
        str(tmp_path / "extra"),
        "--format",
        "json",
    )
    [finding] = json.loads(out)["findings"]
    assert finding["code"] == "FTS001"
    assert finding["message"].startswith("extra:namedpkg/plain/mod.py never loads")
    assert code == 1


def test_every_rule_explains_itself_in_the_four_sections_of_its_docstring() -> None:
    from flagtree_spec._tools.check.registry import SECTIONS

    for code, rule in RULES.items():
        explanation = rule.explanation
        assert all(explanation), (code, [s for s, body in zip(SECTIONS, explanation) if not body])
        doc = type(rule).__doc__ or ""
        assert [line.strip() for line in doc.splitlines() if line.strip().startswith("## ")] == [
            f"## {s}" for s in SECTIONS
        ], code
        assert "```" in explanation.example and "```" in explanation.instead, code


def test_the_rules_page_is_written_from_the_registry() -> None:
    from flagtree_spec._tools.cli.rules import page

    text = (DOC.parent / "rules.md").read_text(encoding="utf-8")
    assert text == page(), "docs/rules.md is out of date: run scripts/rules-doc"
    for rule in RULES.values():
        assert f"\n## {rule.code}\n" in text
        assert rule.explanation.why in text


def test_rule_command_prints_the_explanation_and_the_page_of_a_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from flagtree_spec._tools.cli.rules import markdown

    rule = RULES["FTS012"]
    code, out, _ = run(capsys, "rule", "fts012")
    assert code == 0
    assert out == markdown(rule) + f"\nDocumentation: {rule.url}\n"
    assert "## What it does\n" in out and "## Use instead\n" in out
    code, out, _ = run(capsys, "rule", "--all", "--format", "json")
    data = json.loads(out)
    assert [d["code"] for d in data] == list(RULES)
    assert set(data[0]) == {
        "code",
        "severity",
        "summary",
        "what",
        "why",
        "example",
        "instead",
        "url",
    }
    code, _, err = run(capsys, "rule", "FTS01")
    assert code == 2 and "'FTS01' is not a check code (codes starting so: FTS010" in err
    code, _, err = run(capsys, "rule")
    assert code == 2 and "name the codes to explain" in err
