"""docs/tutorial.md is run: its files are written and its commands compared with their output.

The tutorial's fenced blocks are read in order. A block whose info string
holds ``file=PATH`` is written to ``PATH`` (replacing an earlier version);
a ``console`` block is a list of ``$ command`` lines, each followed by the
output it prints (standard output, then standard error). The commands run in
a POSIX shell in a fresh folder, with this environment's ``python`` and
``flagtree-spec`` first on ``PATH``; the folder's path is shown as
``/home/me/toy`` in the tutorial.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple, Union

import pytest
from conftest import clean_env

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"
SHOWN_AS = "/home/me/toy"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# Blocks that are read, not run: the layout drawing.
NOT_RUN = {"text"}


class File(NamedTuple):
    path: str
    text: str


class Command(NamedTuple):
    line: str
    output: str


def steps(markdown: str) -> list[Union[File, Command]]:
    found: list[Union[File, Command]] = []
    for match in FENCE.finditer(markdown):
        language, info, body = match.group(1), match.group(2), match.group(3)
        target = re.search(r"\bfile=(\S+)", info)
        if target:
            found.append(File(target.group(1), body))
        elif language == "console":
            chunks = re.split(r"^\$ ", body, flags=re.MULTILINE)
            assert not chunks[0].strip(), f"console block must start with '$ ': {body!r}"
            for chunk in chunks[1:]:
                line, _, output = chunk.partition("\n")
                found.append(Command(line, output))
        else:
            assert language in NOT_RUN, f"tutorial block ```{language} is neither run nor a file"
    return found


def test_tutorial_has_files_and_commands_to_run():
    found = steps(TUTORIAL.read_text(encoding="utf-8"))
    files = {s.path for s in found if isinstance(s, File)}
    commands = [s.line for s in found if isinstance(s, Command)]
    assert {"python/toy/__init__.py", "third_party/fastcpu/backend/spec/toy/ops.py"} <= files
    assert any(c.startswith("flagtree-spec check") for c in commands)
    assert any("FLAGTREE_BACKEND=fastcpu" in c and "python demo.py" in c for c in commands)


@pytest.mark.skipif(os.name != "posix", reason="the tutorial's commands are for a POSIX shell")
def test_tutorial_every_step_runs_and_prints_what_it_shows(tmp_path):
    work = tmp_path / "toy"
    work.mkdir()
    env = clean_env()
    # This interpreter's folder holds its python and the flagtree-spec script.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ran = 0
    for step in steps(TUTORIAL.read_text(encoding="utf-8")):
        if isinstance(step, File):
            target = work / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
            continue
        proc = subprocess.run(
            ["sh", "-c", step.line],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        shown = (proc.stdout + proc.stderr).replace(str(work), SHOWN_AS)
        assert shown.strip() == step.output.strip(), (
            f"$ {step.line}\n--- the tutorial shows\n{step.output}--- it prints\n{shown}"
        )
        ran += 1
    assert ran >= 5
