"""Reading the trees: files read and decoded as the interpreter does, syntax trees compared.

Nothing here imports or executes what it reads.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections.abc import Iterator
from typing import Optional

from ..model.model import InputError

__all__ = ["COMPILED", "count_lines", "decode", "parse", "read", "same_tree", "under", "walk"]

COMPILED = (".so", ".pyd", ".pyc")


def read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise InputError(
            f"{path} cannot be read ({exc.strerror or exc}); fix its permissions"
        ) from None


def decode(path: str, data: bytes) -> str:
    """The text of Python source *data*, decoded per PEP 263 as the interpreter does."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise InputError(
            f"{path} does not decode ({exc}); fix the bytes or its coding declaration"
        ) from None


def parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def same_tree(a: ast.AST, b: ast.AST) -> bool:
    """Whether two syntax trees are equal, positions aside (``ast.dump`` equality)."""
    pending: list[tuple[object, object]] = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            pending.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            pending.extend(zip(x, y))  # type: ignore[call-overload]
        elif x != y or repr(x) != repr(y):  # 0.0 == -0.0, but they are different constants
            return False
    return True


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def walk(top: str, rel: str = "") -> Iterator[tuple[str, os.DirEntry[str]]]:
    with os.scandir(os.path.join(top, rel) if rel else top) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path = f"{rel}/{entry.name}" if rel else entry.name
        if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
            yield from walk(top, path)
        else:
            yield path, entry
