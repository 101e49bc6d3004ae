"""The override report of the pytest plugin: which mirror files a session loaded.

The universe is the static model of each root package's current spec roots,
the files and states that ``flagtree-spec list`` prints; the plugin supplies
what it saw loaded (real paths of ``__spec__.origin`` and of ``__inherits__``)
and imports this module only when a report is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ... import _state
from ..._errors import SpecError
from ..model.model import Model
from ..model.overrides import list_rows

__all__ = ["build_report", "format_report"]

# The states of flagtree-spec list that mean "this file is the module that loads".
_LIVE = ("override", "added")
# Modules of a hook package: they load when a hook is first looked up, as hook modules.
_HOOK = ("hook", "hook fragment")


def build_report(
    roots: Iterable[str], auto: Iterable[str], origins: set[str], inherited: set[str]
) -> dict[str, Any]:
    """The report as a JSON-ready dict: every mirror file of each root, and whether it loaded.

    The files and their states come from the static model of the root's
    current spec roots (what ``flagtree-spec list`` prints); a file counts as
    loaded when a module's ``__spec__.origin`` was that file at some point
    of the session, and as inherited when a loaded module ran it through
    ``inherit(globals())``.
    """
    auto = set(auto)
    result: list[dict[str, Any]] = []
    for root in sorted(roots):
        try:
            state = _state.state_of(root)
        except SpecError as exc:
            result.append({"root": root, "error": str(exc)})
            continue
        model = Model(
            root,
            state.rdir,
            state.spec_roots,
            stack=state.stack,
            stack_source=state.source,
            auto=root in auto,
        )
        rows = sorted(list_rows(model), key=lambda r: (r["module"].split("."), r["file"]))
        for row in rows:
            real = os.path.realpath(row["file"])
            row["loaded"] = real in origins
            row["inherited"] = real in inherited
        result.append(
            {
                "root": root,
                "backends": list(state.stack),
                "source": state.source,
                "spec_roots": [r.path for r in state.spec_roots],
                "modules": rows,
            }
        )
    return {"roots": result}


def format_report(report: dict[str, Any]) -> list[str]:
    """The text form of :func:`build_report`'s result."""
    lines = []
    for entry in report["roots"]:
        root = entry["root"]
        if "error" in entry:
            lines.append(f"root package {root}: {entry['error']}")
            continue
        rows = entry["modules"]
        stack = ",".join(entry["backends"]) or "none"
        hooks = [r for r in rows if r["state"] in _HOOK]
        live = [r for r in rows if r not in hooks and (r["state"] in _LIVE or r["loaded"])]
        loaded = [r for r in live if r["loaded"]]
        lines.append(
            f"root package {root}, backend stack {stack} ({entry['source']}): "
            f"{len(loaded)} of {len(live)} overrides and added modules loaded"
        )
        groups = (
            ("loaded", loaded),
            ("never loaded", [r for r in live if not r["loaded"]]),
            ("ran only through inherit()", [r for r in rows if r not in live and r["inherited"]]),
            ("hook package, loaded", [r for r in hooks if r["loaded"]]),
            ("hook package, not loaded (no hook looked up)", [r for r in hooks if not r["loaded"]]),
            (
                "cannot load (flagtree-spec check says why)",
                [r for r in rows if r not in live and r not in hooks and not r["inherited"]],
            ),
        )
        for title, group in groups:
            if group:
                lines.append(f"  {title}:")
                lines.extend(f"    {r['state']:<9} {r['module']}  {r['file']}" for r in group)
        if not rows:
            lines.append("  no mirror tree: nothing to load")
    if not report["roots"]:
        lines.append(
            "no root package was imported (name one with --flagtree-root=R to list its overrides)"
        )
    return lines
