"""The ``adopt`` command: switch a FlagTree trunk to the forwarder, proven by importing.

``flagtree-spec adopt`` finds the trunk's own ``R/_flagtree_spec.py`` (or
``R/flagtree_spec.py``), says which of FlagTree's variants it is, checks that
every name the trunk and the spec trees import from it is one the forwarder
exports, then imports every module of the root package with the trunk's own
file and with the forwarder (``from flagtree_spec.flagtree import *``), per
backend, in fresh interpreters, and writes the forwarder into the tree only
when the two agree.  Exit codes: 0 adopted (or the file forwards already),
1 the two differ or nothing could be compared (the tree is left as it was,
unless ``--keep-on-failure``), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ... import flagtree
from ..._config import MARKER_MODULE, parse_stack, read_marker
from ..._discovery import _Finder
from ..._missing import existing_backends
from ..adopt.proof import Comparison, compare, imported_names
from ..model.flagtree import FORWARDER, SpecFile, spec_files
from ..model.model import InputError, Model, load
from ..upgrade.lock import write_atomic
from .options import add_command, model_from
from .output import Output

__all__ = ["add_commands"]

_SHOWN = 12


def _backends(args: argparse.Namespace, model: Model) -> list[str]:
    """The backends to prove: those given, else the build marker's, else every backend
    with a spec root in the tree."""
    if args.backend:
        names: list[str] = []
        for value in args.backend:
            stack = parse_stack(value, "--backend")
            if not stack:
                raise InputError(
                    f"--backend {value!r} names no backend: give the backend to prove, once "
                    "per backend"
                )
            if len(stack) != 1:
                raise InputError(
                    f"--backend {value!r} names a stack; FlagTree's own spec file knows one "
                    "backend at a time: give -b once per backend to prove"
                )
            names.extend(b for b in stack if b not in names)
        return names
    marker = read_marker(model.rdir)
    if marker is not None and marker.stack:
        return list(marker.stack[:1])
    found = [
        b
        for b in existing_backends(_Finder(model.root, model.rdir, list))
        if load(trunk=model.rdir, backends=[b]).spec_roots
    ]
    if not found:
        raise InputError(
            f"no backend to prove: {model.rdir} has no build marker and no backend has a spec "
            "root; give -b B"
        )
    return found


def _hook_names(model: Model) -> list[str]:
    """The hooks trunk code calls with a literal name."""
    names: set[str] = set()
    for module in model.modules():
        if module.file is not None and module.file.endswith(".py"):
            names.update(c.hook for c in model.source(module.file).hook_calls())
    return sorted(names)


def _modules(model: Model, files: list[SpecFile]) -> list[str]:
    skip = {f"{model.root}.{os.path.basename(f.path)[:-3]}" for f in files}
    return [n for n in model.names() if n not in skip and n.rpartition(".")[2] != "__main__"]


def _own_hook_module(spec: SpecFile, root: str, backend: str) -> list[str]:
    if not spec.hooks or spec.hooks.startswith("driver."):
        return []
    return [spec.hooks.replace("{R}", root).replace("{B}", backend)]


def _literal_marker(model: Model, backends: list[str]) -> None:
    """Refuse a backend the scratch copies cannot be switched to: a marker module that
    holds a literal names its backend whatever the text file says."""
    marker = read_marker(model.rdir)
    if marker is None or not marker.path.endswith(MARKER_MODULE):
        return
    other = [b for b in backends if b not in marker.stack]
    if other:
        raise InputError(
            f"{marker.path} names backend {','.join(marker.stack)!r} as a literal, so the "
            f"proof cannot run {other[0]!r}: prove {marker.stack[0]!r} (no -b), or make the "
            "module read the FLAGTREE_BACKEND file as FlagTree's does"
        )


def _adopt(args: argparse.Namespace, out: Output) -> int:
    if args.spec_root or args.auto:
        raise InputError(
            "adopt compares the tree's own layout: --spec-root and --auto do not apply to it"
        )
    chosen = list(args.backend)
    args.backend = []
    base = model_from(args)
    args.backend = chosen
    files = spec_files(base.rdir, base.root)
    if not files:
        raise InputError(
            f"{base.rdir} holds no FlagTree spec file (_flagtree_spec.py or flagtree_spec.py) "
            "that parses: there is nothing to adopt"
        )
    own = [f for f in files if f.kind == "flagtree"]
    if not own:
        if any(f.kind == "forwarder" for f in files):
            data = {"spec_file": files[0].path, "adopted": True, "already": True}
            return _say(args, out, data, [])
        raise InputError(
            f"{files[0].path} defines none of spec_path, spec, spec_call, spec_func: it is "
            "not FlagTree's spec file"
        )
    backends = _backends(args, base)
    _literal_marker(base, backends)
    models = {b: load(trunk=base.rdir, backends=[b]) for b in backends}
    missing: dict[str, list[str]] = {}
    for model in models.values():
        for spec in own:
            for path, names in imported_names(model, spec).items():
                for name in sorted(names - set(flagtree.__all__)):
                    missing.setdefault(name, []).append(path)
    if missing:
        shown = "; ".join(
            f"{n} (used by {', '.join(sorted(set(p))[:3])})" for n, p in missing.items()
        )
        raise InputError(
            f"the trunk or a spec tree uses names of {', '.join(_names(own))} that "
            f"flagtree_spec.flagtree does not export: {shown}; nothing was changed"
        )
    results: list[Comparison] = []
    if not args.no_verify:
        for backend, model in models.items():
            hook_modules = [r.hook_name for r in model.spec_roots if r.hook_name]
            for spec in own:
                hook_modules += _own_hook_module(spec, model.root, backend)
            results.append(
                compare(
                    model,
                    own,
                    backend,
                    _modules(model, own),
                    _hook_names(model),
                    hook_modules,
                    args.python or sys.executable,
                )
            )
    proven = args.no_verify or all(r.proven for r in results)
    adopted = proven or args.keep_on_failure
    if adopted:
        for spec in own:
            # A new file renamed over the old one: never written through a hard link
            # into another tree that shares the file (a copy made with cp -al).
            write_atomic(spec.path, FORWARDER)
    spec = own[0]
    data = {
        "spec_file": spec.path,
        "spec_files": [f.path for f in own],
        "variant": spec.variant,
        "description": " ".join(f.describe(base.root) + "." for f in own),
        "adopted": adopted,
        "proven": bool(results) and proven,
        "verified": not args.no_verify,
    }
    _say(args, out, data, results)
    return 0 if proven else 1


def _names(files: list[SpecFile]) -> list[str]:
    return [os.path.basename(f.path) for f in files]


def _say(
    args: argparse.Namespace, out: Output, data: dict[str, Any], results: list[Comparison]
) -> int:
    if args.format == "json":
        data["backends"] = [
            {**r._asdict(), "differences": [d._asdict() for d in r.differences]} for r in results
        ]
        out.raw(json.dumps(data, indent=2) + "\n")
        return 0
    if data.get("already"):
        out.line(f"{data['spec_file']} forwards to flagtree_spec already: nothing to do")
        return 0
    out.line(data["description"])
    for r in results:
        out.line(
            f"backend {r.backend}: {r.modules} modules probed, {r.imported} import with both "
            f"({r.from_spec_tree} of them from the spec tree), {r.failed_alike} fail alike, "
            f"{len(r.differences)} difference{'s' if len(r.differences) != 1 else ''}; "
            f"{r.hooks} hooks asked, {r.hooks_answered} answered"
        )
        for d in r.differences[:_SHOWN]:
            out.line(f"  {d.module}: {d.what}: own {d.own}  forwarder {d.forwarder}")
        if len(r.differences) > _SHOWN:
            out.line(f"  ... and {len(r.differences) - _SHOWN} more (--format json lists them all)")
        if not r.imported:
            out.line(
                "  nothing imported on either side, so nothing was compared"
                + (f"; first error: {r.first_errors[0]}" if r.first_errors else "")
            )
    if not data["verified"]:
        out.line(f"not verified (--no-verify): wrote the forwarder into {_into(data)}")
    elif data["proven"]:
        out.line(f"equivalent: wrote the forwarder into {_into(data)}")
    elif data["adopted"]:
        out.line(f"NOT equivalent; kept the forwarder in {_into(data)} (--keep-on-failure)")
    else:
        out.line(f"NOT equivalent: {_into(data)} left as it was")
    return 0


def _into(data: dict[str, Any]) -> str:
    return " and ".join(data["spec_files"])


def add_commands(commands: Any) -> None:
    """Register ``adopt``."""
    parser = add_command(
        commands,
        "adopt",
        _adopt,
        help="replace FlagTree's own spec file by the forwarder, proven by importing",
        description=(
            "Find the trunk's FlagTree spec file (R/_flagtree_spec.py or R/flagtree_spec.py), "
            "say which variant it is, and replace it by one line, 'from flagtree_spec.flagtree "
            "import *', once importing every module of R with each of the two, per backend, "
            "in fresh interpreters, gives the same modules: the same files, __file__, "
            "__path__, names and hook answers. Backends: -b B (repeatable, one backend each), "
            "else the build marker's, else every backend with a spec root. Exit 0 adopted, "
            "1 not equivalent (nothing changed), 2 usage or input error."
        ),
    )
    proof = parser.add_argument_group("the proof")
    proof.add_argument(
        "--python",
        metavar="PY",
        help="the interpreter that imports the trunk (default: this one); it needs the "
        "trunk's dependencies",
    )
    proof.add_argument(
        "--no-verify", action="store_true", help="write the forwarder without the proof"
    )
    proof.add_argument(
        "--keep-on-failure",
        action="store_true",
        help="write the forwarder even when the two sides differ",
    )
