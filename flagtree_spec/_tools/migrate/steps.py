"""What a plan is: one :class:`Step` per entry of the copy, gathered in a :class:`Plan`."""

from __future__ import annotations

import os
from typing import Any, NamedTuple, Optional

__all__ = ["ACTIONS", "Given", "Plan", "Step"]

ACTIONS = ("drop", "move", "minimize", "add", "link", "keep")
# What --minimize needs to plan one differing module again: the copy's text,
# trunk's, the base's, where the counterpart is, the copy's bytes, its line
# count and the counterpart file.
Given = tuple[str, str, Optional[str], str, bytes, int, str]


class Step(NamedTuple):
    """One entry of the copy and what happens to it."""

    path: str  # relative to the fork, "/"-separated
    trunk: Optional[str]  # the counterpart file
    action: str
    reason: str
    lines_before: int
    lines_after: int
    text: Optional[bytes] = None  # the minimized file
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "trunk": self.trunk,
            "action": self.action,
            "reason": self.reason,
            "lines_before": self.lines_before,
            "lines_after": self.lines_after,
            "notes": list(self.notes),
        }


class Plan(NamedTuple):
    fork: str
    trunk: str
    into: str
    leftovers: str
    steps: list[Step]
    missing: list[str]  # trunk files the copy lacks, relative
    warnings: list[str]
    spec_path: list[str]  # trunk __init__.py files the overrides need the call in
    minimize: bool

    def summary(self) -> dict[str, int]:
        return {a: sum(s.action == a for s in self.steps) for a in ACTIONS}

    def as_dict(self) -> dict[str, Any]:
        return {
            "fork": self.fork,
            "trunk": self.trunk,
            "into": self.into,
            "leftovers": self.leftovers,
            "entries": [s.as_dict() for s in self.steps],
            "summary": self.summary(),
            "missing": self.missing,
            "warnings": self.warnings,
            "spec_path": self.spec_path,
        }

    def destination(self, step: Step) -> Optional[str]:
        if step.action in ("move", "add", "minimize"):
            return os.path.join(self.into, *step.path.split("/"))
        if step.action == "keep":
            return os.path.join(self.leftovers, os.path.basename(self.fork), *step.path.split("/"))
        return None
