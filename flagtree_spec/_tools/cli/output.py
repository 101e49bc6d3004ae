"""What a command prints, and where: paths, color, ``--output-file``, ``--quiet``.

Every static command writes through one :class:`Output`, made from its
options by :func:`~.options.add_command`'s handler:

* **paths** below the working folder are written relative to it in text
  (``third_party/b/backend/spec/R/x.py``, as ruff and pytest print them);
  others stay absolute.  JSON keeps absolute paths: a program reads them.
* **color** (:func:`color_wanted`) follows ``--color {auto,always,never}``;
  ``auto`` colors a terminal and nothing else, and honours ``NO_COLOR`` (off)
  and ``FORCE_COLOR`` (on), in that order, as CPython's own tracebacks do.
* ``--output-file FILE`` writes the report to *FILE* instead of stdout, all
  at once when the command is done (a command that stops with an input
  error leaves no file behind); notes and the summary stay on stderr.
* ``--quiet`` keeps the report and the errors, and drops the notes and the
  summary line on stderr.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import Optional, TextIO

from ..._usage import prefix
from ..model.model import InputError

__all__ = ["COLOR_CHOICES", "Output", "color_wanted", "paint"]

COLOR_CHOICES = ("auto", "always", "never")

# SGR sequences of the styles used; reset after each piece.
_STYLES = {
    "error": "1;31",
    "warning": "1;33",
    "info": "1;36",
    "path": "1",
    "bold": "1",
    "dim": "2",
    "ok": "32",
}
_RESET = "\x1b[0m"


def color_wanted(choice: str, stream: TextIO) -> bool:
    """Whether to color what goes to *stream* under ``--color`` *choice*.

    ``always`` and ``never`` decide; ``auto`` says no when ``NO_COLOR`` is set
    (to anything but the empty string), yes when ``FORCE_COLOR`` is, no for
    ``TERM=dumb``, and otherwise whether *stream* is a terminal.
    """
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def paint(text: str, style: str, on: bool) -> str:
    """*text* in *style* (a key of the styles: error, warning, info, path, bold, dim, ok)."""
    return f"\x1b[{_STYLES[style]}m{text}{_RESET}" if on and text else text


class Output:
    """The report of one command run: stdout or ``--output-file``, and stderr."""

    def __init__(
        self,
        command: str,
        *,
        color: str = "auto",
        output_file: Optional[str] = None,
        quiet: bool = False,
    ) -> None:
        self.command = command
        self.quiet = quiet
        self.output_file = output_file
        self._buffer: Optional[io.StringIO] = io.StringIO() if output_file else None
        self.stream: TextIO = self._buffer if self._buffer is not None else sys.stdout
        # A report written to a file is colored only when asked to (FORCE_COLOR is for logs).
        self.color = color == "always" if output_file else color_wanted(color, self.stream)
        self.err_color = color_wanted(color, sys.stderr)
        cwd = os.getcwd()
        # "/" as the working folder: every path is below it, and "" would be no prefix.
        self._here = cwd.rstrip(os.sep) + os.sep if cwd != os.sep else ""

    @classmethod
    def of(cls, args: argparse.Namespace) -> Output:
        """The output the options of *args* ask for (a command without them gets defaults)."""
        output_file = getattr(args, "output_file", None)
        if output_file is not None:
            folder = os.path.dirname(os.path.abspath(output_file))
            if not os.path.isdir(folder):
                raise InputError(
                    f"--output-file {output_file!r}: folder {folder!r} does not exist; create it "
                    "or give another file"
                )
            if os.path.isdir(output_file):
                raise InputError(f"--output-file {output_file!r} is a folder; give a file name")
        return cls(
            args.command,
            color=getattr(args, "color", "auto"),
            output_file=output_file,
            quiet=getattr(args, "quiet", False),
        )

    # ----------------------------------------------------------------- paths

    def path(self, path: Optional[str]) -> str:
        """*path* relative to the working folder when it lies below it, else as it is."""
        if path is None:
            return ""
        if self._here and path.startswith(self._here):
            return path[len(self._here) :]
        return path

    def text(self, text: str) -> str:
        """*text* with every absolute path below the working folder made relative."""
        return text.replace(self._here, "") if self._here else text

    # ----------------------------------------------------------------- writing

    def paint(self, text: str, style: str) -> str:
        """*text* in *style* when the report is colored."""
        return paint(text, style, self.color)

    def line(self, text: str = "") -> None:
        """One line of the report, its paths made relative."""
        self.stream.write(self.text(text) + "\n")

    def raw(self, text: str) -> None:
        """Text of the report written exactly (a diff's body, a JSON document)."""
        self.stream.write(text)

    def note(self, text: str, *, style: str = "") -> None:
        """A line on stderr beside the report (a notice, the summary); not with ``--quiet``."""
        if self.quiet:
            return
        text = self.text(text)
        sys.stderr.write((paint(text, style, self.err_color) if style else text) + "\n")

    def error(self, message: str) -> int:
        """The command's error line on stderr, ``flagtree-spec <command>: error: ...``; 2."""
        label = paint(prefix(self.command), "error", self.err_color)
        sys.stderr.write(f"{label} {self.text(message)}\n")
        return 2

    def close(self) -> None:
        """Write the report to ``--output-file`` (atomically: a complete file or none)."""
        if self._buffer is None or self.output_file is None:
            return
        target = os.path.abspath(self.output_file)
        partial = f"{target}.{os.getpid()}.partial"
        try:
            with open(partial, "w", encoding="utf-8", newline="\n") as f:
                f.write(self._buffer.getvalue())
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
