"""The options and set-up that every static command shares.

Each command of ``status``, ``which``, ``list``, ``check``, ``diff``, ``lock`` and
``rebase`` is registered with :func:`add_command`: one parser with the options
that name the trunk and the backends (:data:`DETECTION` explains them), a
``--format`` choice, and a handler that turns an :class:`InputError` into a
message and exit code 2.  :func:`model_from` builds the model those options name.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, Callable, Optional

from ..model.model import InputError, Model, load
from ..model.settings import Settings, SettingsError, find_pyproject, read_settings

__all__ = ["DETECTION", "add_command", "guard", "model_from", "settings_from"]

DETECTION = """\
The trunk and the spec roots come from --trunk DIR (the root package's folder),
--package R (an installed package, found without importing it) or a FlagTree-style
repository (--repo DIR, default the working directory: python/R and third_party/B/...;
when python/ holds several packages, the one a backend's spec root mirrors, or --root R).
The backend stack is --backend (else FLAGTREE_BACKEND, else the trunk's build-time
marker); --spec-root DIR adds spec roots in front of the discovered ones (with a single
-b B, DIR is B's spec root). Nothing of the trunk or a backend is imported or executed.
"""


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
    parser.add_argument(
        "--format", choices=formats, default="text", help="output format (default: text)"
    )


def model_from(args: argparse.Namespace, settings: Optional[Settings] = None) -> Model:
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
    """The ``[tool.flagtree-spec]`` table of the nearest ``pyproject.toml``, if any."""
    start = args.repo if args.repo is not None and os.path.isdir(args.repo) else os.getcwd()
    path = find_pyproject(start)
    if path is None:
        return None
    try:
        return read_settings(path)
    except SettingsError as exc:
        raise InputError(str(exc)) from None


def guard(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn input errors into a message and exit code 2."""

    def handler(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except InputError as exc:
            print(f"flagtree-spec {args.command}: error: {exc}", file=sys.stderr)
            return 2

    return handler


def add_command(
    commands: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    formats: Sequence[str] = ("text", "json"),
    epilog: Optional[str] = None,
) -> argparse.ArgumentParser:
    """Register command *name*: its parser (the detection options, ``--format`` in
    *formats*), with :data:`DETECTION` after *description*, handled by *run*."""
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
