"""The command line's parser class and its one error line, for every command.

Every command of ``flagtree-spec``, those of the runtime (``run``,
``autostart``) and those of the offline tools, reports a usage or input
error the same way, on stderr, and exits with code 2::

    flagtree-spec check: error: --trunk 'nowhere' does not exist; give the root package's folder

:class:`Parser` is the class of the top-level parser and, through
``add_subparsers``, of every command's: no abbreviated long options (an
abbreviation that works today breaks when an option is added), and an
unknown option is reported with the command's own usage, not the top
level's.  :func:`error` prints the error line of a command that found its
input unusable after parsing.  :func:`add_format` declares the output formats
of a command: ``--format`` takes those, and a format that only other commands
have is refused with a message that names the valid ones.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, Optional

__all__ = ["FORMATS", "PROG", "Parser", "add_format", "error", "prefix"]

PROG = "flagtree-spec"

# Every output format a command may declare, and what it is for.
FORMATS = {
    "text": "lines for people",
    "json": "one JSON document",
    "github": "GitHub Actions workflow annotations",
    "sarif": "SARIF 2.1.0, for code-scanning services",
    "junit": "JUnit XML, for CI test reports",
    "gitlab": "a GitLab code quality report",
}


def prefix(command: Optional[str]) -> str:
    """``flagtree-spec <command>: error:``, or ``flagtree-spec: error:`` without a command."""
    return f"{PROG} {command}: error:" if command else f"{PROG}: error:"


def error(command: Optional[str], message: str) -> int:
    """Print *message* as *command*'s error line on stderr; return the exit code, 2."""
    sys.stderr.write(f"{prefix(command)} {message}\n")
    return 2


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` with ``allow_abbrev=False`` whose commands own their errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Optional[Sequence[str]] = None, namespace: Optional[argparse.Namespace] = None
    ) -> tuple[argparse.Namespace, list[str]]:
        found, extras = super().parse_known_args(args, namespace)
        if extras and self.prog != PROG:
            # A command's parser: the top level would report these with its own usage,
            # which does not show the options of the command that was mistyped.
            self.error(f"unrecognized arguments: {' '.join(extras)}{self._hint(extras)}")
        return found, extras

    def _hint(self, extras: Sequence[str]) -> str:
        """Which option an unknown ``--opt`` abbreviates or misspells, if one is near."""
        import difflib

        options = [o for action in self._actions for o in action.option_strings]
        for word in extras:
            name = word.partition("=")[0]
            if not name.startswith("--"):
                continue
            longer = [o for o in options if o.startswith(name)]
            if longer:
                return f" ({name} abbreviates {' or '.join(longer)}: write options in full)"
            near = difflib.get_close_matches(name, options, n=1)
            if near:
                return f" (did you mean {near[0]}?)"
        return ""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


# The formats each command declared with add_format, by command name.
_DECLARED: dict[str, tuple[str, ...]] = {}


def _command(parser: argparse.ArgumentParser) -> str:
    return parser.prog.rpartition(" ")[2]


class _Format(argparse.Action):
    """``--format F``: one of the command's formats, else an error naming them."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: Optional[str] = None,
    ) -> None:
        value = str(values)
        command = _command(parser)
        formats = _DECLARED[command]
        if value not in formats:
            valid = ", ".join(formats)
            if value not in FORMATS:
                parser.error(
                    f"--format {value!r} is not an output format; {command} writes {valid}"
                )
            others = [c for c, declared in _DECLARED.items() if value in declared]
            parser.error(
                f"--format {value} ({FORMATS[value]}) is not a format of {command}, which "
                f"writes {valid}" + (f"; {', '.join(others)} writes {value}" if others else "")
            )
        setattr(namespace, self.dest, value)


def add_format(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """Give *parser*, a command's, ``--format`` with the choices *formats* (the first is
    the default).

    Each name must be a key of :data:`FORMATS`.  A format of :data:`FORMATS` that
    the command does not declare is refused with a message naming the formats it
    writes, and the commands that write that one.
    """
    unknown = [f for f in formats if f not in FORMATS]
    assert formats and not unknown, unknown
    _DECLARED[_command(parser)] = tuple(formats)
    parser.add_argument(
        "--format",
        action=_Format,
        default=formats[0],
        metavar="{" + ",".join(formats) + "}",
        help=f"output format (default: {formats[0]}): "
        + "; ".join(f"{f}: {FORMATS[f]}" for f in formats),
    )
