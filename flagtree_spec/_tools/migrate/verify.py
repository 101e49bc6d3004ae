"""``migrate --verify``: import the copy and trunk plus the new spec tree, compare.

Fresh interpreters of the user's environment (the interpreter running the
command, with its ``site-packages``) each import every module of the copy
and describe what each module's namespace ends with (:mod:`.probe`):

* **copy**: the copy as the backend ran it, the trunk's files overlaid by
  the copy's (a folder built before anything changed);
* **trunk**: the trunk alone, with no backend;
* **new**: the trunk plus the new spec tree;
* with a base, **merged**: the copy with trunk's version of the modules the
  backend left alone (their syntax tree is the base's, and trunk has the file),
  where trunk changed any.

Per module, the new tree must import, or fail the same way, as the copy;
every name the new tree binds must hold the copy's code, except where the
plan leaves a name to trunk (a minimized override that does not bind it
again: trunk changed, added or deleted it), where it must hold trunk's; a
name the copy has must not be missing, and a name the copy never had must
be trunk's.  A module that differs from the copy exactly as the merged copy
does differs by trunk's changes since the base, and is counted apart (see
:func:`_as_merged` for what it never excuses).  A module the plan keeps in
``migrate-leftovers/`` (the root package's ``__init__``) cannot match and is
reported as expected.  When the
trunk alone cannot import the root package (a compiled part missing), the
verification is static only, and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Optional

from . import probe
from .apply import apply
from .compare import Facts, Sides, facts, judge, left_alone
from .overlay import copy_overlay, merged_overlay, trunk_copy
from .plan import BaseTree, Plan, make_plan

__all__ = ["Verification", "copy_overlay", "modules_of", "rehearse", "report", "verify"]


class Verification(NamedTuple):
    """The outcome: *status* is ``equivalent``, ``differs`` or ``static-only``.

    *counts*: the copy's modules, those imported on both sides and compared,
    those failing the same way on both sides (not compared), the names
    compared, and the modules and names counted apart (fixed by trunk, deleted
    by trunk, stranded by a failed root import, differing by trunk's changes).
    """

    status: str
    reason: str
    # Per module: name, copy, new, differences, expected, trunks_change.
    modules: list[dict[str, Any]]
    counts: Optional[dict[str, int]] = None

    @property
    def ok(self) -> bool:
        return self.status != "differs"

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "compared": self.counts or {},
            "modules": self.modules,
        }


def modules_of(plan: Plan) -> list[str]:
    """The dotted names of the copy's Python modules, parents first."""
    root = os.path.basename(plan.trunk)
    found = {root}
    for step in plan.steps:
        if step.action == "link" or not step.path.endswith(".py"):
            continue
        parts = step.path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if all(p.isidentifier() for p in parts):
            found.add(".".join([root, *parts]))
    return sorted(found, key=lambda m: (m.count("."), m))


def rehearse(
    plan: Plan,
    *,
    lower: Sequence[str],
    base: Optional[BaseTree],
    add_spec_path: bool,
    timeout: float = 600,
) -> Verification:
    """``--verify`` without ``--apply``: migrate scratch copies of the trees, verify those.

    Nothing of the user's trees changes: trunk (its Python files copied,
    compiled parts linked), the copy and the spec root are copied into a
    temporary folder, the same plan is made and applied there, and the new
    spec tree is given to Python through ``FLAGTREE_SPEC_PATH``.
    """
    root = os.path.basename(plan.trunk)
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-rehearse-") as where:
        overlay = copy_overlay(plan, where)
        trunk = os.path.join(where, "trunk", root)
        trunk_copy(plan.trunk, trunk)
        spec_root = os.path.join(where, "backend", "spec")
        if os.path.isdir(os.path.dirname(plan.into)):
            shutil.copytree(os.path.dirname(plan.into), spec_root, symlinks=True)
        fork = os.path.join(where, "backend", "python", root)
        shutil.copytree(plan.fork, fork, symlinks=True)
        into = os.path.join(spec_root, os.path.basename(plan.into))
        scratch = make_plan(fork, trunk, into, lower=lower, minimize_files=plan.minimize, base=base)
        apply(scratch, add_spec_path=add_spec_path, history=False)
        env = {"FLAGTREE_SPEC_PATH": spec_root, "FLAGTREE_BACKEND": "none"}
        return verify(scratch, overlay, env, base=base, timeout=timeout)


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the trees under test
    env["PYTHONHASHSEED"] = "0"  # the same order of sets and dicts in every interpreter
    env.update(extra)
    return env


def _probe(
    folder: str,
    modules: Sequence[str],
    strip: Sequence[str],
    env: Mapping[str, str],
    where: str,
    label: str,
    timeout: float,
) -> tuple[dict[str, Any], str]:
    """Run the probe in a fresh interpreter; return its report, or ``{}`` and why not."""
    config = os.path.join(where, f"{label}.json")
    report = os.path.join(where, f"{label}-report.json")
    with open(config, "w", encoding="utf-8") as f:
        json.dump(
            {"folder": folder, "modules": list(modules), "strip": list(strip), "report": report},
            f,
        )
    try:
        proc = subprocess.run(
            [sys.executable, probe.__file__, config],
            env=_environment(env),
            cwd=where,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {}, f"the {label} interpreter did not finish within {timeout:.0f} s"
    if proc.returncode != 0 or not os.path.isfile(report):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"the {label} interpreter exited with {proc.returncode} ({tail})"
    with open(report, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data, ""


def verify(
    plan: Plan,
    copy_folder: str,
    new_env: Mapping[str, str],
    *,
    base: Optional[BaseTree] = None,
    timeout: float = 600,
) -> Verification:
    """Compare the copy (built by :func:`.overlay.copy_overlay`) with trunk plus the new spec tree.

    *new_env* holds the environment variables that make the new spec tree
    active (``FLAGTREE_BACKEND`` or ``FLAGTREE_SPEC_PATH``); *base* is the
    trunk the copy was made from, when it was given (it tells which names
    the backend changed).
    """
    modules = modules_of(plan)
    root = modules[0]
    top = os.path.dirname(plan.trunk)
    # Paths inside the trees read alike on every side (also those computed from
    # the folder holding the package, such as a sibling's).
    strip = [
        os.path.join(copy_folder, root),
        plan.trunk,
        plan.into,
        os.path.realpath(plan.trunk),
        copy_folder,
        top,
        os.path.dirname(copy_folder),  # a repository root computed as parents[2]
        os.path.dirname(top),
    ]
    static = facts(plan, copy_folder, base)
    none = {"FLAGTREE_BACKEND": "none"}
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-verify-") as where:
        # With a base: the copy with trunk's changes in the modules the backend left
        # alone, which is what the migration must import like there (trunk's later
        # changes flow in); without one, or where trunk changed none of them, the copy.
        merged_top = os.path.join(where, "merged")
        merging = base is not None and merged_overlay(
            plan, copy_folder, _as_base(plan, copy_folder, base), merged_top
        )
        strip += [os.path.join(merged_top, root), merged_top, where] if merging else []
        strip = [s for s in strip if s.count(os.sep) >= 2]  # never "/" or "/tmp" itself
        trunk, why = _probe(top, modules, strip, none, where, "trunk", timeout)
        if why or "error" in trunk.get(root, {"error": ""}):
            reason = why or trunk[root]["error"]
            return Verification(
                "static-only",
                f"trunk cannot import {root} by itself ({reason}); only the static proof holds",
                [],
            )
        copy, why = _probe(copy_folder, modules, strip, none, where, "copy", timeout)
        merged: Optional[dict[str, Any]] = None
        if not why and merging:
            # Only ever a reason to accept a difference: where it cannot be imported, the
            # differences stay differences.
            merged = _probe(merged_top, modules, strip, none, where, "merged", timeout)[0] or None
        if not why:
            new, why = _probe(top, modules, strip, new_env, where, "new", timeout)
        if why:
            return Verification("differs", why, [])
    return verdict(plan, modules, copy, trunk, new, static, merged)


def verdict(
    plan: Plan,
    modules: Sequence[str],
    copy: Mapping[str, Any],
    trunk: Mapping[str, Any],
    new: Mapping[str, Any],
    static: Mapping[str, Facts],
    merged: Optional[Mapping[str, Any]] = None,
) -> Verification:
    """The verification from the probe reports (per module) and the sources' facts.

    *merged*, with a base, is the report of the copy with trunk's version of the
    modules the backend left alone: a module whose differences from the copy are
    all the merged copy's too differs by trunk's changes since the base only (a
    value computed from what trunk's newer code finds, a submodule attribute that
    trunk's newer loader does not set), and is counted so, not as a difference.
    """
    root = modules[0]
    leftovers = {
        _module_name(root, s.path)
        for s in plan.steps
        if s.action == "keep" and s.path.endswith(".py")
    }
    # What the copy's root __init__ (kept in migrate-leftovers) binds differently
    # from trunk's reaches other modules through imports: expected there too.
    expected: set[tuple[Optional[str], Optional[str]]] = set()
    for name in leftovers:
        mine = copy.get(name, {}).get("names", {})
        theirs = trunk.get(name, {}).get("names", {})
        expected.update((mine.get(k), theirs.get(k)) for k in set(mine) | set(theirs))
    missing = {"error": "not imported"}
    sides = Sides(
        {m: copy.get(m, missing) for m in modules},
        trunk,
        {m: new.get(m, missing) for m in modules},
        static,
    )
    results: list[dict[str, Any]] = []
    failed = compared = names = aside = 0
    both: list[str] = []
    fixed: list[str] = []
    gone: list[str] = []  # names of the copy that trunk deleted since the base
    stranded: list[str] = []
    by_trunk: list[str] = []  # differ from the copy exactly as the merged copy does
    merged_only = 0  # of those, imported on both sides and compared
    stranded_by_root = "error" in sides.copy[root] and "error" in sides.new[root]
    for name in modules:
        mine, got = sides.copy[name], sides.new[name]
        leftover = name in leftovers
        if "error" in mine and "error" not in got and left_alone(static.get(name)):
            # The copy's module equals the base's and fails; trunk fixed it since.
            differences = []
            fixed.append(name)
        elif "error" in mine or "error" in got:
            differences = _errors(mine, got)
            if not differences:
                both.append(name)
            elif stranded_by_root and ("error" in mine) != ("error" in got):
                # Left in sys.modules by the root package's failed import, in an order
                # that the two root __init__ files decide: no evidence either way.
                differences = []
                stranded.append(name)
        else:
            judged = judge(name, sides, () if leftover else expected, plan.into)
            differences = judged.differences
            compared += 1
            names += judged.compared
            gone.extend(f"{name}.{k}" for k in judged.deleted)
            aside += bool(differences) and leftover
        trunks_change = (
            bool(differences)
            and not leftover
            and merged is not None
            and _as_merged(name, sides, merged, expected, plan.into)
        )
        if trunks_change:
            by_trunk.append(name)
            merged_only += "error" not in mine and "error" not in got  # compared, no match
        failed += bool(differences) and not leftover and not trunks_change
        results.append(
            {
                "module": name,
                "copy": mine.get("error", "imports"),
                "new": got.get("error", "imports"),
                "differences": differences,
                "expected": leftover,
                "trunks_change": trunks_change,
            }
        )
    counts = {
        "modules": len(modules),
        "compared": compared,
        "failing": len(both),
        "fixed_by_trunk": len(fixed),
        "names": names,
        "deleted_by_trunk": len(gone),
        "stranded": len(stranded),
        "trunks_changes": len(by_trunk),
    }
    total = len(modules)
    failing = ""
    if both:
        first = sides.copy[both[0]]["error"]
        failing = (
            f"; {len(both)} {_s(len(both), 'fails', 'fail')} the same way as the copy and "
            f"{_s(len(both), 'is', 'are')} not compared "
            f"({both[0]}: {first[:80]})"
        )
    if stranded:
        failing += (
            f"; {len(stranded)} {_s(len(stranded), 'imports', 'import')} on one side only, "
            "left behind by the root package's failed import on both sides (not compared: "
            f"{', '.join(stranded[:3])})"
        )
    if gone:
        failing += (
            f"; {len(gone)} {_s(len(gone), 'name')} of the copy {_s(len(gone), 'is', 'are')} "
            "gone as trunk's deletions since the base "
            f"({', '.join(gone[:4])}{' ...' if len(gone) > 4 else ''}: check that the base is "
            "not newer than trunk)"
        )
    if by_trunk:
        failing += (
            f"; {len(by_trunk)} {_s(len(by_trunk), 'differs', 'differ')} from the copy only as "
            "the copy with trunk's changes since the base in the modules the backend left "
            f"alone does: trunk's changes flowing in ({', '.join(by_trunk[:3])}"
            f"{' ...' if len(by_trunk) > 3 else ''})"
        )
    if fixed:
        failing += (
            f"; {len(fixed)} {_s(len(fixed), 'fails', 'fail')} as the copy, which holds the "
            f"base's version, and {_s(len(fixed), 'imports', 'import')} as trunk's since (not "
            f"compared: {', '.join(fixed[:3])})"
        )
    if failed:
        reason = (
            f"{failed} of {total} modules differ; {compared} imported on both sides "
            f"({names} names compared){failing}"
        )
        return Verification("differs", reason, results, counts)
    if not compared:
        reason = f"nothing imported on both sides, so nothing was compared{failing}"
        return Verification(
            "static-only", reason + "; only the static proof holds", results, counts
        )
    reason = (
        f"{compared - aside - merged_only} of {total} modules imported on both sides and "
        f"match the copy ({names} names compared)"
    )
    if aside:
        reason += (
            f"; {aside} {_s(aside, 'differs', 'differ')} as expected (kept in migrate-leftovers)"
        )
    return Verification("equivalent", reason + failing, results, counts)


def _as_base(plan: Plan, copy_folder: str, base: Optional[BaseTree]) -> list[str]:
    """The copy's modules whose syntax tree is the base's (the backend left them alone,
    side effects included) and whose counterpart is a file of trunk, as the plan judges
    files against the base.  A file trunk's source tree lacks is the copy's in the new
    tree too (its build may provide it: Triton's ``language/extra/cuda``)."""
    if base is None:
        return []
    root = os.path.basename(plan.trunk)
    found = []
    for step in plan.steps:
        if step.action == "link" or not step.path.endswith(".py") or step.trunk is None:
            continue
        if not os.path.realpath(step.trunk).startswith(os.path.realpath(plan.trunk) + os.sep):
            continue  # a lower backend's file: not trunk's
        if base.same_as(os.path.join(copy_folder, root, *step.path.split("/")), step.path):
            found.append(step.path)
    return found


def _as_merged(
    name: str,
    sides: Sides,
    merged: Mapping[str, Any],
    expected: Iterable[tuple[Optional[str], Optional[str]]],
    into: str,
) -> bool:
    """Whether the new tree's *name* differs from the copy only as the merged copy's does.

    Never where the copy imports and the new tree does not (a name trunk deleted that
    a module the backend kept still imports), nor for a name that a statement of a
    module the backend changed binds, or a global its functions read: those are the
    backend's, whatever trunk did since.
    """
    copy, mine, got = sides.copy[name], merged.get(name, {"error": "not imported"}), sides.new[name]
    if "error" in got and "error" not in copy:
        return False
    if "error" in mine or "error" in got:
        return not _errors(mine, got)
    fact = sides.facts.get(name)
    if fact is not None and not left_alone(fact):
        names, new_names = copy.get("names", {}), got["names"]
        changed = {k for k in set(names) | set(new_names) if names.get(k) != new_names.get(k)}
        if changed & set(fact.copy):
            return False
        if set(got.get("unbound", ())) - set(copy.get("unbound", ())):
            return False
    against = Sides({**sides.copy, name: mine}, sides.trunk, sides.new, sides.facts)
    return not judge(name, against, expected, into).differences


def _s(n: int, one: str, more: str = "") -> str:
    """*one* for one, else *more* (default: *one* with an ``s``)."""
    return one if n == 1 else (more or one + "s")


def _module_name(root: str, rel: str) -> str:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([root, *parts])


def _errors(copy: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The difference of a module that fails to import on one side or both."""
    if copy.get("error") == new.get("error"):
        return []
    if "error" in copy and "error" in new:
        return [
            f"fails differently: as the copy {copy['error']}; from trunk and the "
            f"spec tree {new['error']}"
        ]
    if "error" in new:
        return [f"imports as the copy, fails from trunk and the spec tree: {new['error']}"]
    return [f"fails as the copy ({copy['error']}), imports from trunk and the spec tree"]


def report(verification: Verification, *, undone: Optional[bool]) -> list[str]:
    """The text lines ``migrate`` prints for *verification*."""
    out: list[str] = []
    shown = [m for m in verification.modules if m["differences"]]
    if verification.modules:
        width = max(len(m["module"]) for m in shown) if shown else 0
        out.append(
            f"verify: imported {len(verification.modules)} modules as the copy, from trunk "
            "alone and from trunk plus the new spec tree, each in a fresh interpreter"
            + (
                " (and as the copy with trunk's changes since the base)"
                if (verification.counts or {}).get("trunks_changes")
                else ""
            )
        )
        for m in shown[:40]:
            label = (
                "expected (its copy is kept in migrate-leftovers)"
                if m["expected"]
                else "trunk's change since the base (the merged copy differs the same way)"
                if m.get("trunks_change")
                else ""
            )
            first, *rest = m["differences"]
            out.append(f"verify: {m['module']:<{width}}  {label or first}")
            for line in (rest if not label else m["differences"])[:10]:
                out.append(f"verify: {'':<{width}}  {line}")
        if len(shown) > 40:
            out.append(f"verify: and {len(shown) - 40} more modules")
    verdict = {"equivalent": "equivalent", "static-only": "STATIC ONLY"}.get(
        verification.status, "DIFFERS"
    )
    out.append(f"verify: {verdict}: {verification.reason}")
    if undone:
        out.append(
            "verify: the migration is undone: the tree is as it was before "
            "(--keep-on-failure keeps it, --no-verify skips this check)"
        )
    elif undone is False and not verification.ok:
        out.append("verify: the migration is kept (--keep-on-failure)")
    return out
