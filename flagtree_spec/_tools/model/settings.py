"""``[tool.flagtree-spec]`` in a repository's ``pyproject.toml``: the defaults of every command.

::

    [tool.flagtree-spec]
    backend = "mthreads"            # or a stack: "a,b" or ["a", "b"]
    root = "triton"                 # the root package, where a checkout holds several
    select = ["FTS0"]
    ignore = ["FTS008"]

    [tool.flagtree-spec.per-file-ignores]
    "third_party/*/backend/spec/triton/legacy/*.py" = ["FTS005"]

The file is the nearest ``pyproject.toml`` in the starting folder (the
repository given with ``--repo``, else the working directory) or above it
(:func:`settings_for`).  Every static command reads ``backend`` and ``root``
from it; ``check`` also the codes.  Options given on the command line win
over the table.  An unknown key is an error naming it; a value of the wrong
type is an error saying what is expected; a table whose name almost matches
(``[tool.flagtree_spec]``) is an error naming the right one, since it would
otherwise be ignored in silence.

Python 3.11 and later read the file with :mod:`tomllib`; Python 3.9 and 3.10
with ``tomli``, the package ``tomllib`` came from (a dependency there).  Where
``tomli`` is missing (a vendored copy of the library), a ``pyproject.toml``
that names the table is an error saying to install it; one that does not is
never parsed, so every command works without it.  The runtime never reads
this file.
"""

from __future__ import annotations

import os
import re
import sys
from types import ModuleType
from typing import NamedTuple, Optional

__all__ = [
    "KEYS",
    "Settings",
    "SettingsError",
    "find_pyproject",
    "read_settings",
    "read_table",
    "settings_for",
]

TABLE = "flagtree-spec"
KEYS = ("backend", "root", "select", "ignore", "per-file-ignores")


class SettingsError(Exception):
    """The ``[tool.flagtree-spec]`` table cannot be used (an input error)."""


class Settings(NamedTuple):
    """The validated ``[tool.flagtree-spec]`` table of one ``pyproject.toml``."""

    path: str
    backend: tuple[str, ...]
    root: Optional[str]
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    # (glob relative to the folder of pyproject.toml, codes), in file order.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)


def find_pyproject(start: str) -> Optional[str]:
    """The nearest ``pyproject.toml`` in *start* or a folder above it."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def settings_for(repo: Optional[str]) -> Optional[Settings]:
    """The table of the nearest ``pyproject.toml`` from *repo* (when it is a folder, else
    the working directory) upward; ``None`` without one.  Raises :class:`SettingsError`."""
    start = repo if repo is not None and os.path.isdir(repo) else os.getcwd()
    path = find_pyproject(start)
    return None if path is None else read_settings(path)


def read_settings(path: str) -> Optional[Settings]:
    """Read and validate the table of *path*; ``None`` when the file has no such table."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from None
    table = read_table(text, path)
    if table is None:
        return None
    return _validate(table, path)


def _toml_reader(path: str) -> ModuleType:
    """:mod:`tomllib`, or ``tomli`` on Python < 3.11; an error naming *path* without it."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    else:  # pragma: no cover - Python < 3.11
        try:
            import tomli
        except ImportError:
            raise SettingsError(
                f"{path} has a [tool.{TABLE}] table, and reading it on Python "
                f"{sys.version_info[0]}.{sys.version_info[1]} needs the tomli package: "
                "pip install tomli (or give the options on the command line and remove the table)"
            ) from None
        return tomli


# The table names in [tool.NAME] and [tool.NAME.sub] headers, and tool.NAME.key keys.
_TOOL_NAME = re.compile(
    r"""^\s*(?:\[\s*tool\s*\.\s*|tool\s*\.\s*)["']?([A-Za-z0-9_.-]+?)["']?\s*(?:[.\]=])""",
    re.M,
)


def near_miss(name: str) -> bool:
    """Whether table name *name* is ``flagtree-spec`` misspelt (``flagtree_spec``,
    ``FlagTree-Spec``, ``flagtree-specs``, ``flagtreespec``, ``flagtree.spec``)."""
    if name == TABLE:
        return False
    folded = re.sub(r"[-_.\s]", "", name.lower())
    if folded == "flagtreespec":
        return True
    import difflib

    return difflib.SequenceMatcher(None, folded, "flagtreespec").ratio() >= 0.85


def _misnamed(names: list[str], path: str) -> None:
    for name in names:
        if near_miss(name):
            raise SettingsError(
                f"{path}: [tool.{name}] is not read by flagtree-spec: its table is "
                f"[tool.{TABLE}] (with a hyphen); rename the table"
            )


def read_table(text: str, path: str) -> Optional[dict[str, object]]:
    """The ``[tool.flagtree-spec]`` table of the TOML document *text*, or ``None``.

    A table whose name almost matches is a :class:`SettingsError` naming the right one.
    """
    if "flagtree" not in text.lower() and "spec" not in text.lower():
        return None  # no key of that name, nor one like it: nothing to parse
    # Found in the text, so that a misnamed table is named also where TOML cannot be read.
    _misnamed([m.group(1).split(".")[0] for m in _TOOL_NAME.finditer(text)], path)
    if TABLE not in text:
        return None
    toml = _toml_reader(path)
    try:
        document = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None
    tool = document.get("tool")
    if isinstance(tool, dict):
        _misnamed([key for key in tool if isinstance(key, str)], path)
    table = tool.get(TABLE) if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: tool.{TABLE} must be a table, [tool.{TABLE}]")
    return table


def _validate(table: dict[str, object], path: str) -> Settings:
    where = f"{path}: [tool.{TABLE}]"
    unknown = [key for key in table if key not in KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(KEYS)}")

    def strings(key: str, like: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(
                f"{where}: {key} = {_toml(value)}: a list of strings is expected, like {like}"
            )
        return tuple(value)

    backend_value = table.get("backend", [])
    if isinstance(backend_value, str):
        backend: tuple[str, ...] = (backend_value,) if backend_value.strip() else ()
    elif isinstance(backend_value, list) and all(isinstance(v, str) for v in backend_value):
        backend = tuple(backend_value)
    else:
        raise SettingsError(
            f"{where}: backend = {_toml(backend_value)}: a string or a list of strings is "
            'expected, like backend = "mthreads", "a,b" or ["a", "b"]'
        )
    root = table.get("root")
    if root is not None and not isinstance(root, str):
        raise SettingsError(
            f"{where}: root = {_toml(root)}: a string is expected, the package name, "
            'like root = "triton"'
        )
    ignores = table.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        raise SettingsError(
            f"{where}: per-file-ignores = {_toml(ignores)}: a table of glob = [codes] is "
            'expected, like [tool.flagtree-spec.per-file-ignores] "legacy/*.py" = ["FTS005"]'
        )
    per_file = []
    for pattern, codes in ignores.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise SettingsError(
                f"{where}: per-file-ignores {pattern!r} = {_toml(codes)}: a list of strings "
                'is expected, like ["FTS005"]'
            )
        per_file.append((pattern, tuple(codes)))
    return Settings(
        path=path,
        backend=backend,
        root=root,
        select=strings("select", 'select = ["FTS0"]'),
        ignore=strings("ignore", 'ignore = ["FTS008"]'),
        per_file_ignores=tuple(per_file),
    )


def _toml(value: object) -> str:
    """*value* as TOML writes it, for messages (``3``, ``true``, ``"x"``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)
