"""The output formats of ``check``'s findings, one function each.

Every format gets the findings (absolute paths, as the checker makes them)
and the :class:`~.output.Output` they go to, which says how to show a path:

* ``text``: ``path:line:col: CODE message``, paths relative to the working
  folder, colored on a terminal;
* ``json``: ``{"findings": [...]}``, absolute paths, each finding with the
  ``url`` of its rule's documentation;
* ``github``: GitHub Actions workflow commands (``::error file=...::``);
* ``sarif``: a SARIF 2.1.0 log, every rule described (``helpUri`` included),
  locations relative to ``%SRCROOT%``, the working folder;
* ``junit``: JUnit XML, one test suite per file, one test case per finding,
  a ``<failure>`` for the findings at the severities that fail the run;
* ``gitlab``: a GitLab code quality report (a JSON list with fingerprints).

``--statistics`` prints one line (``text``) or one object (``json``) per code
instead of the findings: how often it was found.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any, Callable
from xml.etree import ElementTree

from ... import __version__
from ..check.driver import Finding
from ..check.registry import DOCS, RULES
from .output import Output

__all__ = ["FORMATS", "STATISTICS_FORMATS", "write_findings", "write_statistics"]

FORMATS = ("text", "json", "github", "sarif", "junit", "gitlab")
STATISTICS_FORMATS = ("text", "json")

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def finding_dict(finding: Finding) -> dict[str, object]:
    """A finding as JSON: its fields (the path absolute) and its rule's documentation URL."""
    data = finding.as_dict()
    data["url"] = RULES[finding.code].url
    return data


def _text(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    for f in findings:
        where = out.paint(out.path(f.path), "path") + f":{f.line}:{f.col}:"
        out.line(f"{where} {out.paint(f.code, f.severity)} {f.message}")


def _json(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    out.raw(json.dumps({"findings": [finding_dict(f) for f in findings]}, indent=2) + "\n")


def _github_escape(text: str, property: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property else text


def _github(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    for f in findings:
        level = _GITHUB_LEVEL[f.severity]
        path = _github_escape(out.path(f.path), property=True)
        message = _github_escape(out.text(f.message))
        out.raw(f"::{level} file={path},line={f.line},col={f.col},title={f.code}::{message}\n")


def _uri(out: Output, path: str) -> dict[str, str]:
    """A SARIF artifact location: relative to ``%SRCROOT%`` below it, else a file URI."""
    shown = out.path(path)
    if not os.path.isabs(shown):
        return {"uri": shown.replace(os.sep, "/"), "uriBaseId": "%SRCROOT%"}
    return {"uri": _file_uri(path)}


def _file_uri(path: str) -> str:
    from pathlib import Path

    return Path(path).absolute().as_uri()


def sarif_log(findings: Sequence[Finding], out: Output) -> dict[str, Any]:
    """The SARIF 2.1.0 log of *findings*: one run, every rule of the registry described."""
    codes = list(RULES)
    rules = []
    for code, rule in RULES.items():
        explanation = rule.explanation
        rules.append(
            {
                "id": code,
                "name": type(rule).__name__,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": explanation.what},
                "help": {"text": explanation.text(), "markdown": explanation.markdown()},
                "helpUri": rule.url,
                "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            }
        )
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": codes.index(f.code),
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": out.text(f.message)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _uri(out, f.path),
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
        }
        for f in findings
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "flagtree-spec",
                        "version": __version__,
                        "informationUri": DOCS,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _file_uri(os.getcwd()) + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _sarif(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    out.raw(json.dumps(sarif_log(findings, out), indent=2) + "\n")


def _junit(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    suites = ElementTree.Element("testsuites", name="flagtree-spec check")
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(out.path(f.path), []).append(f)
    failures = 0
    for path, found in by_path.items():
        failed = sum(f.severity in failing for f in found)
        failures += failed
        suite = ElementTree.SubElement(
            suites,
            "testsuite",
            name=path,
            tests=str(len(found)),
            failures=str(failed),
            errors="0",
        )
        for f in found:
            case = ElementTree.SubElement(
                suite,
                "testcase",
                name=f"{f.code} at line {f.line}, column {f.col}",
                classname=path,
                file=path,
                line=str(f.line),
            )
            text = f"{path}:{f.line}:{f.col}: {f.code} [{f.severity}] {out.text(f.message)}"
            if f.severity in failing:
                failure = ElementTree.SubElement(
                    case, "failure", message=out.text(f.message), type=f.severity
                )
                failure.text = text
            else:
                ElementTree.SubElement(case, "system-out").text = text
    if not findings:
        suite = ElementTree.SubElement(
            suites, "testsuite", name="flagtree-spec check", tests="1", failures="0", errors="0"
        )
        ElementTree.SubElement(suite, "testcase", name="no findings", classname="flagtree-spec")
    suites.set("tests", str(max(len(findings), 1)))
    suites.set("failures", str(failures))
    suites.set("errors", "0")
    ElementTree.indent(suites)
    out.raw('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.raw(ElementTree.tostring(suites, encoding="unicode") + "\n")


def _gitlab(findings: Sequence[Finding], out: Output, failing: Sequence[str]) -> None:
    report = []
    seen: Counter[str] = Counter()
    for f in findings:
        path = out.path(f.path)
        # Stable across runs and line moves; one more occurrence of the same text differs.
        key = f"{f.code}\0{path}\0{out.text(f.message)}"
        seen[key] += 1
        digest = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
        report.append(
            {
                "description": f"{f.code} {out.text(f.message)}",
                "check_name": f.code,
                "fingerprint": digest,
                "severity": _GITLAB_SEVERITY[f.severity],
                "location": {"path": path, "lines": {"begin": f.line}},
            }
        )
    out.raw(json.dumps(report, indent=2) + "\n")


_WRITERS: dict[str, Callable[[Sequence[Finding], Output, Sequence[str]], None]] = {
    "text": _text,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
    "junit": _junit,
    "gitlab": _gitlab,
}
assert tuple(_WRITERS) == FORMATS


def write_findings(
    findings: Sequence[Finding], fmt: str, out: Output, failing: Sequence[str] = ("error",)
) -> None:
    """Write *findings* in format *fmt*; *failing* are the severities that fail the run."""
    _WRITERS[fmt](findings, out, failing)


def write_statistics(findings: Sequence[Finding], fmt: str, out: Output) -> None:
    """How often each code was found, most frequent first (``--statistics``)."""
    counts = Counter(f.code for f in findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    # A rule may report at another severity than its default (FTS009, FTS016).
    severities: dict[str, list[str]] = {}
    for level in ("error", "warning", "info"):
        for f in findings:
            if f.severity == level and level not in severities.setdefault(f.code, []):
                severities[f.code].append(level)
    if fmt == "json":
        data = [
            {
                "code": code,
                "count": count,
                "severities": severities[code],
                "summary": RULES[code].summary,
                "url": RULES[code].url,
            }
            for code, count in rows
        ]
        out.raw(json.dumps(data, indent=2) + "\n")
        return
    width = len(str(rows[0][1])) if rows else 1
    for code, count in rows:
        shown = ", ".join(out.paint(s, s) for s in severities[code])
        out.line(f"{count:>{width}}  {code}  [{shown}] {RULES[code].summary}")
