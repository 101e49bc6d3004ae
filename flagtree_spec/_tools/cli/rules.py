"""``flagtree-spec rule CODE``: a rule explained, from its entry in the check registry.

The explanation is the rule's docstring (see
:mod:`flagtree_spec._tools.check.registry`): what it checks, why, an example
and the fix.  :func:`page` renders every rule the same way for the
documentation site (``docs/rules.md``), so the command, the site and the
SARIF ``help`` of each rule say the same words.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..check.driver import FAMILIES
from ..check.registry import RULES, Rule
from ..model.model import InputError
from .options import add_format, add_output, guard
from .output import Output

__all__ = ["add_commands", "markdown", "page"]

assert FAMILIES  # importing the families of rules fills the registry


def markdown(rule: Rule, level: int = 1) -> str:
    """A rule as Markdown: its code as the heading, its summary, then its sections."""
    marks = "#" * level
    head = (
        f"{marks} {rule.code}\n\n**{_escaped(rule.summary)}** (default severity: {rule.severity})"
    )
    return f"{head}\n\n{rule.explanation.markdown(level + 1)}\n"


def _escaped(text: str) -> str:
    """*text* for Markdown prose: ``__all__`` is no bold ``all``."""
    return text.replace("_", "\\_")


# Before each code block of the page: the examples are fragments, not programs to run.
_NO_RUN = "<!-- docs: no-run (an example of what the rule reports, not a program) -->"


def page() -> str:
    """``docs/rules.md``: every rule of the registry, in code order."""
    index = "\n".join(
        f"| [{r.code}](#{r.code.lower()}) | {r.severity} | {_escaped(r.summary)} |"
        for r in RULES.values()
    )
    body = "\n".join(markdown(rule, 2) for rule in RULES.values())
    lines, inside = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            if not inside:
                lines.append(_NO_RUN)
            inside = not inside
        lines.append(line)
    return (
        "<!-- Written by scripts/rules-doc from the rules' docstrings; do not edit. -->\n"
        "# Rules\n\n"
        "Every code of `flagtree-spec check`, explained as `flagtree-spec rule CODE` "
        "explains it: what it checks, why it matters, an example and the fix (each from "
        "the rule's entry in the registry the checker runs). Where each is reported, and "
        "the details, are in [check.md](check.md).\n\n"
        "| code | severity | summary |\n|---|---|---|\n" + index + "\n\n" + "\n".join(lines) + "\n"
    )


def _codes(values: list[str]) -> list[Rule]:
    found = []
    for value in values:
        code = value.strip().upper()
        if code not in RULES:
            near = [c for c in RULES if c.startswith(code)] if code.startswith("FTS") else []
            hint = f" (codes starting so: {', '.join(near)})" if near else ""
            raise InputError(
                f"{value!r} is not a check code{hint}; the codes are FTS001 to {list(RULES)[-1]}, "
                "listed by 'flagtree-spec rule --all'"
            )
        found.append(RULES[code])
    return found


def _rule(args: argparse.Namespace, out: Output) -> int:
    if args.all == bool(args.codes):
        raise InputError("name the codes to explain (flagtree-spec rule FTS012), or give --all")
    chosen = list(RULES.values()) if args.all else _codes(args.codes)
    if args.format == "json":
        data: list[dict[str, Any]] = [
            {
                "code": r.code,
                "severity": r.severity,
                "summary": r.summary,
                **{k: v for k, v in r.explanation._asdict().items()},
                "url": r.url,
            }
            for r in chosen
        ]
        out.raw(json.dumps(data, indent=2) + "\n")
        return 0
    for i, rule in enumerate(chosen):
        if i:
            out.line()
        text = markdown(rule)
        for line in text.splitlines():
            out.line(out.paint(line, "bold") if line.startswith("#") else line)
        out.line()
        out.line(f"Documentation: {rule.url}")
    return 0


def add_commands(commands: Any) -> None:
    """Register ``rule``."""
    parser = commands.add_parser(
        "rule",
        help="explain check codes: what each checks, why, an example and the fix",
        description="Explain check codes from the rule registry that check uses: what each "
        "checks, why it matters, an example and the fix (Markdown), and the page of its "
        "documentation.",
    )
    parser.add_argument("codes", nargs="*", metavar="CODE", help="a check code, like FTS012")
    parser.add_argument("--all", action="store_true", help="explain every code")
    add_format(parser, ("text", "json"))
    add_output(parser)
    parser.set_defaults(handler=guard(_rule))
