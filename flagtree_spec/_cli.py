"""The ``flagtree-spec`` command line: a thin dispatcher over the runtime and the tools.

Each command lives in the module of its concept and registers itself here
through an ``add_commands(subparsers)`` function: ``run`` and ``autostart``
in the runtime (``_run``), the offline commands in ``_tools.cli``
(``commands``, ``upgrade`` and ``adopt``) and ``_tools.migrate.cli``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Optional

from . import __version__, _run
from ._usage import PROG, Parser

__all__ = ["main"]

# The commands of the runtime: "run" executes the program in this process, which
# must not pay for (or see in sys.modules) the offline tools it never uses.
RUNTIME_COMMANDS = frozenset({"run", "autostart"})

# The exit status of a command whose output was closed before it finished, as the
# shell reports one ended by SIGPIPE (128 + 13).
BROKEN_PIPE = 141


def build_parser(tools: bool = True) -> argparse.ArgumentParser:
    """The parser of every command, or with *tools* false of the runtime's commands only."""
    parser = Parser(
        prog=PROG,
        description="Inspect, check and run backend spec trees of a Python package.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Every command's parser is a Parser too: its own usage on an error, no abbreviations.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _run.add_commands(commands)
    if tools:
        from ._tools.cli import adopt as adopt_command
        from ._tools.cli import commands as static_commands
        from ._tools.cli import upgrade as upgrade_commands

        static_commands.add_commands(commands)
        upgrade_commands.add_commands(commands)
        adopt_command.add_commands(commands)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with *argv* (default ``sys.argv[1:]``); return the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(tools=not words or words[0] not in RUNTIME_COMMANDS)
    args = parser.parse_args(words)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command in RUNTIME_COMMANDS:
        # "run" is the program's own process: a closed pipe is the program's to handle.
        runtime_code: int = handler(args)
        return runtime_code
    try:
        code: int = handler(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (flagtree-spec check | head): stop quietly, as a
        # command killed by SIGPIPE would, without a traceback or a second error
        # when the interpreter flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return BROKEN_PIPE
    return code
