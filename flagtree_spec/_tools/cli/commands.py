"""The static commands of ``flagtree-spec``: ``status``, ``which``, ``list``, ``check``, ``diff``.

Each is a function ``(args, out)`` registered with :func:`~.options.add_command`,
which gives it the shared options and the :class:`~.output.Output` to print to.

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
from . import rules
from .findings import FORMATS, STATISTICS_FORMATS, write_findings, write_statistics
from .options import add_command, model_from
from .output import Output

__all__ = ["add_commands"]


def _backends_present(model: Model, out: Output) -> None:
    """Stop (exit 2) on a named backend that exists nowhere or whose spec root is misplaced;
    a notice for one that exists without a Python spec tree."""
    for absent in model.absent:
        if absent.fatal:
            raise InputError(absent.message(model.root))
    for absent in model.absent:
        out.note(f"flagtree-spec {out.command}: notice: {absent.message(model.root)}")


def _report_problems(problems: Sequence[Problem], out: Output) -> None:
    # Input errors: printed with --quiet too.
    quiet, out.quiet = out.quiet, False
    for p in problems:
        out.note(f"{p.path}:{p.line}:{p.col}: input error: {p.message}")
    out.quiet = quiet


def _dump(data: Any, out: Output) -> None:
    out.raw(json.dumps(data, indent=2) + "\n")


# --------------------------------------------------------------------------- status


def _status(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    roots = [
        {
            "path": os.path.abspath(r.path),
            "backend": r.backend,
            "kind": r.kind,
            "mirror": None if r.mirror is None else os.path.abspath(r.mirror),
            "hooks": None if r.hooks is None else os.path.abspath(r.hooks),
            "hook_module": r.hook_name,
            "mirror_rule": r.mirror_rule,
            "hooks_rule": r.hooks_rule,
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
        _dump(data, out)
        return 0
    out.line(f"root package  {model.root}  ({model.rdir})")
    out.line(f"backend stack {','.join(model.stack) or 'none'}  ({model.stack_source})")
    for absent in model.absent:
        out.line("note          " + absent.message(model.root).replace("\n", "\n              "))
    if model.auto:
        out.line("mode          auto (every package is specialised)")
    if not roots:
        out.line("spec roots    none: nothing is specialised")
    for i, r in enumerate(roots, 1):
        out.line(f"spec root {i}   {r['path']}  [{r['backend'] or 'no backend'}, {r['kind']}]")
        out.line(f"  mirror      {r['mirror'] or 'none'}  ({r['mirror_rule']})")
        if r["hooks"]:
            hooks = f"{r['hooks']}  (imported as {r['hook_module']}; {r['hooks_rule']})"
        else:
            hooks = f"none  ({r['hooks_rule']})"
        out.line(f"  hooks       {hooks}")
        if r["exclude"]:
            out.line(f"  exclude     {', '.join(r['exclude'])}")
        if r["declaration"]:
            out.line(f"  declaration {r['declaration']}")
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


def _which(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    _backends_present(model, out)
    names = [_module_name(model, n) for n in args.modules]
    answers = [model.resolve(n) for n in names]
    _report_problems(model.problems, out)
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
        _dump(rows, out)
        return code
    for a in answers:
        if a.kind == "missing":
            out.line(f"{a.name}: does not import ({a.reason})")
        elif a.kind == "namespace":
            out.line(f"{a.name}: namespace package, portions {', '.join(a.path)}")
        else:
            where = f"backend {a.origin.backend or a.origin.path}" if a.origin else "trunk"
            out.line(f"{a.name}: {a.file}  [{where}]")
            if a.early is not None:
                out.line(f"  {_early_reason(model, a)}")
            for c in a.candidates:
                out.line(f"  shadows {c}")
            if a.kind == "package":
                state = "specialised" if a.specialised else "not specialised (no spec_path call)"
                out.line(f"  package, {state}; __path__: {', '.join(a.path)}")
    return code


def _early_reason(model: Model, module: Module) -> str:
    """Why *module* loads from its package's own folder: imported before spec_path."""
    assert module.early is not None
    init = module.early.init
    where = "trunk" if model.origin_of(init) is None else "the package-init override's folder"
    return f"loads from {where}: {module.early.describe()}"


# --------------------------------------------------------------------------- list


def _list(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    _backends_present(model, out)
    rows = list_rows(model)
    _report_problems(model.problems, out)
    if args.format == "json":
        _dump(rows, out)
    else:
        if not rows:
            out.line("no overrides: no spec root with a mirror tree (see flagtree-spec status)")
        for row in rows:
            extra = f"  (shadows {row['shadows']})" if row["shadows"] else ""
            out.line(f"{row['state']:<9} {row['module']}  {row['file']}{extra}")
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


def _check(args: argparse.Namespace, out: Output) -> int:
    if args.statistics and args.format not in STATISTICS_FORMATS:
        raise InputError(
            f"--statistics counts findings per code in {' or '.join(STATISTICS_FORMATS)}; "
            f"--format {args.format} lists each finding: drop one of the two"
        )
    settings: Optional[Settings] = args.settings
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
    _backends_present(model, out)
    models = [model]
    if not model.spec_roots and not model.absent:
        if model.stack:  # named by a build-time marker, which is not judged
            out.note(
                f"flagtree-spec check: no spec root for {model.root} (backend stack "
                f"{','.join(model.stack)}, {model.stack_source})"
            )
        else:
            models = _every_backend(args, settings, model, out)
    found: set[Finding] = set()
    for each in models:
        found.update(check(each))
    findings = select(sorted(found, key=_order), chosen, ignored)
    if settings is not None and per_file:
        findings = [f for f in findings if not _ignored_here(f, settings.folder, per_file)]
    failing = ("error",) if args.fail_on == "error" else ("error", "warning")
    if args.statistics:
        write_statistics(findings, args.format, out)
    else:
        write_findings(findings, args.format, out, failing)
    problems = [p for each in models for p in each.problems]
    _report_problems(list(dict.fromkeys(problems)), out)
    summary, severity = _summary(models, findings)
    out.note(summary, style=severity)
    if problems:
        return 2
    if args.exit_zero:
        return 0
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
    args: argparse.Namespace, settings: Optional[Settings], model: Model, out: Output
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
    out.note(
        f"flagtree-spec check: no backend named; checking every backend of the repository: "
        f"{', '.join(checked)}"
        + (f" ({', '.join(without)}: no Python spec tree)" if without else "")
    )
    return models


def _summary(models: Sequence[Model], findings: Sequence[Finding]) -> tuple[str, str]:
    """The last line of ``check`` (counts by severity and the number of files checked),
    and the style to show it in: the highest severity found, or ok."""
    files: set[str] = set()
    for model in models:
        files.update(entry.path for _, entry in model.mirror_files())
        files.update(r.hooks for r in model.spec_roots if r.hooks)
    checked = f"in {len(files)} file{'s' if len(files) != 1 else ''}"
    if not findings:
        return f"0 findings {checked}", "ok"
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    line = (
        ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items())
        + f" {checked}"
    )
    return line, next(s for s, n in counts.items() if n)


# --------------------------------------------------------------------------- diff


def _read(model: Model, path: str) -> list[str]:
    """The lines of source file *path*, decoded per PEP 263 as the model reads it."""
    source = model.source(path)
    if source.error is not None and not source.text:  # unreadable or undecodable
        raise InputError(f"cannot diff {path}: {source.error.message}")
    return io.StringIO(source.text, newline=None).readlines()


def _diff(args: argparse.Namespace, out: Output) -> int:
    model = model_from(args)
    _backends_present(model, out)
    name = _module_name(model, args.module)
    module = model.resolve(name)
    if module.file is None:
        raise InputError(f"{name} does not import ({module.reason or 'a namespace package'})")
    lower: Optional[str] = model.counterpart(name)
    # The headers of a diff name the files as the format shows paths (JSON: absolute).
    show = (lambda p: p) if args.format == "json" else out.path
    if module.origin is None:
        text = ""
        note = f"{name} loads from trunk ({module.file}); nothing overrides it"
    elif lower is None:
        text = "".join(
            difflib.unified_diff([], _read(model, module.file), "/dev/null", show(module.file))
        )
        note = f"{name} is added by the backend; no trunk counterpart"
    elif not (module.file.endswith(".py") and lower.endswith(".py")):
        raise InputError(f"{name}: {module.file} or {lower} is not a source file; cannot diff")
    else:
        shown = (show(lower), show(module.file))
        definitions = _definition_diffs(model, lower, module.file, shown)
        if definitions is not None:
            return _print_definitions(args.format, name, module.file, lower, definitions, out)
        text = "".join(difflib.unified_diff(_read(model, lower), _read(model, module.file), *shown))
        note = ""
    if args.format == "json":
        _dump({"module": name, "file": module.file, "shadows": lower, "diff": text}, out)
    elif text:
        out.raw(text)
    else:
        out.line(note or f"{name}: the override is identical to {lower}")
    return 0


def _definition_diffs(
    model: Model, lower: str, path: str, shown: tuple[str, str]
) -> Optional[list[DefinitionDiff]]:
    """Per-definition diffs when *path* inherits *lower* (their headers name the files as
    *shown*); ``None`` for a whole-file diff."""
    mine, theirs = model.source(path), model.source(lower)
    if mine.tree is None or theirs.tree is None or "inherit" not in mine.text:
        return None
    ours = analyse(mine.text)
    if ours.inherit_line is None:
        return None
    return definition_diffs(analyse(theirs.text), shown[0], ours, shown[1])


def _print_definitions(
    fmt: str,
    name: str,
    path: str,
    lower: str,
    definitions: Sequence[DefinitionDiff],
    out: Output,
) -> int:
    if fmt == "json":
        rows = [{"name": d.name, "state": d.state, "diff": d.diff} for d in definitions]
        text = "".join(d.diff for d in definitions)
        data = {"module": name, "file": path, "shadows": lower, "diff": text, "definitions": rows}
        _dump(data, out)
        return 0
    count = len(definitions)
    out.line(f"{name} inherits {lower} and changes {count} definition{'s' if count != 1 else ''}:")
    notes = {"wrapped": " (reads the lower version first)"}
    for d in definitions:
        out.line(f"  {d.state:<9} {d.name}{notes.get(d.state, '')}")
    out.line()
    out.raw("".join(d.diff for d in definitions))
    return 0


# --------------------------------------------------------------------------- registration


_CHECK_EPILOG = (
    "codes:\n"
    + "\n".join(f"  {code}  [{severity}] {text}" for code, (severity, text) in CODES.items())
    + (
        "\n\n'flagtree-spec rule CODE' explains a code: what it checks, why, an example and the\n"
        "fix. Suppress one finding with '# noqa: FTS00N' on its line.\n"
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
        formats=FORMATS,
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
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit with code 0 even when findings fail the run (input errors still exit 2)",
    )
    parser.add_argument(
        "--statistics",
        action="store_true",
        help="print how often each code was found instead of the findings (text or json)",
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
    rules.add_commands(commands)
