"""The static commands of ``flagtree-spec``: ``status``, ``which``, ``list``, ``check``, ``diff``.

They build a :class:`~flagtree_spec._tools.model.model.Model` from the trunk and
spec roots named by the options (:mod:`.options`, or detected), and never import or execute
anything of the trunk or a backend.  Exit codes: 0 clean, 1 findings at
error severity (``check``) or a module that would not import (``which``), 2
usage or input error (a backend named with ``--backend`` or
``FLAGTREE_BACKEND`` that exists nowhere included).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, Optional

from ..._config import is_module_name
from ..check.driver import CODES, Finding, check, select
from ..migrate.cli import add_commands as add_migrate
from ..model.model import InputError, Model, Module
from ..model.overrides import list_rows
from ..model.settings import Settings
from ..model.source import Problem
from ..upgrade.defdiff import DefinitionDiff, definition_diffs
from ..upgrade.digest import analyse
from .options import add_command, model_from, settings_from

__all__ = ["add_commands"]


def _backends_present(model: Model, command: str) -> None:
    """Stop (exit 2) on a named backend that exists nowhere or whose spec root is misplaced;
    a notice for one that exists without a Python spec tree."""
    for absent in model.absent:
        if absent.fatal:
            raise InputError(absent.message(model.root))
    for absent in model.absent:
        print(f"flagtree-spec {command}: notice: {absent.message(model.root)}", file=sys.stderr)


def _report_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        print(f"{p.path}:{p.line}:{p.col}: input error: {p.message}", file=sys.stderr)


def _dump(data: Any) -> None:
    print(json.dumps(data, indent=2))


# --------------------------------------------------------------------------- status


def _status(args: argparse.Namespace) -> int:
    model = model_from(args)
    roots = [
        {
            "path": os.path.abspath(r.path),
            "backend": r.backend,
            "kind": r.kind,
            "mirror": None if r.mirror is None else os.path.abspath(r.mirror),
            "hooks": None if r.hooks is None else os.path.abspath(r.hooks),
            "hook_module": r.hook_name,
            "exclude": sorted(r.exclude),
            "declaration": r.declaration,
        }
        for r in model.spec_roots
    ]
    data = {
        "root": model.root,
        "trunk": model.rdir,
        "stack": list(model.stack),
        "stack_source": model.stack_source,
        "auto": model.auto,
        "spec_roots": roots,
        "absent": [a.as_dict() for a in model.absent],
    }
    if args.format == "json":
        _dump(data)
        return 0
    print(f"root package  {model.root}  ({model.rdir})")
    print(f"backend stack {','.join(model.stack) or 'none'}  ({model.stack_source})")
    for absent in model.absent:
        print("note          " + absent.message(model.root).replace("\n", "\n              "))
    if model.auto:
        print("mode          auto (every package is specialised)")
    if not roots:
        print("spec roots    none: nothing is specialised")
    for i, r in enumerate(roots, 1):
        print(f"spec root {i}   {r['path']}  [{r['backend'] or 'no backend'}, {r['kind']}]")
        print(f"  mirror      {r['mirror'] or 'none'}")
        hooks = f"{r['hooks']}  (imported as {r['hook_module']})" if r["hooks"] else "none"
        print(f"  hooks       {hooks}")
        if r["exclude"]:
            print(f"  exclude     {', '.join(r['exclude'])}")
        if r["declaration"]:
            print(f"  declaration {r['declaration']}")
    return 0


# --------------------------------------------------------------------------- which


def _module_name(model: Model, name: str) -> str:
    if not is_module_name(name):
        raise InputError(f"{name!r} is not a dotted module name (like {model.root}.runtime.jit)")
    if name == model.root or name.startswith(model.root + "."):
        return name
    raise InputError(
        f"{name!r} is not inside root package {model.root!r}; write it in full, like "
        f"{model.root}.{name}"
    )


def _which(args: argparse.Namespace) -> int:
    model = model_from(args)
    _backends_present(model, "which")
    names = [_module_name(model, n) for n in args.modules]
    answers = [model.resolve(n) for n in names]
    _report_problems(model.problems)
    # 2: the input was unusable; 1: a module named would not import.
    code = 2 if model.problems else 1 if any(a.kind == "missing" for a in answers) else 0
    if args.format == "json":
        rows = []
        for a in answers:
            row: dict[str, Any] = {
                "module": a.name,
                "file": a.file,
                "candidates": list(a.candidates),
            }
            if a.early is not None:
                row["reason"] = _early_reason(model, a)
            rows.append(row)
        _dump(rows)
        return code
    for a in answers:
        if a.kind == "missing":
            print(f"{a.name}: does not import ({a.reason})")
        elif a.kind == "namespace":
            print(f"{a.name}: namespace package, portions {', '.join(a.path)}")
        else:
            where = f"backend {a.origin.backend or a.origin.path}" if a.origin else "trunk"
            print(f"{a.name}: {a.file}  [{where}]")
            if a.early is not None:
                print(f"  {_early_reason(model, a)}")
            for c in a.candidates:
                print(f"  shadows {c}")
            if a.kind == "package":
                state = "specialised" if a.specialised else "not specialised (no spec_path call)"
                print(f"  package, {state}; __path__: {', '.join(a.path)}")
    return code


def _early_reason(model: Model, module: Module) -> str:
    """Why *module* loads from its package's own folder: imported before spec_path."""
    assert module.early is not None
    init = module.early.init
    where = "trunk" if model.origin_of(init) is None else "the package-init override's folder"
    return f"loads from {where}: {module.early.describe()}"


# --------------------------------------------------------------------------- list


def _list(args: argparse.Namespace) -> int:
    model = model_from(args)
    _backends_present(model, "list")
    rows = list_rows(model)
    _report_problems(model.problems)
    if args.format == "json":
        _dump(rows)
    else:
        if not rows:
            print("no overrides: no spec root with a mirror tree (see flagtree-spec status)")
        for row in rows:
            extra = f"  (shadows {row['shadows']})" if row["shadows"] else ""
            print(f"{row['state']:<9} {row['module']}  {row['file']}{extra}")
    return 2 if model.problems else 0


# --------------------------------------------------------------------------- check


def _codes(values: Sequence[str], option: str) -> list[str]:
    codes = [c.strip().upper() for v in values for c in v.split(",") if c.strip()]
    for code in codes:
        if not any(known.startswith(code) for known in CODES) or not code.startswith("FTS"):
            raise InputError(
                f"{option} {code!r} is not a check code or prefix; the codes are {', '.join(CODES)}"
            )
    return codes


def _print_findings(findings: Sequence[Finding], fmt: str) -> None:
    if fmt == "json":
        _dump({"findings": [f.as_dict() for f in findings]})
        return
    for f in findings:
        if fmt == "github":
            level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
            message = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            print(f"::{level} file={f.path},line={f.line},col={f.col},title={f.code}::{message}")
        else:
            print(f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}")


def _check(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    table = f"[tool.flagtree-spec] in {settings.path}:" if settings else ""
    # Command-line options win over the table.
    if args.select or settings is None:
        chosen = _codes(args.select, "--select")
    else:
        chosen = _codes(settings.select, f"{table} select")
    if args.ignore or settings is None:
        ignored = _codes(args.ignore, "--ignore")
    else:
        ignored = _codes(settings.ignore, f"{table} ignore")
    per_file = [
        (pattern, _codes(codes, f"{table} per-file-ignores {pattern!r}"))
        for pattern, codes in (settings.per_file_ignores if settings else ())
    ]
    model = model_from(args, settings)
    _backends_present(model, "check")
    models = [model]
    if not model.spec_roots and not model.absent:
        if model.stack:  # named by a build-time marker, which is not judged
            print(
                f"flagtree-spec check: no spec root for {model.root} (backend stack "
                f"{','.join(model.stack)}, {model.stack_source})",
                file=sys.stderr,
            )
        else:
            models = _every_backend(args, settings, model)
    found: set[Finding] = set()
    for each in models:
        found.update(check(each))
    findings = select(sorted(found, key=_order), chosen, ignored)
    if settings is not None and per_file:
        findings = [f for f in findings if not _ignored_here(f, settings.folder, per_file)]
    _print_findings(findings, args.format)
    problems = [p for each in models for p in each.problems]
    _report_problems(list(dict.fromkeys(problems)))
    print(_summary(models, findings), file=sys.stderr)
    if problems:
        return 2
    failing = ("error",) if args.fail_on == "error" else ("error", "warning")
    return 1 if any(f.severity in failing for f in findings) else 0


def _ignored_here(finding: Finding, folder: str, per_file: list[tuple[str, list[str]]]) -> bool:
    """Whether a per-file ignore (a glob relative to *folder*) drops *finding*."""
    rel = os.path.relpath(finding.path, folder).replace(os.sep, "/")
    return any(
        fnmatch.fnmatchcase(rel, pattern) and finding.code.startswith(tuple(codes))
        for pattern, codes in per_file
    )


def _order(finding: Finding) -> tuple[str, int, int, str, str]:
    return (finding.path, finding.line, finding.col, finding.code, finding.message)


def _every_backend(
    args: argparse.Namespace, settings: Optional[Settings], model: Model
) -> list[Model]:
    """With no backend named and no spec root: one model per backend of the repository
    that has a spec root (said on stderr), or an input error when there is none, so
    that a CI job that forgot ``-b`` does not pass having checked nothing."""
    python = os.path.dirname(model.rdir)
    third_party = os.path.join(os.path.dirname(python), "third_party")
    named = (
        f"no spec root for {model.root} (backend stack {','.join(model.stack) or 'none'}, "
        f"{model.stack_source})"
    )
    if os.path.basename(python) != "python" or not os.path.isdir(third_party) or args.trunk:
        raise InputError(f"{named}: nothing was checked; pass --backend B or --spec-root DIR")
    models: list[Model] = []
    checked: list[str] = []
    without: list[str] = []
    # Backends whose spec root sits in a wrong place: an input error, as with -b B.
    misplaced: list[Problem] = []
    for backend in sorted(os.listdir(third_party)):
        if not os.path.isdir(os.path.join(third_party, backend)) or backend.startswith("."):
            continue
        args.backend = [backend]
        try:
            each = model_from(args, settings)
        except InputError:
            each = None
        if each is not None and each.spec_roots:
            models.append(each)
            checked.append(backend)
        elif each is not None and any(a.misplaced for a in each.absent):
            misplaced.extend(
                Problem(a.misplaced[0][0], 1, 1, a.message(model.root))
                for a in each.absent
                if a.misplaced
            )
        else:
            without.append(backend)
    args.backend = []
    if not models:
        folders = f" ({', '.join(without)} without a Python spec tree)" if without else ""
        wrong = "".join(f"; {p.message}" for p in misplaced)
        raise InputError(
            f"{named}, and no backend under {third_party} has one{folders}{wrong}: nothing "
            "was checked; pass --backend B or --spec-root DIR"
        )
    for problem in misplaced:
        models[0].problem(problem)
    print(
        f"flagtree-spec check: no backend named; checking every backend of the repository: "
        f"{', '.join(checked)}"
        + (f" ({', '.join(without)}: no Python spec tree)" if without else ""),
        file=sys.stderr,
    )
    return models


def _summary(models: Sequence[Model], findings: Sequence[Finding]) -> str:
    """The last line of ``check``: counts by severity and the number of files checked."""
    files: set[str] = set()
    for model in models:
        files.update(entry.path for _, entry in model.mirror_files())
        files.update(r.hooks for r in model.spec_roots if r.hooks)
    checked = f"in {len(files)} file{'s' if len(files) != 1 else ''}"
    if not findings:
        return f"0 findings {checked}"
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    return (
        ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items())
        + f" {checked}"
    )


# --------------------------------------------------------------------------- diff


def _read(model: Model, path: str) -> list[str]:
    """The lines of source file *path*, decoded per PEP 263 as the model reads it."""
    source = model.source(path)
    if source.error is not None and not source.text:  # unreadable or undecodable
        raise InputError(f"cannot diff {path}: {source.error.message}")
    return io.StringIO(source.text, newline=None).readlines()


def _diff(args: argparse.Namespace) -> int:
    model = model_from(args)
    _backends_present(model, "diff")
    name = _module_name(model, args.module)
    module = model.resolve(name)
    if module.file is None:
        raise InputError(f"{name} does not import ({module.reason or 'a namespace package'})")
    lower: Optional[str] = model.counterpart(name)
    if module.origin is None:
        text = ""
        note = f"{name} loads from trunk ({module.file}); nothing overrides it"
    elif lower is None:
        text = "".join(
            difflib.unified_diff([], _read(model, module.file), "/dev/null", module.file)
        )
        note = f"{name} is added by the backend; no trunk counterpart"
    elif not (module.file.endswith(".py") and lower.endswith(".py")):
        raise InputError(f"{name}: {module.file} or {lower} is not a source file; cannot diff")
    else:
        definitions = _definition_diffs(model, lower, module.file)
        if definitions is not None:
            return _print_definitions(args.format, name, module.file, lower, definitions)
        text = "".join(
            difflib.unified_diff(_read(model, lower), _read(model, module.file), lower, module.file)
        )
        note = ""
    if args.format == "json":
        _dump({"module": name, "file": module.file, "shadows": lower, "diff": text})
    elif text:
        sys.stdout.write(text)
    else:
        print(note or f"{name}: the override is identical to {lower}")
    return 0


def _definition_diffs(model: Model, lower: str, path: str) -> Optional[list[DefinitionDiff]]:
    """Per-definition diffs when *path* inherits *lower*; ``None`` for a whole-file diff."""
    mine, theirs = model.source(path), model.source(lower)
    if mine.tree is None or theirs.tree is None or "inherit" not in mine.text:
        return None
    ours = analyse(mine.text)
    if ours.inherit_line is None:
        return None
    return definition_diffs(analyse(theirs.text), lower, ours, path)


def _print_definitions(
    fmt: str, name: str, path: str, lower: str, definitions: Sequence[DefinitionDiff]
) -> int:
    if fmt == "json":
        rows = [{"name": d.name, "state": d.state, "diff": d.diff} for d in definitions]
        text = "".join(d.diff for d in definitions)
        _dump({"module": name, "file": path, "shadows": lower, "diff": text, "definitions": rows})
        return 0
    count = len(definitions)
    print(f"{name} inherits {lower} and changes {count} definition{'s' if count != 1 else ''}:")
    notes = {"wrapped": " (reads the lower version first)"}
    for d in definitions:
        print(f"  {d.state:<9} {d.name}{notes.get(d.state, '')}")
    print()
    sys.stdout.write("".join(d.diff for d in definitions))
    return 0


# --------------------------------------------------------------------------- registration


_CHECK_EPILOG = (
    "codes:\n"
    + "\n".join(f"  {code}  [{severity}] {text}" for code, (severity, text) in CODES.items())
    + (
        "\n\nSuppress one finding with '# noqa: FTS00N' on its line.\n"
        "Exit codes: 0 clean, 1 a finding at error severity (--fail-on warning: or at warning\n"
        "severity), 2 usage or input error."
    )
)


def add_commands(commands: Any) -> None:
    """Register ``status``, ``which``, ``list``, ``check``, ``diff`` and ``migrate``."""
    add_command(
        commands,
        "status",
        _status,
        help="show the backend stack, spec roots and hook modules",
        description="Show the root package, the backend stack (and why), the spec roots, their "
        "mirror trees and hook modules.",
    )
    parser = add_command(
        commands,
        "which",
        _which,
        help="which file each module would load, and what it shadows",
        description="Print the file each MODULE would load (a package's __init__) and the chain "
        "of candidates below it, highest first.\nJSON: a list of "
        '{"module", "file", "candidates"}; file is null when the module would not import.\n'
        "Exit code 1 when a MODULE would not import.",
    )
    parser.add_argument("modules", nargs="+", metavar="MODULE", help="full dotted module name")
    add_command(
        commands,
        "list",
        _list,
        help="list every override and added module with its state",
        description="List every file of every mirror tree with its state: override (loads, "
        "shadows a lower version), added (loads, no trunk counterpart), shadowed (a higher "
        "backend wins), excluded, or dead (never loads; see check).",
    )
    parser = add_command(
        commands,
        "check",
        _check,
        help="lint the spec trees (exit 1 on errors)",
        description="Lint the mirror trees and hook modules of the active backend stack. Output "
        "lines are 'path:line:col: CODE message'.",
        formats=("text", "json", "github"),
        epilog=_CHECK_EPILOG,
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="CODES",
        help="report only these codes or prefixes (comma separated, repeatable)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODES",
        help="do not report these codes or prefixes (comma separated, repeatable)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="the lowest severity that makes the exit code 1 (default: error)",
    )
    parser = add_command(
        commands,
        "diff",
        _diff,
        help="unified diff of an override against the version it shadows",
        description="Print a unified diff of the file MODULE loads against the version it "
        "shadows (the next one down the chain).",
    )
    parser.add_argument("module", metavar="MODULE", help="full dotted module name")

    add_migrate(commands)
