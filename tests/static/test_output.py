"""What the commands print: relative paths, color, --output-file, --quiet, check's formats."""

from __future__ import annotations

import copy
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from cli_support import run
from conftest import FIXTURES, clean_env

from flagtree_spec._tools.check.registry import RULES
from flagtree_spec._tools.cli.output import color_wanted

CHECK = FIXTURES / "check"
SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-2.1.0-subset.schema.json").read_text())
ESC = "\x1b["


# --------------------------------------------------------------------------- paths


def test_text_output_shows_paths_below_the_working_folder_relative_and_json_absolute(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = CHECK / "fts004_missing_name"
    monkeypatch.chdir(repo)
    code, out, err = run(capsys, "check", "-b", "vendor", "--select", "FTS004")
    assert code == 1
    assert out.splitlines()[0].startswith(
        "third_party/vendor/backend/spec/namepkg/language/core.py:1:1: FTS004 does not define "
        "'async_task', which python/namepkg/language/semantic.py:1 imports from it"
    )
    assert str(repo) not in out + err
    code, out, _ = run(capsys, "check", "-b", "vendor", "--select", "FTS004", "--format", "json")
    paths = [f["path"] for f in json.loads(out)["findings"]]
    assert paths and all(p.startswith(f"{repo}{os.sep}") for p in paths)
    # Every other command's text output too, its headers of diffs included.
    for argv in (
        ["status", "-b", "vendor"],
        ["which", "namepkg.language.core", "-b", "vendor"],
        ["list", "-b", "vendor"],
        ["diff", "namepkg.language.core", "-b", "vendor"],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        assert "third_party/vendor/backend/spec" in out and str(repo) not in out, (argv, out)
    code, out, _ = run(capsys, "diff", "namepkg.language.core", "-b", "vendor", "--format", "json")
    assert json.loads(out)["diff"].startswith(f"--- {repo}/python/namepkg/language/core.py\n")


def test_paths_outside_the_working_folder_stay_absolute(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = CHECK / "fts003_identical"
    monkeypatch.chdir(FIXTURES / "neutral_cwd")
    _, out, _ = run(capsys, "check", "--repo", str(repo), "-b", "vendor")
    assert out.startswith(f"{repo}/third_party/vendor/backend/spec/samepkg/util.py:1:1: FTS003")
    # A folder whose name starts like the working folder's is not below it.
    shutil.copytree(repo, tmp_path / "ab")
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    _, out, _ = run(capsys, "which", "samepkg.util", "--repo", str(tmp_path / "ab"))
    assert out == f"samepkg.util: {tmp_path}/ab/python/samepkg/util.py  [trunk]\n"
    monkeypatch.chdir(tmp_path / "ab" / "python")
    _, out, _ = run(capsys, "which", "samepkg.util", "--repo", str(tmp_path / "ab"))
    assert out == "samepkg.util: samepkg/util.py  [trunk]\n"


# --------------------------------------------------------------------------- color


def test_color_follows_the_option_then_no_color_then_force_color_then_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    leader, follower = pty.openpty()
    terminal = os.fdopen(follower, "w")
    pipe_r, pipe_w = os.pipe()
    piped = os.fdopen(pipe_w, "w")
    try:
        for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
            monkeypatch.delenv(name, raising=False)
        assert color_wanted("auto", terminal) and not color_wanted("auto", piped)
        assert color_wanted("always", piped) and not color_wanted("never", terminal)
        monkeypatch.setenv("TERM", "dumb")
        assert not color_wanted("auto", terminal)
        monkeypatch.delenv("TERM")
        monkeypatch.setenv("FORCE_COLOR", "1")
        assert color_wanted("auto", piped)
        monkeypatch.setenv("NO_COLOR", "1")  # wins over FORCE_COLOR, as in CPython
        assert not color_wanted("auto", terminal) and not color_wanted("auto", piped)
        assert color_wanted("always", piped)
        monkeypatch.setenv("NO_COLOR", "")  # empty: not set
        monkeypatch.delenv("FORCE_COLOR")
        assert color_wanted("auto", terminal)
    finally:
        terminal.close()
        piped.close()
        os.close(leader)
        os.close(pipe_r)


def _through_a_terminal(argv: list[str], cwd: Path, **env: str) -> str:
    """What ``flagtree-spec *argv`` writes to a pseudo-terminal (stdout and stderr)."""
    leader, follower = pty.openpty()
    environment = clean_env()
    for name in ("NO_COLOR", "FORCE_COLOR"):
        environment.pop(name, None)
    environment.update(TERM="xterm", **env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "flagtree_spec", *argv],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 1
    return b"".join(chunks).decode()


def test_check_is_colored_on_a_terminal_and_not_with_no_color_or_never() -> None:
    repo = CHECK / "fts001_dead_override"
    colored = _through_a_terminal(["check", "-b", "vendor"], repo)
    path = "third_party/vendor/backend/spec/deadpkg/plain/mod.py"
    assert f"{ESC}1m{path}{ESC}0m:1:1: {ESC}1;31mFTS001{ESC}0m never loads" in colored.replace(
        "vendor:deadpkg/plain/mod.py ", ""
    )
    assert f"{ESC}1;31m1 error, 0 warnings, 0 info in 1 file{ESC}0m" in colored
    plain = _through_a_terminal(["check", "-b", "vendor"], repo, NO_COLOR="1")
    assert ESC not in plain and f"{path}:1:1: FTS001" in plain
    assert ESC not in _through_a_terminal(["check", "-b", "vendor", "--color", "never"], repo)
    piped = subprocess.run(
        [sys.executable, "-m", "flagtree_spec", "check", "-b", "vendor"],
        cwd=repo,
        env={**clean_env(), "TERM": "xterm"},
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 1 and ESC not in piped.stdout + piped.stderr
    assert piped.stdout.startswith(f"{path}:1:1: FTS001")


# --------------------------------------------------------------------------- options


def test_output_file_quiet_statistics_and_exit_zero(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = str(CHECK / "fts004_missing_name")
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys, "check", "--repo", repo, "-b", "vendor", "--format", "json",
        "--output-file", str(report),
    )  # fmt: skip
    assert code == 1 and out == ""
    assert len(json.loads(report.read_text())["findings"]) == 5
    assert err == "3 errors, 1 warning, 1 info in 2 files\n"
    code, out, err = run(capsys, "check", "--repo", repo, "-b", "vendor", "--quiet")
    assert code == 1 and err == "" and len(out.splitlines()) == 5
    code, out, err = run(capsys, "check", "--repo", repo, "-b", "vendor", "--exit-zero")
    assert code == 0 and len(out.splitlines()) == 5
    code, out, _ = run(capsys, "check", "--repo", repo, "-b", "vendor", "--statistics")
    assert out.splitlines() == [
        "3  FTS004  [error] an import fails: a module that exists nowhere, or a name it lacks",
        "1  FTS005  [warning] public names of the shadowed module missing from the override",
        "1  FTS008  [info] module added by the backend",
    ]
    assert code == 1
    code, out, _ = run(
        capsys, "check", "--repo", repo, "-b", "vendor", "--statistics", "--format", "json"
    )
    assert [(r["code"], r["count"], r["severities"]) for r in json.loads(out)] == [
        ("FTS004", 3, ["error"]),
        ("FTS005", 1, ["warning"]),
        ("FTS008", 1, ["info"]),
    ]
    code, _, err = run(
        capsys, "check", "--repo", repo, "-b", "vendor", "--statistics", "--format", "sarif"
    )
    assert code == 2 and "--statistics counts findings per code in text or json" in err


def test_output_file_is_written_whole_or_not_at_all(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = str(CHECK / "fts004_missing_name")
    code, _, err = run(
        capsys, "check", "--repo", repo, "-b", "vendor", "--output-file", str(tmp_path / "no/r")
    )
    assert code == 2 and f"folder '{tmp_path / 'no'}' does not exist" in err
    target = tmp_path / "r.txt"
    code, _, err = run(
        capsys, "check", "--repo", repo, "-b", "nosuch", "--output-file", str(target)
    )
    assert code == 2 and "exists nowhere" in err
    assert not target.exists() and list(tmp_path.iterdir()) == []
    code, out, _ = run(capsys, "list", "--repo", repo, "-b", "vendor", "--output-file", str(target))
    assert code == 0 and out == "" and "namepkg.language.core" in target.read_text()


def test_a_report_file_is_colored_only_when_asked_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = str(CHECK / "fts001_dead_override")
    target = tmp_path / "r.txt"
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    run(capsys, "check", "--repo", repo, "-b", "vendor", "--output-file", str(target))
    assert ESC not in target.read_text()
    _, out, err = run(capsys, "check", "--repo", repo, "-b", "vendor")
    assert ESC in out and ESC in err  # FORCE_COLOR colors stdout and stderr
    run(
        capsys,
        "check",
        "--repo",
        repo,
        "-b",
        "vendor",
        "--output-file",
        str(target),
        "--color",
        "always",
    )
    assert f"{ESC}1;31mFTS001{ESC}0m" in target.read_text()


# --------------------------------------------------------------------------- formats


def _sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, _ = run(capsys, "check", *argv, "--format", "sarif")
    assert code in (0, 1)
    log: dict[str, object] = json.loads(out)
    return log


def test_sarif_is_valid_sarif_2_1_0_and_describes_every_rule(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = CHECK / "fts004_missing_name"
    monkeypatch.chdir(repo)
    log = _sarif(capsys, "-b", "vendor")
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    validator.validate(log)
    [run_] = log["runs"]  # type: ignore[index]
    driver = run_["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    for descriptor in driver["rules"]:
        rule = RULES[descriptor["id"]]
        assert (
            descriptor["helpUri"]
            == rule.url
            == (f"https://flagos-ai.github.io/flagtree_spec/rules/#{rule.code.lower()}")
        )
        assert descriptor["help"]["markdown"] == rule.explanation.markdown()
    results = run_["results"]
    assert len(results) == 5
    first = results[0]
    assert driver["rules"][first["ruleIndex"]]["id"] == first["ruleId"] == "FTS004"
    assert first["level"] == "error"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "third_party/vendor/backend/spec/namepkg/language/core.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    assert {r["level"] for r in results} == {"error", "warning", "note"}
    # Outside the working folder: absolute file URIs.
    monkeypatch.chdir(FIXTURES / "neutral_cwd")
    outside = _sarif(capsys, "--repo", str(repo), "-b", "vendor")
    validator.validate(outside)
    uri = outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]  # type: ignore[index]
    assert uri["artifactLocation"]["uri"].startswith(repo.as_uri())


def test_the_sarif_schema_rejects_what_sarif_forbids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The validation above proves something only if it can fail: plant the faults.
    log = _sarif(capsys, "--repo", str(CHECK / "fts004_missing_name"), "-b", "vendor")
    validator = jsonschema.Draft7Validator(SCHEMA)
    faults = {
        "version": lambda d: d.update(version="2.0.0"),
        "no runs": lambda d: d.pop("runs"),
        "level": lambda d: d["runs"][0]["results"][0].update(level="info"),
        "no message": lambda d: d["runs"][0]["results"][0].pop("message"),
        "line 0": lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
            "region"
        ].update(startLine=0),
        "helpURI": lambda d: d["runs"][0]["tool"]["driver"]["rules"][0].update(helpURI="x"),
        "no driver name": lambda d: d["runs"][0]["tool"]["driver"].pop("name"),
    }
    for name, plant in faults.items():
        broken = copy.deepcopy(log)
        plant(broken)
        assert not validator.is_valid(broken), name
    assert validator.is_valid(log)


def test_junit_has_a_suite_per_file_and_fails_what_fails_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = str(CHECK / "fts004_missing_name")
    code, out, _ = run(capsys, "check", "--repo", repo, "-b", "vendor", "--format", "junit")
    assert code == 1
    suites = ElementTree.fromstring(out.split("\n", 1)[1])
    assert suites.tag == "testsuites"
    assert (suites.get("tests"), suites.get("failures")) == ("5", "3")
    cases = suites.findall("testsuite/testcase")
    assert len(cases) == 5
    failed = [c for c in cases if c.find("failure") is not None]
    assert {c.find("failure").get("type") for c in failed} == {"error"}  # type: ignore[union-attr]
    passed = [c for c in cases if c.find("failure") is None]
    assert all(c.find("system-out") is not None for c in passed)
    code, out, _ = run(
        capsys, "check", "--repo", repo, "-b", "vendor", "--format", "junit", "--fail-on",
        "warning",
    )  # fmt: skip
    assert ElementTree.fromstring(out.split("\n", 1)[1]).get("failures") == "4"
    code, out, _ = run(
        capsys, "check", "--repo", str(CHECK / "clean"), "--format", "junit", "-b", "vendor"
    )
    clean = ElementTree.fromstring(out.split("\n", 1)[1])
    assert code == 0 and clean.get("failures") == "0" and len(clean.findall(".//testcase")) == 1


def test_gitlab_code_quality_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CHECK / "fts004_missing_name")
    code, out, _ = run(capsys, "check", "-b", "vendor", "--format", "gitlab")
    report = json.loads(out)
    assert code == 1 and len(report) == 5
    assert {r["severity"] for r in report} == {"major", "minor", "info"}
    first = report[0]
    assert set(first) == {"description", "check_name", "fingerprint", "severity", "location"}
    assert first["location"] == {
        "path": "third_party/vendor/backend/spec/namepkg/language/core.py",
        "lines": {"begin": 1},
    }
    assert first["check_name"] == "FTS004" and first["description"].startswith("FTS004 ")
    assert len({r["fingerprint"] for r in report}) == 5
    _, again, _ = run(capsys, "check", "-b", "vendor", "--format", "gitlab")
    assert [r["fingerprint"] for r in json.loads(again)] == [r["fingerprint"] for r in report]


def test_github_annotations_name_files_relative_and_escape_properties(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CHECK / "fts001_dead_override")
    _, out, _ = run(capsys, "check", "-b", "vendor", "--format", "github")
    assert out.startswith(
        "::error file=third_party/vendor/backend/spec/deadpkg/plain/mod.py,line=1,col=1,"
        "title=FTS001::vendor:deadpkg/plain/mod.py never loads"
    )
    from flagtree_spec._tools.cli.findings import _github_escape

    assert _github_escape("a,b:c%\n", property=True) == "a%2Cb%3Ac%25%0A"


def test_json_findings_carry_their_rules_documentation_url(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = str(CHECK / "fts004_missing_name")
    _, out, _ = run(capsys, "check", "--repo", repo, "-b", "vendor", "--format", "json")
    findings = json.loads(out)["findings"]
    assert [f["url"] for f in findings] == [RULES[f["code"]].url for f in findings]
    page = (FIXTURES.parent / "docs" / "rules.md").read_text()
    assert all(f"## {f['code']}\n" in page for f in findings)
