"""``[tool.flagtree-spec]`` in a repository's ``pyproject.toml``: the defaults of ``check``.

::

    [tool.flagtree-spec]
    backend = "mthreads"            # or a stack: "a,b" or ["a", "b"]
    root = "triton"                 # the root package, where a checkout holds several
    select = ["FTS0"]
    ignore = ["FTS008"]

    [tool.flagtree-spec.per-file-ignores]
    "third_party/*/backend/spec/triton/legacy/*.py" = ["FTS005"]

The file is the nearest ``pyproject.toml`` in the starting folder (the
repository given with ``--repo``, else the working directory) or above it.
Options given on the command line win over the table; an unknown key is an
error naming it.

Python 3.11 and later read the file with :mod:`tomllib`; Python 3.9 and 3.10
with ``tomli``, the package ``tomllib`` came from (a dependency there).  Where
``tomli`` is missing (a vendored copy of the library), a ``pyproject.toml``
that names the table is an error saying to install it; one that does not is
never parsed, so every command works without it.  The runtime never reads
this file.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import NamedTuple, Optional

__all__ = ["KEYS", "Settings", "SettingsError", "find_pyproject", "read_settings", "read_table"]

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


def read_table(text: str, path: str) -> Optional[dict[str, object]]:
    """The ``[tool.flagtree-spec]`` table of the TOML document *text*, or ``None``."""
    if TABLE not in text:
        return None  # no key of that name anywhere: nothing to parse
    toml = _toml_reader(path)
    try:
        document = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None
    tool = document.get("tool")
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

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{where}: {key} must be a list of strings, not {value!r}")
        return tuple(value)

    backend_value = table.get("backend", [])
    if isinstance(backend_value, str):
        backend: tuple[str, ...] = (backend_value,) if backend_value.strip() else ()
    else:
        backend = strings("backend")
    root = table.get("root")
    if root is not None and not isinstance(root, str):
        raise SettingsError(f"{where}: root must be a package name in a string, not {root!r}")
    ignores = table.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        raise SettingsError(
            f"{where}: per-file-ignores must be a table of glob = [codes], not {ignores!r}"
        )
    per_file = []
    for pattern, codes in ignores.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise SettingsError(
                f"{where}: per-file-ignores {pattern!r} must be a list of codes, not {codes!r}"
            )
        per_file.append((pattern, tuple(codes)))
    return Settings(
        path=path,
        backend=backend,
        root=root,
        select=strings("select"),
        ignore=strings("ignore"),
        per_file_ignores=tuple(per_file),
    )
