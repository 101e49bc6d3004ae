"""Every code example in README.md and docs/*.md runs here, so the docs cannot rot.

Each fenced block of README.md and of every file in docs/ (found with a
glob, so a new page is checked without being registered) is one test:

* ```` ```python ````: run as a script in a fresh interpreter; it must exit 0
  (put ``assert`` lines in an example to show what it returns).
* ```` ```console ````: every line starting with ``$ `` is a command (a line
  ending in ``\\`` continues it), run with ``bash -c``; the lines after it, up
  to the next command, are its expected output, stdout and stderr together.
  A command that changes folder (``$ cd DIR``, also in ``a && cd DIR``)
  leaves the next command in that folder. Exit codes are not compared: end
  the command with ``; echo "exit $?"`` when one matters.
* ```` ```text ````, ``json``, ``yaml``, ``toml``, ``ini``, ``mermaid``,
  ``diff``: not code; not run (a ``json`` block must parse).
* Any other block (no language, ``bash``, ``sh``, a console block without a
  ``$`` line) fails: make it runnable, or mark it.

A page with blocks whose info string holds ``file=PATH`` (```` ```python
file=python/toy/ops.py ````) is one *scenario*, a single test: its blocks run
in order in one fresh, empty folder; a ``file=`` block is written to ``PATH``
there (replacing an earlier version), the others run as above in that folder.
``<!-- docs: scenario shown-as=/home/me/toy -->`` anywhere on such a page
writes the folder's path as ``/home/me/toy`` in the actual output instead of
removing it (rule 2 below).

An HTML comment on the line before a block (blank lines may separate them)
controls it:

* ``<!-- docs: no-run (reason) -->``: not run; the reason is required.
* ``<!-- docs: cwd=DIR NAME=value ... -->``: run in ``DIR`` (relative to the
  repository root; default: the repository root for console blocks, an empty
  folder for python blocks) with the environment variables given (quoted as
  in the shell; a relative ``PYTHONPATH`` entry is resolved against ``DIR``).
  An absolute ``DIR`` continues a session that an earlier block of the page
  started there (blocks run in page order); ``shown-as=PATH`` writes the
  folder's path as ``PATH`` in the actual output instead of removing it.

Every block runs with the environment of the test process minus ``PYTHONPATH``
and every ``FLAGTREE_*`` variable, with the folder of the interpreter under
test first on ``PATH`` (so ``python``, ``pytest`` and ``flagtree-spec`` are
the installed ones), ``COLUMNS=80``, ``PYTHONDONTWRITEBYTECODE=1`` and
``PYTHONUNBUFFERED=1`` (so stdout and stderr interleave as written), and a
git author and committer (a page may commit in a git work tree).

Output is compared line by line after these rules, and no others:

1. trailing white space and trailing blank lines are ignored;
2. in the actual output, the command's folder followed by ``/`` is removed
   (paths below it read as relative paths, as text output prints them
   itself; JSON keeps them absolute) and the repository root is written
   ``<repo>``;
3. in the expected output, ``...`` alone on a line matches any number of
   lines (none included), and ``...`` inside a line matches any text;
4. a run of three or more ``=`` matches any run of ``=`` (pytest's separator
   lines change width with their text).

A page may work in ``/tmp/...`` as a reader would: the harness gives the test
run a private folder for it (``/tmp/`` in a command or an absolute ``cwd`` is
rewritten to that folder, and the folder is written ``/tmp`` in the actual
output), so two test runs at once never share, or delete, each other's files.
"""

from __future__ import annotations

import atexit
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple, Optional

import pytest
from conftest import NEUTRAL, clean_env

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# The folder that stands for /tmp in the pages' commands, private to this test run.
SCRATCH = Path(tempfile.mkdtemp(prefix="flagtree-spec-docs-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def private_tmp(text: str) -> str:
    """*text* with the pages' ``/tmp/`` turned into this run's own folder."""
    return text.replace("/tmp/", f"{SCRATCH}/")


NOT_CODE = {"text", "json", "yaml", "toml", "ini", "mermaid", "diff"}
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs:\s*(?P<body>.*?)\s*-->\s*$")


class Block(NamedTuple):
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    directive: Optional[str]
    file: Optional[str]  # the path of a scenario's file block

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of *page*, each with the directive just before it."""
    found = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        directive = None
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        if before >= 0:
            match = _DIRECTIVE.match(lines[before])
            directive = match["body"] if match else None
        body = []
        end = index + 1
        while end < len(lines):
            closing = lines[end].strip()
            if closing.startswith(fence[0] * len(fence)) and not closing.strip(fence[0]):
                break
            body.append(lines[end][len(indent) :] if lines[end].startswith(indent) else lines[end])
            end += 1
        info = opening["info"].split()
        language = info[0] if info else ""
        target = next((w[5:] for w in info[1:] if w.startswith("file=")), None)
        text = "\n".join(body) + "\n"
        found.append(Block(page, index + 1, language, text, directive, target))
        index = end + 1
    return found


_SHOWN_AS = re.compile(r"<!--\s*docs:\s*scenario\s+shown-as=(\S+)\s*-->")
SCENARIOS = {page for page in PAGES if any(b.file for b in blocks(page))}
ALL = [block for page in PAGES if page not in SCENARIOS for block in blocks(page)]


class Context(NamedTuple):
    cwd: Path
    env: dict[str, str]
    shown_as: Optional[str]


def context(block: Block, default_cwd: Path) -> Context:
    env = clean_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["COLUMNS"] = "80"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as written
    for role in ("AUTHOR", "COMMITTER"):  # a page may commit in a git work tree
        env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = "docs", "docs@example.invalid"
    cwd = default_cwd
    shown_as = None
    for word in shlex.split(block.directive or ""):
        name, equals, value = word.partition("=")
        if not equals:
            pytest.fail(f"{block.id}: directive word {word!r} is not NAME=value")
        if name == "cwd":
            cwd = REPO / private_tmp(value)  # an absolute value stays as it is
            if not cwd.is_dir():
                pytest.fail(f"{block.id}: cwd={value} is not a folder (yet)")
        elif name == "shown-as":
            shown_as = value
        else:
            env[name] = value
    if "PYTHONPATH" in env:
        env["PYTHONPATH"] = os.pathsep.join(
            str(cwd / entry) for entry in env["PYTHONPATH"].split(os.pathsep)
        )
    return Context(cwd, env, shown_as)


def commands(block: Block) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of a console block."""
    found: list[tuple[str, list[str]]] = []
    lines = block.text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1] + "\n" + lines[index]
            found.append((command, []))
        elif found:
            found[-1][1].append(line)
        elif line.strip():
            pytest.fail(f"{block.id}: output line {line!r} comes before any '$ ' command")
        index += 1
    return found


def normalise(output: str, cwd: Path, shown_as: Optional[str] = None) -> list[str]:
    # A scenario may show its folder as a path of its own; else paths are relative.
    text = output.replace(f"{cwd}/", "") if shown_as is None else output.replace(str(cwd), shown_as)
    text = text.replace(str(REPO), "<repo>").replace(str(SCRATCH), "/tmp")
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def pattern(expected: list[str]) -> re.Pattern[str]:
    lines = [line.rstrip() for line in expected]
    while lines and not lines[-1]:
        lines.pop()
    parts = []
    for line in lines:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        escaped = re.escape(line).replace(re.escape("..."), "[^\n]*?")
        parts.append(re.sub("={3,}", "=+", escaped) + r"\n")
    return re.compile("".join(parts))


def check_output(block: Block, command: str, expected: list[str], actual: list[str]) -> None:
    text = "".join(f"{line}\n" for line in actual)
    if pattern(expected).fullmatch(text):
        return
    diff = "\n".join(
        difflib.unified_diff(expected, actual, "documented", "actual", lineterm="", n=2)
    )
    pytest.fail(f"{block.id}: the output of `$ {command}` differs from the docs:\n{diff}")


def run_console(
    block: Block, folder: Optional[Path] = None, shown_as: Optional[str] = None
) -> None:
    ctx = context(block, folder or REPO)
    steps = commands(block)
    if not steps:
        pytest.fail(
            f"{block.id}: a console block without a '$ ' command cannot run; write the "
            "commands as '$ command' with their output, or mark it <!-- docs: no-run (reason) -->"
        )
    cwd = ctx.cwd
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "cwd"
        for command, expected in steps:
            # The folder a command ends in (after a `cd`) is where the next one starts.
            script = f'{private_tmp(command)}\n__status=$?\npwd > "{state}"\nexit $__status\n'
            proc = subprocess.run(
                ["bash", "-c", script],
                cwd=cwd,
                env=ctx.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=120,
            )
            shown = normalise(proc.stdout, cwd, shown_as or ctx.shown_as)
            check_output(block, command, expected, shown)
            if state.exists():
                cwd = Path(state.read_text(encoding="utf-8").strip())


def run_python(block: Block, folder: Optional[Path] = None) -> None:
    ctx = context(block, folder or NEUTRAL)
    proc = subprocess.run(
        [sys.executable, "-c", block.text],
        cwd=ctx.cwd,
        env=ctx.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{block.id}: the example exited with code {proc.returncode}\n--- stdout\n"
            f"{proc.stdout}\n--- stderr\n{proc.stderr}"
        )


def marked_no_run(block: Block) -> bool:
    directive = block.directive or ""
    if not directive.startswith("no-run"):
        return False
    reason = directive[len("no-run") :].strip()
    if not (reason.startswith("(") and reason.endswith(")") and reason.strip("() ")):
        pytest.fail(f"{block.id}: write the reason: <!-- docs: no-run (why it cannot run) -->")
    return True


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_code_example(block: Block) -> None:
    run_block(block)


@pytest.mark.parametrize(
    "page", sorted(SCENARIOS), ids=[str(p.relative_to(REPO)) for p in sorted(SCENARIOS)]
)
def test_scenario_page(page: Path, tmp_path: Path) -> None:
    found = _SHOWN_AS.search(page.read_text(encoding="utf-8"))
    shown_as = found.group(1) if found else None
    folder = tmp_path / (Path(shown_as).name if shown_as else "work")
    folder.mkdir()
    for block in blocks(page):
        if block.file is not None and not marked_no_run(block):
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
        else:
            run_block(block, folder, shown_as)


def run_block(block: Block, folder: Optional[Path] = None, shown_as: Optional[str] = None) -> None:
    if marked_no_run(block):
        return
    if block.language == "python":
        run_python(block, folder)
    elif block.language == "console":
        run_console(block, folder, shown_as)
    elif block.language in NOT_CODE:
        if block.language == "json":
            json.loads(block.text)
    else:
        pytest.fail(
            f"{block.id}: a ```{block.language or '(no language)'} block cannot be run; use "
            "```python or ```console ('$ command' lines and their output), a data language "
            f"({', '.join(sorted(NOT_CODE))}), or mark it <!-- docs: no-run (reason) -->"
        )


def test_every_docs_page_is_linked_from_the_readme():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in readme]
    assert missing == [], f"docs pages the README does not link to: {missing}"


def test_api_page_has_a_section_for_every_public_name():
    import flagtree_spec

    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in flagtree_spec.__all__ if f"`{name}" not in text]
    assert missing == [], f"public names docs/api.md does not describe: {missing}"


def test_command_line_page_shows_every_check_code_in_real_output():
    from flagtree_spec._tools.check.driver import RULES

    shown = set()
    for block in blocks(REPO / "docs" / "cli.md"):
        if block.language == "console" and not marked_no_run(block):
            for _, output in commands(block):
                shown.update(re.findall(r"\bFTS\d{3}\b", "\n".join(output)))
    missing = sorted(set(RULES) - shown)
    assert missing == [], f"check codes docs/cli.md shows no run of: {missing}"


def test_every_file_block_is_named_by_the_line_before_it():
    # GitHub's renderer shows no info string: the reader learns the file from the text.
    unnamed = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for block in blocks(page):
            if block.file is None:
                continue
            before = block.line - 2
            while before >= 0 and not lines[before].strip():
                before -= 1
            if f"`{block.file}`" not in lines[before]:
                unnamed.append(f"{block.id}: {block.file}")
    assert unnamed == [], f"file= blocks whose preceding line does not name the file: {unnamed}"
    assert any(b.file for b in blocks(REPO / "docs" / "tutorial.md"))


def test_every_documented_mkdocs_serve_silences_the_themes_banner():
    # The Material theme prints an end-of-life banner at each run unless told not to:
    # every `mkdocs serve`, and every `mkdocs build` given as a command line, silences it.
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    runs = re.findall(r"(?:`|^)((?:\S+=\S+ )*mkdocs serve)\b", text, flags=re.M)
    runs += re.findall(r"^((?:\S+=\S+ )*mkdocs build)\b", text, flags=re.M)
    assert len(runs) >= 2, runs
    assert [r for r in runs if not r.startswith("NO_MKDOCS_2_WARNING=1 ")] == []


def test_harness_rules_match_and_reject():
    expected = ["a", "...", "x ... y", "=== 1 passed ==="]
    ok = pattern(expected)
    assert ok.fullmatch("a\nb\nc\nx 12 y\n= 1 passed =====\n")
    assert ok.fullmatch("a\nx  y\n=== 1 passed ===\n")
    assert not ok.fullmatch("a\nx 12 z\n=== 1 passed ===\n")
    assert not ok.fullmatch("b\nx y\n=== 1 passed ===\n")
    assert normalise(f"{REPO}/docs/x.md:1\n{REPO}/a  \n\n", REPO / "docs") == [
        "x.md:1",
        "<repo>/a",
    ]
