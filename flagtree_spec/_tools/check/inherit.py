"""The check rules about ``inherit`` overrides: FTS007 and FTS017.

After ``inherit(globals())``, an override's ``__file__`` names the lowest
version that ran, and an override can inherit only when a lower version
exists.  They register in :mod:`.registry`.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple, Optional, Union

from ..._missing import close_matches
from ..model.model import Model
from ..model.source import Source, call_name
from .registry import Hit, Rule, _rel, _trunk_names, rule

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__: list[str] = []


@rule("FTS007", "warning", "override derives paths from __file__")
class OwnFile(Rule):
    """## What it does
    Finds an override that derives a path from its own `__file__`, which names
    the mirror file (and, after `inherit(globals())`, the lower version that
    ran last, also in every function of the module).

    ## Why is this bad?
    Data files next to the trunk module are not next to the override:
    `os.path.dirname(__file__)` points into the spec tree, where they are not.

    ## Example
    ```python
    # third_party/B/backend/spec/R/runtime/build.py
    import os

    HEADERS = os.path.join(os.path.dirname(__file__), "include")
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/runtime/build.py
    from flagtree_spec import trunk_path

    HEADERS = trunk_path(__package__, "include")
    ```
    """

    _ADVICE = (
        "use os.path.dirname(__spec__.origin) for the override's own folder and "
        "flagtree_spec.trunk_path(__package__, ...) for trunk data"
    )

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        source = mf.parsed
        if mf.state != "live" or source is None or "__file__" not in source.text:
            return
        assert source.tree is not None
        call = _first_inherit(source.tree)
        lower = ""
        for node, in_function, opens_itself in sorted(
            _file_reads(source.tree), key=lambda r: (r[0].lineno, r[0].col_offset)
        ):
            before = call is None or (not in_function and (node.lineno, node.col_offset) < call)
            if opens_itself and before:
                if not isinstance(opens_itself, _Sibling):
                    continue  # reads the override's own source (to hash it, say): no path
                folder, own = os.path.split(mf.entry.path)
                names = mf.model.folder(folder).names - {own}
                if fnmatch.filter(names, opens_itself.pattern):
                    continue  # a file of the backend's next to the override, which is there
            if call is None:
                message = (
                    "derives a path from its own __file__, which is in the mirror tree; use "
                    "flagtree_spec.trunk_path(__package__, ...) to reach trunk files"
                )
            elif not in_function and (node.lineno, node.col_offset) < call:
                message = (
                    "reads __file__ before inherit(), where it is this override's own file in "
                    f"the mirror tree (after the call it is the lower version's); {self._ADVICE}"
                )
            else:
                where = (
                    "in a function, which runs after inherit()"
                    if in_function
                    else "after inherit()"
                )
                lower = lower or _lowest_that_runs(mf)
                message = (
                    f"reads __file__ {where}: it is then the lower version's file ({lower}), "
                    f"not this override's; {self._ADVICE}"
                )
            yield Hit(mf.entry.path, node.lineno, node.col_offset + 1, message)


def _first_inherit(tree: ast.Module) -> Optional[tuple[int, int]]:
    """Position of the first ``inherit(...)`` call that runs at import time, if any."""
    found: list[tuple[int, int]] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # its body runs when called, not at import time
        if isinstance(node, ast.Call) and call_name(node.func) == "inherit":
            found.append((node.lineno, node.col_offset))
        pending.extend(ast.iter_child_nodes(node))
    return min(found) if found else None


def _file_reads(
    tree: ast.Module,
) -> Iterator[tuple[ast.Name, bool, Union[bool, _Sibling, None]]]:
    """Every read of ``__file__``, whether it sits in a function body (runs when called),
    and whether it only opens the file itself (``open(__file__)``,
    ``Path(__file__).read_text()``): reading one's own source derives no path.

    Decorators, default values and annotations of a function run where it is
    defined; its body, and a lambda's, run when it is called.
    """
    pending: list[tuple[ast.AST, bool, tuple[ast.AST, ...]]] = [(tree, False, ())]
    while pending:
        node, in_function, above = pending.pop()
        if isinstance(node, ast.Name) and node.id == "__file__":
            yield node, in_function, _opens_itself(node, above) or _sibling(node, above)
            continue
        chain = (node, *above[:2])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = {id(b) for b in body}
            pending.extend(
                (child, in_function or id(child) in inner, chain)
                for child in ast.iter_child_nodes(node)
            )
        else:
            pending.extend((child, in_function, chain) for child in ast.iter_child_nodes(node))


_READS = frozenset({"read_text", "read_bytes", "open"})


class _Sibling(NamedTuple):
    """A file next to the override, named by a literal (``*`` for an f-string's field)."""

    pattern: str


def _literal(node: ast.AST) -> Optional[str]:
    """A string literal, or an f-string as a glob (its fields become ``*``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*"
            for v in node.values
        )
    return None


def _sibling(node: ast.Name, above: tuple[ast.AST, ...]) -> Optional[_Sibling]:
    """``Path(__file__).parent / "x"`` or ``os.path.join(os.path.dirname(__file__), "x")``:
    the name of the file next to this one that the expression reaches."""
    if len(above) < 3:
        return None
    first, second, third = above[:3]
    if (
        isinstance(first, ast.Call)
        and call_name(first.func) in ("Path", "PurePath")
        and isinstance(second, ast.Attribute)
        and second.attr == "parent"
        and isinstance(third, ast.BinOp)
        and isinstance(third.op, ast.Div)
        and third.left is second
    ):
        name = _literal(third.right)
        return _Sibling(name) if name else None
    if (
        isinstance(first, ast.Call)
        and call_name(first.func) == "dirname"
        and isinstance(second, ast.Call)
        and call_name(second.func) == "join"
        and len(second.args) == 2
        and second.args[0] is first
    ):
        name = _literal(second.args[1])
        return _Sibling(name) if name else None
    return None


def _opens_itself(node: ast.Name, above: tuple[ast.AST, ...]) -> bool:
    """Whether ``__file__`` at *node* (its parent and grandparent in *above*) is only
    opened: ``open(__file__, ...)`` (also ``io.open``, ``tokenize.open``), or
    ``Path(__file__).read_text()`` / ``.read_bytes()`` / ``.open()``."""
    if not above or not isinstance(above[0], ast.Call) or not above[0].args:
        return False
    call = above[0]
    if call.args[0] is not node:
        return False
    name = call_name(call.func)
    if name == "open":
        return True
    return (
        name in ("Path", "PurePath")
        and len(above) > 1
        and isinstance(above[1], ast.Attribute)
        and above[1].attr in _READS
    )


def _lowest_that_runs(mf: MirrorFile) -> str:
    """The file ``__file__`` names after this override's ``inherit()``, for a message."""
    lowest = mf.lowest
    if lowest is None:
        return "none: inherit() fails here, there is no lower version"
    return _rel(mf.model, lowest) if mf.model.origin_of(lowest) is not None else lowest


def _inherit_line(source: Source) -> int:
    """The line of the first top-level ``inherit(...)`` call (1 when it is elsewhere)."""
    assert source.tree is not None
    for node in source.tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and call_name(node.value.func) == "inherit"
        ):
            return node.lineno
    return 1


def _close_trunk_module(model: Model, name: str) -> list[str]:
    """Trunk modules whose name is close to *name*: in the same package, else the same
    module name in another package."""
    parent, _, last = name.rpartition(".")
    names = [n for n in _trunk_names(model) if n != model.root]
    siblings = {n.rpartition(".")[2]: n for n in names if n.rpartition(".")[0] == parent}
    found = [siblings[m] for m in close_matches(last, list(siblings))]
    return found or [n for n in names if n.rpartition(".")[2] == last]


@rule("FTS017", "error", "a mirror module calls inherit() but has no lower version")
class InheritWithoutLower(Rule):
    """## What it does
    Finds a mirror module that calls `inherit(globals())` but has no lower
    version to inherit: no trunk module and no lower backend's override of the
    same name (often a misspelt file name, which the message corrects).

    ## Why is this bad?
    Importing it raises `SpecError` on this backend.

    ## Example
    ```python
    # third_party/B/backend/spec/R/opps.py (trunk has R/ops.py)
    from flagtree_spec import inherit

    inherit(globals())
    ```

    ## Use instead
    ```python
    # third_party/B/backend/spec/R/ops.py
    from flagtree_spec import inherit

    inherit(globals())
    ```
    """

    def file(self, mf: MirrorFile) -> Iterator[Hit]:
        if mf.state != "live" or mf.lower is not None or not mf.inherits:
            return
        assert mf.parsed is not None
        name, model = mf.entry.name, mf.model
        what = (
            f"{name} calls inherit(globals()) but has no lower version (no trunk module, no "
            "lower backend's override), so importing it raises SpecError"
        )
        if mf.entry.kind == "init":
            what += (
                "; a mirror folder's __init__.py is a package-init override, and a mirror folder "
                "needs none: delete it, or the inherit() call"
            )
        else:
            matches = _close_trunk_module(model, name)
            if matches:
                lower = model.trunk_only(matches[0])
                what += f"; did you mean {matches[0]} ({lower})? Rename this file"
            else:
                what += "; for a module trunk does not have, delete the inherit() call"
        yield Hit(mf.entry.path, _inherit_line(mf.parsed), 1, what)
