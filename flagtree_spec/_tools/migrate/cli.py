"""The ``flagtree-spec migrate`` command: options, output, and the check that follows."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any, Optional

from ..._config import parse_stack, read_declaration
from ..._discovery import discover
from ..._errors import SpecError
from ..._usage import add_format, error
from ..check.driver import Finding, check
from ..model.model import InputError, load
from ..model.repo import RepoError, detect_repo
from ..model.settings import SettingsError, settings_for
from .apply import Snapshot, apply
from .plan import BaseTree, Plan, make_plan
from .verify import Verification, copy_overlay, rehearse, report, verify

__all__ = ["add_commands"]

_DESCRIPTION = """\
Turn a legacy whole-tree copy of the root package (the fork) into a spec tree.
Every entry of the copy gets one action against its counterpart (the base
backend's override when the spec root's flagtree_spec.json names a base, else
the trunk's file):

  drop      byte- or AST-identical to its counterpart: removed
  move      differs: moved into the mirror tree (--into)
  minimize  differs: becomes inherit(globals()) plus what the backend changed
  add       no counterpart: an added module or file, moved
  link      a symlink (never followed; links hold no data): removed
  keep      cannot be an override (the root __init__, compiled files): moved
            under <backend>/migrate-leftovers/, with what to do about it

Without --apply nothing changes. With it, files move (git mv inside a git work
tree), a file that differs from its counterpart is never deleted, nothing under
the fork can load afterwards, and check runs on the new tree. An interrupted run
is completed by running again. --minimize with --apply needs the copy committed
and clean in git, so the full copy stays in history.

--verify imports every module of the copy in fresh interpreters, as the copy
and from trunk plus the new spec tree, and compares them per module and name
(without --apply, on scratch copies of the trees). --apply verifies unless
--no-verify, and undoes the migration when the verification fails unless
--keep-on-failure.

The folders come from --fork/--trunk/--into, or from a FlagTree-style
checkout: --repo DIR -b B [--root R] means --fork DIR/third_party/B/python/R,
--trunk DIR/python/R, --into DIR/third_party/B/backend/spec/R.

Exit codes: 0 done (or plan printed), 1 the verification failed or check found
errors in the new tree, 2 usage or input error (nothing changed).
"""


def _defaults(args: argparse.Namespace) -> None:
    """``-b`` and ``--root`` from ``[tool.flagtree-spec]``, for ``--repo`` (options win)."""
    if args.repo is None:
        return
    try:
        settings = settings_for(args.repo)
    except SettingsError as exc:
        raise InputError(str(exc)) from None
    if settings is None:
        return
    if args.backend is None and settings.backend:
        if len(settings.backend) != 1 or "," in settings.backend[0]:
            raise InputError(
                f"[tool.flagtree-spec] in {settings.path}: backend names a stack "
                f"({','.join(settings.backend)}); migrate moves one backend's copy: give -b B"
            )
        args.backend = settings.backend[0]
    if args.root is None and args.trunk is None and settings.root:
        args.root = settings.root


def _folders(args: argparse.Namespace) -> tuple[str, str, str, Optional[str]]:
    given = [args.fork, args.trunk, args.into]
    if args.repo is None:
        if None in given:
            raise InputError("give --fork, --trunk and --into, or --repo DIR -b B")
        if args.backend is not None or args.root is not None:
            raise InputError("-b and --root go with --repo; with --fork/--trunk/--into drop them")
        return args.fork, args.trunk, args.into, None
    if any(g is not None for g in given):
        raise InputError("give either --repo (with -b) or --fork/--trunk/--into, not both")
    if args.backend is None:
        raise InputError("--repo needs the backend whose copy to migrate: -b B")
    try:
        (backend,) = parse_stack(args.backend, "-b")
    except (SpecError, ValueError):
        raise InputError(f"-b {args.backend!r} is not one backend name") from None
    repo = os.path.abspath(args.repo)
    if args.root is not None:
        trunk = os.path.join(repo, "python", args.root)
    else:
        try:
            found = detect_repo(repo)
        except RepoError as exc:
            raise InputError(str(exc)) from None
        if found is None:
            raise InputError(f"--repo {repo} has no python/R/__init__.py; give --root R")
        trunk = found
    root = os.path.basename(trunk)
    spec_root = os.path.join(repo, "third_party", backend, "backend", "spec")
    into = os.path.join(spec_root, root)
    try:
        declaration = read_declaration(spec_root) if os.path.isdir(spec_root) else None
    except SpecError as exc:
        raise InputError(str(exc)) from None
    if declaration is not None and declaration.mirror is not None:
        into = os.path.join(spec_root, declaration.mirror)
    return os.path.join(repo, "third_party", backend, "python", root), trunk, into, backend


def _lower(trunk: str, into: str, backend: Optional[str]) -> list[str]:
    """Mirror folders of the backends the spec root's declaration names as its base."""
    spec_root = os.path.dirname(os.path.abspath(into))
    try:
        declaration = read_declaration(spec_root) if os.path.isdir(spec_root) else None
        if declaration is None or not declaration.base:
            return []
        root = os.path.basename(os.path.abspath(trunk))
        found = discover(root, os.path.abspath(trunk), declaration.base, list)
    except SpecError as exc:
        raise InputError(str(exc)) from None
    return [
        r.mirror
        for r in found.spec_roots
        if r.mirror
        and r.kind != "legacy"
        and r.real != os.path.realpath(spec_root)
        and r.backend != backend
    ]


def _show(path: str) -> str:
    """*path* relative to the working directory when it lies below it."""
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def _print_plan(plan: Plan, applied: bool) -> None:
    print(f"migrate {_show(plan.fork)}")
    print(f"   into {_show(plan.into)}  (counterparts: {_show(plan.trunk)})")
    width = max((len(s.path) for s in plan.steps), default=0)
    for step in plan.steps:
        size = f"{step.lines_before} -> {step.lines_after} lines" if step.lines_before else ""
        print(
            f"{step.action:<8}  {step.path:<{width}}  {step.reason}"
            + (f"  [{size}]" if size else "")
        )
        for note in step.notes:
            print(f"{'':<8}  {'':<{width}}  note: {note}")
        if step.action == "keep":
            print(f"{'':<8}  {'':<{width}}  goes to {_show(str(plan.destination(step)))}")
    for warning in plan.warnings:
        print(f"warning: {warning}")
    if plan.missing:
        print(f"not in the copy ({len(plan.missing)} trunk files, nothing to do):")
        for rel in plan.missing:
            print(f"  {rel}")
    if plan.spec_path:
        verb = "gets" if applied else "needs (--add-spec-path inserts it)"
        print("spec_path(__path__) " + verb + " in:")
        for init in plan.spec_path:
            print(f"  {_show(init)}")
    counts = ", ".join(f"{n} {a}" for a, n in plan.summary().items() if n)
    before = sum(s.lines_before for s in plan.steps if s.path.endswith(".py"))
    after = sum(s.lines_after for s in plan.steps if s.path.endswith(".py") and s.action != "keep")
    print(f"summary: {counts or 'nothing to migrate'}; Python lines {before} -> {after}")


def _findings(plan: Plan, backend: Optional[str]) -> Optional[list[Finding]]:
    """What check says about the new tree; ``None`` when the mirror is not visible to it."""
    if os.path.basename(plan.into) != os.path.basename(plan.trunk) and backend is None:
        return None
    model = load(
        trunk=plan.trunk,
        spec_roots=[] if backend else [os.path.dirname(plan.into)],
        backends=[backend] if backend else [],
    )
    return check(model)


def _check_tree(plan: Plan, backend: Optional[str]) -> int:
    findings = _findings(plan, backend)
    if findings is None:
        print(
            f"check: skipped: {_show(plan.into)} is not named like the root package; run "
            "flagtree-spec check with the backend"
        )
        return 0
    for f in findings:
        print(f"{_show(f.path)}:{f.line}:{f.col}: {f.code} {f.message}")
    errors = sum(f.severity == "error" for f in findings)
    print(
        f"check: {errors} errors, {len(findings) - errors} other findings"
        if findings
        else "check: no findings"
    )
    return 1 if errors else 0


def _run(args: argparse.Namespace) -> int:
    if not args.minimize and (args.base is not None or args.base_rev is not None):
        raise InputError("--base and --base-rev go with --minimize")
    if args.base is not None and args.base_rev is not None:
        raise InputError("give --base DIR or --base-rev REV, not both")
    _defaults(args)
    fork, trunk, into, backend = _folders(args)
    base = None
    if args.base is not None or args.base_rev is not None:
        base = BaseTree(trunk, args.base, args.base_rev)
    plan = make_plan(
        fork,
        trunk,
        into,
        lower=_lower(trunk, into, backend),
        minimize_files=args.minimize,
        base=base,
    )
    if args.no_verify and args.verify:
        raise InputError("give --verify or --no-verify, not both")
    if args.keep_on_failure and not args.apply:
        raise InputError("--keep-on-failure goes with --apply")
    wanted = args.verify or (args.apply and not args.no_verify)
    lower = _lower(trunk, into, backend)
    data: dict[str, Any] = plan.as_dict()
    if args.format == "text":
        _print_plan(plan, args.apply and args.add_spec_path)
    verification: Optional[Verification] = None
    undone: Optional[bool] = None
    code = 0
    if args.apply:
        with tempfile.TemporaryDirectory(prefix="flagtree-spec-migrate-") as where:
            overlay = copy_overlay(plan, where) if wanted else ""
            snapshot = Snapshot(plan, where) if wanted and not args.keep_on_failure else None
            applied = apply(plan, add_spec_path=args.add_spec_path)
            data["applied"] = applied
            if args.format == "text":
                here = os.getcwd() + os.sep
                for line in applied:
                    print(f"done: {line.replace(here, '')}")
            if wanted:
                environment = _new_environment(plan, backend)
                verification = verify(plan, overlay, environment, base=base)
                undone = False
                if not verification.ok and snapshot is not None:
                    snapshot.restore()
                    undone = True
    elif args.verify:
        verification = rehearse(plan, lower=lower, base=base, add_spec_path=args.add_spec_path)
    if verification is not None:
        data["verification"] = {**verification.as_dict(), "undone": undone}
        code = 0 if verification.ok else 1
        if verification.status == "static-only":
            print(f"flagtree-spec migrate: warning: {verification.reason}", file=sys.stderr)
    if args.format == "json":
        if args.apply and not undone:
            findings = _findings(plan, backend)
            data["check"] = None if findings is None else [f.as_dict() for f in findings]
            code = max(code, 1 if findings and any(f.severity == "error" for f in findings) else 0)
        print(json.dumps(data, indent=2))
        return code
    if verification is not None:
        for line in report(verification, undone=undone):
            print(line)
    if not args.apply:
        print("nothing changed; run again with --apply to migrate")
        return code
    if undone:
        return code
    return max(code, _check_tree(plan, backend))


def _new_environment(plan: Plan, backend: Optional[str]) -> dict[str, str]:
    """What makes the new spec tree active in a fresh interpreter."""
    if backend is not None:
        return {"FLAGTREE_BACKEND": backend}
    return {"FLAGTREE_SPEC_PATH": os.path.dirname(plan.into), "FLAGTREE_BACKEND": "none"}


def _guarded(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except InputError as exc:
        return error("migrate", str(exc))


def add_commands(commands: Any) -> None:
    """Register ``migrate``."""
    parser = commands.add_parser(
        "migrate",
        help="turn a legacy whole-tree copy into a minimal spec tree",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_argument_group("folders")
    where.add_argument("--fork", metavar="DIR", help="the copy of the root package")
    where.add_argument("--trunk", metavar="DIR", help="the root package's folder")
    where.add_argument("--into", metavar="DIR", help="the mirror tree to create (spec root/R)")
    where.add_argument("--repo", metavar="DIR", help="a FlagTree-style checkout (with -b)")
    where.add_argument("--root", metavar="R", help="the root package in --repo (default: detect)")
    where.add_argument("-b", "--backend", metavar="B", help="the backend whose copy to migrate")
    parser.add_argument("--apply", action="store_true", help="carry the plan out")
    parser.add_argument(
        "--add-spec-path",
        action="store_true",
        help="insert the guarded spec_path idiom into the trunk __init__.py files that need it",
    )
    parser.add_argument(
        "--minimize",
        action="store_true",
        help="turn differing modules into inherit(globals()) plus the backend's definitions",
    )
    parser.add_argument("--base", metavar="DIR", help="the trunk the copy was made from")
    parser.add_argument(
        "--base-rev", metavar="REV", help="the git revision of the trunk the copy was made from"
    )
    check = parser.add_argument_group("verification (by importing)")
    check.add_argument(
        "--verify",
        action="store_true",
        help="import every module of the copy, as the copy and from trunk plus the new spec "
        "tree, and compare them (without --apply: on scratch copies of the trees)",
    )
    check.add_argument(
        "--no-verify", action="store_true", help="with --apply: skip the verification"
    )
    check.add_argument(
        "--keep-on-failure",
        action="store_true",
        help="with --apply: keep the migration when the verification fails (default: undo it)",
    )
    add_format(parser, ("text", "json"))
    parser.set_defaults(handler=_guarded)
