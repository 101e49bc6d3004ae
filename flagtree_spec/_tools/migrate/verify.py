"""``migrate --verify``: import the copy and trunk plus the new spec tree, compare.

Three fresh interpreters of the user's environment (the interpreter running
the command, with its ``site-packages``) each import every module of the
copy and describe what each module's namespace ends with
(:mod:`.probe`):

* **copy**: the copy as the backend ran it, the trunk's files overlaid by
  the copy's (a folder built before anything changed);
* **trunk**: the trunk alone, with no backend;
* **new**: the trunk plus the new spec tree.

Per module, the new tree must import, or fail the same way, as the copy;
every name the new tree binds must hold the copy's code, except where the
plan leaves a name to trunk (a minimized override that does not bind it
again: trunk changed, added or deleted it), where it must hold trunk's; a
name the copy has must not be missing, and a name the copy never had must
be trunk's.  A module the plan keeps in ``migrate-leftovers/`` (the root
package's ``__init__``) cannot match and is reported as expected.  When the
trunk alone cannot import the root package (a compiled part missing), the
verification is static only, and says so.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Optional

from . import probe
from .apply import apply
from .overlay import copy_overlay, trunk_copy
from .plan import BaseTree, Plan, make_plan

__all__ = ["Verification", "copy_overlay", "modules_of", "rehearse", "report", "verify"]


class Verification(NamedTuple):
    """The outcome: *status* is ``equivalent``, ``differs`` or ``static-only``."""

    status: str
    reason: str
    modules: list[dict[str, Any]]  # per module: name, copy, new, differences, expected

    @property
    def ok(self) -> bool:
        return self.status != "differs"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "modules": self.modules}


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
        return verify(scratch, overlay, env, timeout=timeout)


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


def _left_to_trunk(plan: Plan) -> dict[str, Optional[set[str]]]:
    """Per module: the names its override binds again; every other name is trunk's by plan.

    A minimized override binds what its statements bind; a dropped module
    binds nothing (trunk's module is the one that runs).
    """
    root = os.path.basename(plan.trunk)
    found: dict[str, Optional[set[str]]] = {}
    for step in plan.steps:
        if not step.path.endswith(".py") or step.action not in ("minimize", "drop"):
            continue
        parts = step.path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if step.text is None:  # dropped: trunk's module, every name of it
            found[".".join([root, *parts])] = set()
            continue
        try:
            tree = ast.parse(step.text)
        except SyntaxError:
            continue
        found[".".join([root, *parts])] = _module_level_names(tree)
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.comprehension)


def _module_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at module level (in ``if`` and ``try`` blocks too);
    a name bound inside a function, a class or a comprehension is not one of them."""
    bound: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            pending.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).partition(".")[0])
        pending.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES))
    return bound


def _compare(
    name: str,
    copy: dict[str, Any],
    trunk: dict[str, Any],
    new: dict[str, Any],
    rebound: Optional[set[str]],
    trunks_own: set[str],
    expected: set[tuple[Optional[str], Optional[str]]],
) -> list[str]:
    if rebound is not None and not rebound and new == trunk:
        return []  # a dropped module: trunk's, by plan, and it is trunk's exactly
    if "error" in copy or "error" in new:
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
    mine, theirs, got = copy["names"], trunk.get("names", {}), new["names"]
    out: list[str] = []
    for key in sorted(set(mine) | set(got)):
        want_trunk = rebound is not None and key not in rebound
        value = got.get(key)
        if want_trunk:
            # Trunk's statement runs; an import there may reach a module the
            # backend changed, and then holds the copy's value.
            if value != theirs.get(key) and value != mine.get(key):
                out.append(f"{key}: the plan leaves it to trunk, but it is not trunk's")
            continue
        if value == mine.get(key):
            continue
        if value is not None and value in trunks_own:
            continue  # trunk's definition, by plan, reached through an import
        if key not in mine and value == theirs.get(key):
            continue  # trunk added it, in a module the plan does not minimize
        if (mine.get(key), value) in expected:
            continue  # a value of the root __init__ kept in migrate-leftovers
        if _members_by_plan(key, copy, new, trunks_own):
            continue  # members that trunk's definitions, by plan, attached to the class
        if key not in got:
            out.append(f"{key}: the copy has it, trunk and the spec tree lose it")
        elif key not in mine:
            out.append(f"{key}: a name the copy never had ({value[:60]})")
        else:
            out.append(f"{key}: not the copy's ({_what_differs(key, copy, new)})")
    return out


def _members_by_plan(
    key: str, copy: dict[str, Any], new: dict[str, Any], trunks_own: set[str]
) -> bool:
    """Whether class *key* differs only in members that are trunk's definitions by plan.

    Triton's ``@_tensor_member_fn`` in ``standard.py`` attaches ``sort`` to
    ``core.tensor``: where the plan gives trunk's ``sort``, the class holds it.
    """
    mine = copy.get("members", {}).get(key)
    got = new.get("members", {}).get(key)
    if mine is None or got is None or set(mine) != set(got):
        return False
    changed = [m for m in mine if mine[m] != got[m]]
    return bool(changed) and all(got[m] in trunks_own for m in changed)


def _what_differs(key: str, copy: dict[str, Any], new: dict[str, Any]) -> str:
    """The members of class *key* that differ, or the two digests."""
    mine = copy.get("members", {}).get(key)
    got = new.get("members", {}).get(key)
    if mine is None or got is None:
        return f"{copy['names'][key][:50]} vs {new['names'][key][:50]}"
    lost = sorted(set(mine) - set(got))
    extra = sorted(set(got) - set(mine))
    changed = sorted(m for m in set(mine) & set(got) if mine[m] != got[m])
    parts = []
    for label, names in (("lost", lost), ("not in the copy", extra), ("changed", changed)):
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            parts.append(f"members {label}: {shown}")
    return "; ".join(parts) or "its bases differ"


def verify(
    plan: Plan,
    copy_folder: str,
    new_env: Mapping[str, str],
    *,
    timeout: float = 600,
) -> Verification:
    """Compare the copy (built by :func:`copy_overlay`) with trunk plus the new spec tree.

    *new_env* holds the environment variables that make the new spec tree
    active (``FLAGTREE_BACKEND`` or ``FLAGTREE_SPEC_PATH``).
    """
    modules = modules_of(plan)
    root = modules[0]
    strip = [
        os.path.join(copy_folder, root),
        plan.trunk,
        plan.into,
        os.path.realpath(plan.trunk),
    ]
    top = os.path.dirname(plan.trunk)
    with tempfile.TemporaryDirectory(prefix="flagtree-spec-verify-") as where:
        trunk, why = _probe(
            top, modules, strip, {"FLAGTREE_BACKEND": "none"}, where, "trunk", timeout
        )
        if why or "error" in trunk.get(root, {"error": ""}):
            reason = why or trunk[root]["error"]
            return Verification(
                "static-only",
                f"trunk cannot import {root} by itself ({reason}); only the static proof holds",
                [],
            )
        copy, why = _probe(
            copy_folder, modules, strip, {"FLAGTREE_BACKEND": "none"}, where, "copy", timeout
        )
        if not why:
            new, why = _probe(top, modules, strip, new_env, where, "new", timeout)
        if why:
            return Verification("differs", why, [])
    rebound = _left_to_trunk(plan)
    trunks_own = {
        trunk[m]["names"][k]
        for m, names in rebound.items()
        if names is not None and "names" in trunk.get(m, {})
        for k in trunk[m]["names"]
        if k not in names
    }
    leftovers = {
        ".".join([root, *s.path[:-3].split("/")[:-1]]).rstrip(".")
        for s in plan.steps
        if s.action == "keep" and s.path.endswith("__init__.py")
    }
    # What the copy's root __init__ (kept in migrate-leftovers) binds differently
    # from trunk's reaches other modules through imports: expected there too.
    expected: set[tuple[Optional[str], Optional[str]]] = set()
    for name in leftovers:
        mine = copy.get(name, {}).get("names", {})
        theirs = trunk.get(name, {}).get("names", {})
        expected.update((mine.get(k), theirs.get(k)) for k in set(mine) | set(theirs))
    results: list[dict[str, Any]] = []
    failed = 0
    for name in modules:
        differences = _compare(
            name,
            copy.get(name, {"error": "not imported"}),
            trunk.get(name, {}),
            new.get(name, {"error": "not imported"}),
            rebound.get(name),
            trunks_own,
            set() if name in leftovers else expected,
        )
        leftover = name in leftovers
        failed += bool(differences) and not leftover
        results.append(
            {
                "module": name,
                "copy": copy.get(name, {}).get("error", "imports"),
                "new": new.get(name, {}).get("error", "imports"),
                "differences": differences,
                "expected": leftover,
            }
        )
    if failed:
        return Verification("differs", f"{failed} of {len(modules)} modules differ", results)
    aside = sum(bool(r["differences"]) for r in results)
    reason = f"{len(modules) - aside} modules import and match the copy"
    if aside:
        reason += f"; {aside} differs as expected (its copy is kept in migrate-leftovers)"
    return Verification("equivalent", reason, results)


def report(verification: Verification, *, undone: Optional[bool]) -> list[str]:
    """The text lines ``migrate`` prints for *verification*."""
    out: list[str] = []
    if verification.status == "static-only":
        return [f"verify: STATIC ONLY: {verification.reason}"]
    shown = [m for m in verification.modules if m["differences"]]
    if verification.modules:
        width = max(len(m["module"]) for m in shown) if shown else 0
        out.append(
            f"verify: imported {len(verification.modules)} modules as the copy, from trunk "
            "alone and from trunk plus the new spec tree, each in a fresh interpreter"
        )
        for m in shown[:40]:
            label = "expected (its copy is kept in migrate-leftovers)" if m["expected"] else ""
            first, *rest = m["differences"]
            out.append(f"verify: {m['module']:<{width}}  {label or first}")
            for line in (rest if not label else m["differences"])[:10]:
                out.append(f"verify: {'':<{width}}  {line}")
        if len(shown) > 40:
            out.append(f"verify: and {len(shown) - 40} more modules")
    verdict = "equivalent" if verification.ok else "DIFFERS"
    out.append(f"verify: {verdict}: {verification.reason}")
    if undone:
        out.append(
            "verify: the migration is undone: the tree is as it was before "
            "(--keep-on-failure keeps it, --no-verify skips this check)"
        )
    elif undone is False and not verification.ok:
        out.append("verify: the migration is kept (--keep-on-failure)")
    return out
