"""The diff of an inheriting override: per definition, not per file.

An override that calls ``inherit(globals())`` holds only the definitions it
changes; a file diff against its lower version shows everything else as
removed.  :func:`definition_diffs` compares instead each top-level
definition after the ``inherit`` call with the lower version's definition of
that name.
"""

from __future__ import annotations

import difflib
import io
from typing import NamedTuple, Optional

from .digest import Analysis, Definition

__all__ = ["DefinitionDiff", "definition_diffs"]


class DefinitionDiff(NamedTuple):
    """One definition an inheriting override changes."""

    name: str
    # "replaced" (a new version of a lower definition), "wrapped" (replaced, but
    # the lower version's object is read first), "added" (no lower definition)
    # or "deleted" (removed with ``del name``).
    state: str
    line: int  # in the override
    diff: str


def _lines(text: str) -> list[str]:
    return io.StringIO(text, newline=None).readlines()


def definition_diffs(
    lower: Analysis, lower_path: str, mine: Analysis, path: str
) -> list[DefinitionDiff]:
    """What the override (*mine*, at *path*) changes in *lower*, in the override's order."""
    found: list[DefinitionDiff] = []
    seen: set[tuple[int, int]] = set()
    for name, ours in sorted(mine.after.items(), key=lambda item: (item[1].start, item[0])):
        theirs: Optional[Definition] = lower.definitions.get(name)
        new = _lines(mine.segment(ours))
        if theirs is None:
            state, old = "added", []
        else:
            state = "wrapped" if name in mine.captured else "replaced"
            old = _lines(lower.segment(theirs))
        if (ours.start, ours.end) in seen:
            diff = ""  # one statement binding several names: shown once
        else:
            diff = "".join(
                difflib.unified_diff(
                    old,
                    new,
                    f"{lower_path}:{name}" if theirs else "/dev/null",
                    f"{path}:{name}",
                )
            )
        seen.add((ours.start, ours.end))
        found.append(DefinitionDiff(name, state, ours.node.lineno, diff))
    for name, line in mine.deleted:
        theirs = lower.definitions.get(name)
        old = _lines(lower.segment(theirs)) if theirs is not None else []
        diff = "".join(difflib.unified_diff(old, [], f"{lower_path}:{name}", "/dev/null"))
        found.append(DefinitionDiff(name, "deleted", line, diff))
    return found
