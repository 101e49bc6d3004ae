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

Python 3.11 and later read the file with :mod:`tomllib`.  Python 3.9 and 3.10
have no TOML reader in the standard library, and the library depends on
nothing else, so there a small strict reader parses this one table (and only
skips the rest of the file): it understands strings, arrays of strings,
``true``/``false``, inline tables and the table headers above, and anything
else in the table is an error that says so, never a guess.  The test suite
checks that both readers give the same result.
"""

from __future__ import annotations

import os
import re
import sys
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


def read_table(text: str, path: str) -> Optional[dict[str, object]]:
    """The ``[tool.flagtree-spec]`` table of the TOML document *text*, or ``None``."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path} is not valid TOML: {exc}") from None
        tool = document.get("tool")
        table = tool.get(TABLE) if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise SettingsError(f"{path}: tool.{TABLE} must be a table, [tool.{TABLE}]")
        return table
    return read_table_strictly(text, path)  # pragma: no cover - exercised on Python < 3.11


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


# --------------------------------------------------------------------------- the strict reader

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_HEADER = re.compile(r"\[\s*(?P<key>[^\[\]]*?)\s*\]\s*(?:#.*)?$")
_MULTILINE = ('"""', "'''")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class _Unreadable(Exception):
    """Text in the table that the strict reader does not understand."""


class _Unclosed(_Unreadable):
    """An array that may continue on the next line."""


# A key of this table written outside its header: tool.flagtree-spec.x = ... before
# any header, or flagtree-spec = {...} under [tool] (elsewhere, as under
# [project.scripts], a key named flagtree-spec is something else).
_ELSEWHERE_TOP = re.compile(r"""^\s*tool\s*\.\s*["']?flagtree-spec["']?\s*[.=]""")
_ELSEWHERE_TOOL = re.compile(r"""^\s*["']?flagtree-spec["']?\s*[.=]""")


def read_table_strictly(text: str, path: str) -> Optional[dict[str, object]]:
    """Parse only the ``[tool.flagtree-spec]`` table of *text*, strictly.

    Lines outside the table are skipped (multi-line strings there are
    stepped over, so a header inside one is not taken for a real one).
    Inside it: ``key = value`` lines and the headers of the table and its
    sub-tables; values are strings (basic or literal, one line), arrays of
    them (over several lines, trailing comma allowed), ``true``/``false``
    and one-line inline tables.  Anything else raises :class:`SettingsError`
    naming the line.
    """
    lines = text.splitlines()
    table: Optional[dict[str, object]] = None
    current: Optional[dict[str, object]] = None
    headers: set[tuple[str, ...]] = set()
    outside: Optional[list[str]] = None  # the header of the table being skipped

    def enter(header: list[str], number: int, line: str) -> dict[str, object]:
        nonlocal table
        if tuple(header) in headers:
            raise _error(path, number, line, "this table header appears twice")
        headers.add(tuple(header))
        table = {} if table is None else table
        return _subtable(table, header[2:], path, number)

    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        stripped = line.strip()
        if current is None:
            if stripped.startswith("[") and not stripped.startswith("[["):
                header = _header(stripped)
                if header is not None and header[:2] == ["tool", TABLE]:
                    current = enter(header, number, line)
                    continue
                outside = header
            elif stripped.startswith("[["):
                outside = []
            elif (outside is None and _ELSEWHERE_TOP.match(line)) or (
                outside == ["tool"] and _ELSEWHERE_TOOL.match(line)
            ):
                raise _error(path, number, line, f"write the settings under [tool.{TABLE}]")
            number = _skip_multiline(lines, number, stripped)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            if stripped.startswith("[["):
                header_text = stripped.lstrip("[").split("]")[0].strip()
                if _split_key(header_text, path, number)[:2] == ["tool", TABLE]:
                    raise _error(path, number, line, "an array of tables is not a setting")
                current, outside = None, []
                continue
            header = _header(stripped)
            if header is None:
                raise _error(path, number, line, "a table header is not understood")
            current = enter(header, number, line) if header[:2] == ["tool", TABLE] else None
            outside = header
            continue
        key_text, equals, rest = _partition_key(stripped)
        if not equals:
            raise _error(path, number, line, "expected 'key = value'")
        keys = _split_key(key_text, path, number)
        # An array may continue over the next lines: gather until it parses.
        value_text = rest
        while True:
            try:
                value, tail = _value(value_text.strip())
                break
            except _Unclosed as exc:
                if number < len(lines):
                    value_text += "\n" + lines[number]
                    number += 1
                    continue
                raise _error(path, number, line, str(exc)) from None
            except _Unreadable as exc:
                raise _error(path, number, line, str(exc)) from None
        tail = tail.strip()
        if tail and not tail.startswith("#"):
            raise _error(path, number, line, f"unexpected {tail!r} after the value")
        target = current
        for part in keys[:-1]:
            target = _into(target, part, path, number)
        if keys[-1] in target:
            raise _error(path, number, line, f"key {keys[-1]!r} is defined twice")
        target[keys[-1]] = value
    return table


def _error(path: str, number: int, line: str, why: str) -> SettingsError:
    return SettingsError(
        f"{path}:{number}: [tool.{TABLE}]: {why}: {line.strip()!r} (on Python < 3.11 this table "
        "is read by a small strict reader that understands strings, arrays of strings, "
        "true/false and inline tables; write the value in one of those forms)"
    )


def _header(stripped: str) -> Optional[list[str]]:
    match = _HEADER.fullmatch(stripped)
    if match is None:
        return None
    try:
        return _split_key(match.group("key"), "", 0)
    except SettingsError:
        return None


def _subtable(
    table: dict[str, object], keys: list[str], path: str, number: int
) -> dict[str, object]:
    target = table
    for part in keys:
        target = _into(target, part, path, number)
    return target


def _into(target: dict[str, object], part: str, path: str, number: int) -> dict[str, object]:
    inner = target.setdefault(part, {})
    if not isinstance(inner, dict):
        raise SettingsError(f"{path}:{number}: [tool.{TABLE}]: {part!r} is not a table")
    return inner


def _skip_multiline(lines: list[str], number: int, stripped: str) -> int:
    """Step over a multi-line string that starts on this line (outside the table)."""
    for quote in _MULTILINE:
        if stripped.count(quote) % 2 == 1:
            while number < len(lines):
                number += 1
                if quote in lines[number - 1]:
                    break
            break
    return number


def _partition_key(text: str) -> tuple[str, str, str]:
    """Split ``key = value`` at the first ``=`` outside quotes."""
    quote = ""
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "=":
            return text[:i].strip(), "=", text[i + 1 :]
    return text, "", ""


def _split_key(text: str, path: str, number: int) -> list[str]:
    """A dotted key such as ``tool."flagtree-spec"`` as a list of its parts."""
    parts: list[str] = []
    rest = text.strip()
    while True:
        if rest.startswith(('"', "'")):
            try:
                part, rest = _string(rest)
            except _Unreadable as exc:
                raise SettingsError(f"{path}:{number}: {exc}") from None
        else:
            match = _BARE_KEY.match(rest)
            if match is None:
                raise SettingsError(f"{path}:{number}: {text!r} is not a key")
            part, rest = match.group(), rest[match.end() :]
        parts.append(part)
        rest = rest.strip()
        if not rest:
            return parts
        if not rest.startswith("."):
            raise SettingsError(f"{path}:{number}: {text!r} is not a key")
        rest = rest[1:].strip()


def _value(text: str) -> tuple[object, str]:
    """Parse one value at the start of *text*; return it and the text after it."""
    if text.startswith(_MULTILINE):
        raise _Unreadable("a multi-line string is not understood")
    if text.startswith(('"', "'")):
        return _string(text)
    if text.startswith("["):
        return _array(text[1:])
    if text.startswith("{"):
        return _inline_table(text[1:])
    for word, value in (("true", True), ("false", False)):
        if text.startswith(word) and not _BARE_KEY.match(text[len(word) :]):
            return value, text[len(word) :]
    raise _Unreadable("this value is not understood")


def _string(text: str) -> tuple[str, str]:
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == quote:
            return "".join(out), text[i + 1 :]
        if char == "\n":
            break
        if char == "\\" and quote == '"':
            code = text[i + 1 : i + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                i += 2
                continue
            width = {"u": 4, "U": 8}.get(code)
            digits = text[i + 2 : i + 2 + width] if width else ""
            if (
                width
                and len(digits) == width
                and all(c in "0123456789abcdefABCDEF" for c in digits)
            ):
                out.append(chr(int(digits, 16)))
                i += 2 + width
                continue
            raise _Unreadable(f"the escape \\{code} is not understood")
        out.append(char)
        i += 1
    raise _Unreadable("a string is not closed on its line")


def _skip_space(text: str) -> str:
    """Skip white space, line ends and comments inside an array."""
    while True:
        text = text.lstrip()
        if text.startswith("#"):
            end = text.find("\n")
            if end < 0:
                return ""
            text = text[end + 1 :]
            continue
        return text


def _array(text: str) -> tuple[list[object], str]:
    items: list[object] = []
    while True:
        text = _skip_space(text)
        if text.startswith("]"):
            return items, text[1:]
        if not text:
            raise _Unclosed("an array is not closed")
        item, text = _value(text)
        items.append(item)
        text = _skip_space(text)
        if text.startswith(","):
            text = text[1:]
        elif not text:
            raise _Unclosed("an array is not closed")
        elif not text.startswith("]"):
            raise _Unreadable("array items must be separated by commas")


def _inline_table(text: str) -> tuple[dict[str, object], str]:
    table: dict[str, object] = {}
    text = text.lstrip(" \t")
    if text.startswith("}"):
        return table, text[1:]
    while True:
        key_text, equals, rest = _partition_key(text)
        if not equals:
            raise _Unreadable("an inline table needs 'key = value' items")
        keys = _split_key(key_text, "", 0)
        value, text = _value(rest.strip())
        target = table
        for part in keys[:-1]:
            inner = target.setdefault(part, {})
            if not isinstance(inner, dict):
                raise _Unreadable(f"{part!r} is not a table")
            target = inner
        if keys[-1] in target:
            raise _Unreadable(f"key {keys[-1]!r} is defined twice")
        target[keys[-1]] = value
        text = text.lstrip(" \t")
        if text.startswith("}"):
            return table, text[1:]
        if not text.startswith(","):
            raise _Unreadable("inline table items must be separated by commas")
        text = text[1:].lstrip(" \t")
