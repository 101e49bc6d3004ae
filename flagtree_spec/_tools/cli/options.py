"""The options and set-up that every static command shares.

Each command of ``status``, ``which``, ``list``, ``check``, ``diff``, ``lock`` and
``rebase`` is registered with :func:`add_command`: one parser with the options
that name the trunk and the backends (:data:`DETECTION` explains them), the
output options (``--format`` among the formats the command declares,
``--color``, ``--output-file``, ``--quiet``), and a handler that reads the
``[tool.flagtree-spec]`` table once (:func:`settings_from`), hands the command
an :class:`~.output.Output`, and turns an :class:`InputError` into the
command's error line and exit code 2.  :func:`model_from` builds the model
those options and that table name.  :func:`add_format` gives a command with a
parser of its own the same ``--format`` option.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, Callable, Optional

from ..._usage import FORMATS, add_format
from ..model.model import InputError, Model, load
from ..model.settings import Settings, SettingsError, settings_for
from .output import COLOR_CHOICES, Output

__all__ = [
    "DETECTION",
    "FORMATS",
    "Handler",
    "add_command",
    "add_format",
    "add_output",
    "guard",
    "model_from",
    "settings_from",
]

# What a command's function is given: its options, and the output to write to.
Handler = Callable[[argparse.Namespace, Output], int]

DETECTION = """\
The trunk and the spec roots come from --trunk DIR (the root package's folder),
--package R (an installed package, found without importing it) or a FlagTree-style
repository (--repo DIR, default the working directory: python/R and third_party/B/...;
when python/ holds several packages, the one a backend's spec root mirrors, or --root R).
The backend stack is --backend (else FLAGTREE_BACKEND, else the trunk's build-time
marker); --spec-root DIR adds spec roots in front of the discovered ones (with a single
-b B, DIR is B's spec root). Nothing of the trunk or a backend is imported or executed.
"""


def add_output(parser: argparse.ArgumentParser) -> None:
    """``--color``, ``--output-file`` and ``--quiet`` (see :mod:`.output`)."""
    out = parser.add_argument_group("output")
    out.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="color the text output: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR "
        "forces it), always or never (default: auto)",
    )
    out.add_argument(
        "--output-file",
        metavar="FILE",
        help="write the report to FILE instead of stdout (written when the command is done)",
    )
    out.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the report and errors only: no notes, no summary line on stderr",
    )


def _common(parser: argparse.ArgumentParser, formats: Sequence[str] = ("text", "json")) -> None:
    where = parser.add_argument_group("trunk and backends")
    where.add_argument(
        "--trunk", metavar="DIR", help="the root package's folder (holds __init__.py)"
    )
    where.add_argument("--package", metavar="R", help="an installed root package, e.g. triton")
    where.add_argument("--repo", metavar="DIR", help="a FlagTree-style repository (default: .)")
    where.add_argument(
        "--root",
        metavar="R",
        action="append",
        help="short for --trunk <repo>/python/R, to choose one of several packages in python/ "
        "(one root per run)",
    )
    where.add_argument(
        "-b",
        "--backend",
        metavar="B",
        action="append",
        default=[],
        help="backend stack, highest first: 'a,b' or repeated (default: FLAGTREE_BACKEND, "
        "else the marker)",
    )
    where.add_argument(
        "--spec-root",
        metavar="DIR",
        action="append",
        default=[],
        help="a spec root folder, in front of the discovered ones (repeatable); with a single "
        "-b B, a spec root of B",
    )
    where.add_argument(
        "--auto",
        action="store_true",
        help="assume auto mode (flagtree-spec run / install()): every package is specialised",
    )
    add_format(parser, formats)
    add_output(parser)


def model_from(args: argparse.Namespace, settings: Optional[Settings] = None) -> Model:
    """The model that the options *args* and the ``[tool.flagtree-spec]`` table name.

    *settings* defaults to the table the handler read for this run.
    """
    if settings is None:
        settings = getattr(args, "settings", None)
    roots = args.root or []
    if len(roots) > 1:
        raise InputError(
            f"one root per run: --root given {len(roots)} times ({', '.join(roots)}); "
            "run once per root"
        )
    return load(
        trunk=args.trunk,
        package=args.package,
        repo=args.repo,
        backends=args.backend,
        spec_roots=args.spec_root,
        auto=args.auto,
        root=roots[0] if roots else None,
        settings=settings,
    )


def settings_from(args: argparse.Namespace) -> Optional[Settings]:
    """The ``[tool.flagtree-spec]`` table of the nearest ``pyproject.toml``, if any.

    Looked for from the ``--repo`` folder, else the working directory, upward.
    """
    try:
        return settings_for(getattr(args, "repo", None))
    except SettingsError as exc:
        raise InputError(str(exc)) from None


def guard(run: Handler) -> Callable[[argparse.Namespace], int]:
    """The handler of a command: the table read, an :class:`Output` made, input errors
    reported as the command's error line (exit code 2), the report written last."""

    def handler(args: argparse.Namespace) -> int:
        out = Output(args.command)
        try:
            out = Output.of(args)
            args.settings = settings_from(args)
            code = run(args, out)
            out.close()
        except InputError as exc:
            return out.error(str(exc))
        except OSError as exc:
            if out.output_file is None:
                raise
            return out.error(f"cannot write --output-file {out.output_file!r}: {exc}")
        return code

    return handler


def add_command(
    commands: Any,
    name: str,
    run: Handler,
    *,
    help: str,
    description: str,
    formats: Sequence[str] = ("text", "json"),
    epilog: Optional[str] = None,
) -> argparse.ArgumentParser:
    """Register command *name*: its parser (the detection options, ``--format`` in
    *formats*, the first the default, and the output options), with :data:`DETECTION`
    after *description*, handled by *run* through :func:`guard`."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help,
        description=f"{description}\n\n{DETECTION}",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser, formats)
    parser.set_defaults(handler=guard(run))
    return parser
