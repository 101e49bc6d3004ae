"""The ``lock``, ``rebase`` and ``spec-path`` commands of ``flagtree-spec``.

``lock -b B`` records what each override of backend ``B`` was made against;
``rebase -b B`` merges what changed since into the overrides; ``spec-path -b
B`` names (and with ``--apply`` inserts the call into) the trunk package
inits that must call ``spec_path(__path__)`` for B's mirror files to load,
which a new trunk does not have.  Exit codes: 0 done (``rebase``: no
conflict; ``spec-path``: no call missing), 1 a conflict remains (``rebase``),
or calls are missing and ``--apply`` was not given (``spec-path``), 2 usage or
input error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from typing import Any

from ..migrate.apply import insert_spec_path
from ..model.model import InputError
from ..model.overrides import inits_needing_spec_path
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
    locked, outcomes = rebase.plan(model, spec_root, args.old_trunk, args.drop_identical)
    olds = {
        o.path: model.source(o.path).text if os.path.isfile(o.path) else ""
        for o in outcomes
        if o.text is not None
    }
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
        for state in ("whole", "identical", "restored", "deleted"):
            counts[state] = sum(o.state == state for o in outcomes)
            if not counts[state]:
                del counts[state]
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        if not args.apply:
            tail = "nothing written (pass --apply to write the merges)"
        else:
            tail = f"wrote {written} file{'s' if written != 1 else ''}"
            if conflicts:
                again = f"flagtree-spec lock{lock.option(spec_root)}"
                tail += f"; resolve the conflict markers (<<<<<<<), then run '{again}'"
        out.note(f"{summary}; {tail}")
        inits = inits_needing_spec_path(model, spec_root)
        if inits:
            out.note(
                f"note: {len(inits)} package init{'s' if len(inits) != 1 else ''} of the trunk "
                "that the mirror files need do not call spec_path(__path__) (a new trunk?): "
                f"'flagtree-spec spec-path{lock.option(spec_root)} --apply' inserts it"
            )
    return 1 if conflicts else 0


def _installed(path: str) -> bool:
    parts = os.path.realpath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def _spec_path(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    spec_root = lock.target(model)
    inits = inits_needing_spec_path(model, spec_root)
    if inits and args.apply and _installed(model.rdir):
        raise InputError(
            f"the trunk {model.rdir} is installed (under site-packages): editing its files is "
            "not the fix; 'flagtree-spec run' (or install()) specialises it without a call"
        )
    added = [init for init in inits if insert_spec_path(init)] if args.apply else []
    if args.format == "json":
        data = {"missing": inits, "applied": args.apply, "added": added}
        out.raw(json.dumps(data, indent=2) + "\n")
    else:
        for init in inits:
            out.line(f"{'added' if init in added else 'missing'}  {init}")
        if not inits:
            tail = "every package init the mirror files need calls spec_path(__path__)"
        elif args.apply:
            tail = f"inserted the guarded spec_path(__path__) idiom into {len(added)} package inits"
        else:
            tail = (
                f"{len(inits)} package init{'s' if len(inits) != 1 else ''} the mirror files "
                "need do not call spec_path(__path__); nothing written (pass --apply to insert "
                "the call)"
            )
        out.note(tail)
    return 1 if inits and not args.apply else 0


def add_commands(commands: Any) -> None:
    """Register ``lock``, ``rebase`` and ``spec-path``."""
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
        "merge per replaced definition. An override whose trunk file is gone is written "
        "whole (the locked trunk version plus the override); a module the lock recorded as the "
        "trunk's that the trunk deleted is restored into the mirror tree where something "
        "imports it. Prints clean / conflict / unchanged / whole / restored / deleted and the "
        "diff per override; writes nothing without --apply. Exit 1 when a conflict remains.",
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
    parser.add_argument(
        "--drop-identical",
        action="store_true",
        help="leave out of each inheriting override the definitions that are identical to the "
        "new trunk's (and remove an override that is the trunk's module again)",
    )
    parser = add_command(
        commands,
        "spec-path",
        _spec_path,
        help="name (or insert) the spec_path(__path__) calls the trunk needs for the overrides",
        description="List the trunk package __init__.py files that must call "
        "spec_path(__path__) for the backend's mirror files to load and do not (a new trunk, "
        "say, after an upgrade replaced the one that had them): each module's package, a "
        "package-init override's parent (and its own trunk __init__ when it inherits it). "
        "With --apply, insert the guarded idiom into each, after the docstring and "
        "'from __future__' imports, before every other statement (as migrate --add-spec-path "
        "does). Exit 1 when calls are missing and --apply is not given.",
    )
    parser.add_argument(
        "--apply", action="store_true", help="insert the guarded idiom into those package inits"
    )
