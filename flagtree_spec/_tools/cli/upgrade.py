"""The ``lock`` and ``rebase`` commands of ``flagtree-spec``.

``lock -b B`` records what each override of backend ``B`` was made against;
``rebase -b B`` merges what changed since into the overrides.  Exit codes:
0 done (``rebase``: no conflict), 1 a conflict remains (``rebase``), 2 usage
or input error.
"""

from __future__ import annotations

import argparse
import json
import shutil
from typing import Any

from ..model.model import InputError
from ..upgrade import lock, rebase
from .options import add_command, model_from
from .output import Output

__all__ = ["add_commands"]


def _lock(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    spec_root = lock.target(model)
    data = lock.build(model, spec_root)
    changed = lock.write(spec_root, data)
    path = lock.lock_path(spec_root)
    entries: dict[str, dict[str, Any]] = data["overrides"]
    inheriting = [e for e in entries.values() if "definitions" in e]
    no_blob = sorted(k for k, e in entries.items() if e["blob"] is None)
    if args.format == "json":
        data = {"lock": path, "changed": changed, "overrides": sorted(entries)}
        out.raw(json.dumps(data, indent=2) + "\n")
        return 0
    replaced = sum(len(e["definitions"]) for e in inheriting)
    what = (
        f"{len(entries)} override{'s' if len(entries) != 1 else ''} "
        f"({len(entries) - len(inheriting)} whole-file, {len(inheriting)} inheriting with "
        f"{replaced} replaced definition{'s' if replaced != 1 else ''})"
    )
    version = f", trunk {data['trunk_version']}" if data["trunk_version"] else ""
    out.line(f"{'wrote' if changed else 'unchanged'} {path}: {what}{version}")
    if no_blob:
        out.note(
            f"note: {len(no_blob)} counterpart{'s are' if len(no_blob) != 1 else ' is'} not in a "
            "git work tree (no blob id): rebase will need --old-trunk DIR for " + ", ".join(no_blob)
        )
    return 0


def _rebase(args: argparse.Namespace, out: Output) -> int:
    if shutil.which("git") is None:
        raise InputError(
            "rebase merges with 'git merge-file', and git is not installed or not "
            "on PATH; install git"
        )
    model = model_from(args)
    spec_root = lock.target(model)
    locked, outcomes = rebase.plan(model, spec_root, args.old_trunk)
    olds = {o.path: model.source(o.path).text for o in outcomes if o.text is not None}
    written = 0
    if args.apply:
        written = rebase.apply(spec_root, locked, outcomes, rebase.encodings(model, outcomes))
    conflicts = [o for o in outcomes if o.state == "conflict"]
    rows: list[dict[str, Any]] = [
        {
            "override": o.key,
            "file": o.path or None,
            "state": o.state,
            "message": o.message,
            "conflicts": o.conflicts,
            "definitions": [{"name": n, "state": s} for n, s in o.definitions],
            "diff": o.diff(
                olds.get(o.path, ""), shown=o.path if args.format == "json" else out.path(o.path)
            ),
        }
        for o in outcomes
    ]
    if args.format == "json":
        out.raw(json.dumps({"applied": args.apply, "overrides": rows}, indent=2) + "\n")
    else:
        for row in rows:
            note = f"  ({row['message']})" if row["message"] else ""
            out.line(f"{row['state']:<9} {row['override']}{note}")
            for d in row["definitions"]:
                out.line(f"  {d['name']}: {d['state']}")
            out.raw(row["diff"])
        counts = {s: sum(o.state == s for o in outcomes) for s in ("clean", "conflict")}
        counts["unchanged"] = sum(o.state == "unchanged" for o in outcomes)
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        if not args.apply:
            tail = "nothing written (pass --apply to write the merges)"
        else:
            tail = f"wrote {written} file{'s' if written != 1 else ''}"
            if conflicts:
                again = f"flagtree-spec lock{lock.option(spec_root)}"
                tail += f"; resolve the conflict markers (<<<<<<<), then run '{again}'"
        out.note(f"{summary}; {tail}")
    return 1 if conflicts else 0


def add_commands(commands: Any) -> None:
    """Register ``lock`` and ``rebase``."""
    add_command(
        commands,
        "lock",
        _lock,
        help="record what each override was made against (flagtree_spec.lock)",
        description="Write flagtree_spec.lock into the spec root of the backend (the first of "
        "the stack): per override, a digest of the version it shadows (comments, blank lines "
        "and docstrings do not count), its git blob id, and for an override that calls "
        "inherit(globals()) one digest per definition it replaces. check reports what changed "
        "since (FTS016); rebase merges it.",
    )
    parser = add_command(
        commands,
        "rebase",
        _rebase,
        help="merge the trunk's changes since the lock into the overrides",
        description="Merge each override's counterpart changes since the lock three ways "
        "(git merge-file --diff3): base = the locked version (from its git blob, or "
        "--old-trunk), ours = the override, theirs = the version now. Inheriting overrides "
        "merge per replaced definition. Prints clean / conflict / unchanged and the diff per "
        "override; writes nothing without --apply. Exit 1 when a conflict remains.",
    )
    parser.add_argument(
        "--old-trunk",
        metavar="DIR",
        help="the root package folder the lock was made against (instead of the git blobs)",
    )
    parser.add_argument(
        "--apply",
        action="store_true",
        help="write the merged files (atomically) and update the lock for clean merges",
    )
