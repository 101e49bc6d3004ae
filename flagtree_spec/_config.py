"""Configuration input: backend names and stacks, markers, declarations, switches.

Everything here reads *input* (environment variables, small files) and
validates it strictly; nothing here imports or executes user code.  The
runtime and the static model share these readers, so both agree on what a
configuration means.
"""

from __future__ import annotations

import os
import stat
from typing import Final, NamedTuple, Optional

from ._errors import SpecConfigError

__all__ = [
    "DECLARATION",
    "FLAGTREE_SPEC_FILES",
    "MARKER_FILE",
    "MARKER_MODULE",
    "Declaration",
    "Marker",
    "computes_marker",
    "env_flag",
    "parse_module_names",
    "parse_stack",
    "quote",
    "read_declaration",
    "read_marker",
]

MARKER_FILE: Final = "FLAGTREE_BACKEND"
# FlagTree's own spec file, newest name first.
FLAGTREE_SPEC_FILES: Final = ("_flagtree_spec.py", "flagtree_spec.py")
MARKER_MODULE: Final = "_flagtree_backend.py"
DECLARATION: Final = "flagtree_spec.json"

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _LETTERS | frozenset("0123456789-")
_IDENT_CHARS = _LETTERS | frozenset("0123456789")
_MAX_NAME: Final = 64
# The most backends a stack may name (FLAGTREE_BACKEND, activate(), a marker).
MAX_STACK: Final = 64
# The most names FLAGTREE_SPEC_DISABLE and FLAGTREE_SPEC_AUTO (or run's --root) may hold.
MAX_NAMES: Final = 64
_MAX_MARKER: Final = 4096
_MAX_DECLARATION: Final = 65536
_NAME_RULE: Final = "letters, digits, '_' and '-' only, starting with a letter or '_', at most 64"


def quote(value: str, limit: int = 120) -> str:
    """Quote *value* for an error message, shortening very long values."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


def parse_stack(value: str, what: str) -> tuple[str, ...]:
    """Parse a backend stack such as ``"a, b"`` into ``("a", "b")``.

    *what* names where the value came from (``FLAGTREE_BACKEND``, a marker
    file) and starts every error message.  An empty or blank value and the
    single word ``none`` mean "no backend" and give ``()``.
    """
    text = value.strip()
    if not text or text == "none":
        return ()
    count = text.count(",") + 1
    if count > MAX_STACK:
        raise SpecConfigError(
            f"{what}={quote(value)} names {count} backends; a stack holds at most "
            f"{MAX_STACK} (a backend's own base backends are declared in its "
            "flagtree_spec.json, not listed here)"
        )
    names: list[str] = []
    seen: set[str] = set()
    for raw in text.split(","):
        name = raw.strip()
        if not name:
            raise SpecConfigError(
                f"{what}={quote(value)} has an empty element; "
                "separate backend names with single commas, like 'a,b'"
            )
        if name == "none":
            raise SpecConfigError(
                f"{what}={quote(value)}: 'none' means no backend and cannot be part of a stack"
            )
        if not _is_name(name):
            raise SpecConfigError(
                f"{what}={quote(value)}: {quote(name)} is not a backend name ({_NAME_RULE})"
            )
        if name in seen:
            raise SpecConfigError(
                f"{what}={quote(value)} names backend {name!r} twice; name each backend once"
            )
        seen.add(name)
        names.append(name)
    return tuple(names)


def check_backend_name(name: object, what: str) -> str:
    """Return *name* if it is a valid single backend name, else raise."""
    if not isinstance(name, str) or name == "none" or not _is_name(name):
        shown = quote(name) if isinstance(name, str) else repr(name)
        raise SpecConfigError(f"{what}: {shown} is not a backend name ({_NAME_RULE})")
    return name


def parse_module_names(value: str, what: str, limit: Optional[int] = None) -> tuple[str, ...]:
    """Parse a comma-separated list of dotted module names (blank elements are skipped).

    With *limit*, a value of more elements is refused before it is split (a
    ``FLAGTREE_SPEC_DISABLE`` or ``FLAGTREE_SPEC_AUTO`` of thousands of names would
    slow every import or start-up down).
    """
    if limit is not None:
        count = value.count(",") + 1
        if count > limit:
            raise SpecConfigError(
                f"{what}={quote(value)} names {count} modules; it holds at most {limit} "
                "(a package name covers everything below it)"
            )
    names = []
    for raw in value.split(","):
        name = raw.strip()
        if not name:
            continue
        if not is_module_name(name):
            raise SpecConfigError(
                f"{what}={quote(value)}: {quote(name)} is not a dotted module name "
                "(like 'triton.runtime.jit')"
            )
        names.append(name)
    return tuple(names)


def is_module_name(name: str) -> bool:
    """Return whether *name* is a dotted module name such as ``runtime.jit``."""
    for part in name.split("."):
        if not part or part[0] not in _LETTERS or not _IDENT_CHARS.issuperset(part):
            return False
    return True


def is_backend_name(name: str) -> bool:
    """Return whether *name* is a valid backend name (not a stack, not ``none``)."""
    return name != "none" and _is_name(name)


def _is_name(name: str) -> bool:
    """The full match of ``[A-Za-z_][A-Za-z0-9_-]*``, at most 64 characters (ASCII only)."""
    return 0 < len(name) <= _MAX_NAME and name[0] in _LETTERS and _NAME_CHARS.issuperset(name)


def env_flag(name: str) -> bool:
    """Read an on/off environment switch: unset, ``""`` or ``"0"`` is off, ``"1"`` is on."""
    value = os.environ.get(name, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise SpecConfigError(f"{name}={quote(value)} is not a switch; set it to '1' or '0'")


class Marker(NamedTuple):
    """A build-time backend marker found in a root package's folder."""

    stack: tuple[str, ...]
    path: str


def _read_limited(path: str, limit: int, what: str) -> Optional[bytes]:
    """Read at most *limit* bytes of *path*; ``None`` when it does not exist."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(mode):
            # Opening a FIFO blocks until a writer comes, and a device may never end.
            raise SpecConfigError(
                f"{what} {path!r} is not a regular file (a FIFO or a device?); it must be a file"
            )
        fd = open_regular(path)
        if fd is None:  # replaced by something else since the stat
            raise SpecConfigError(
                f"{what} {path!r} is not a regular file (a FIFO or a device?); it must be a file"
            )
        with open(fd, "rb") as f:
            data = f.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        # NotADirectoryError: a folder of the path is a file, such as the zip archive
        # a zipped package is imported from; a path inside an archive has no file.
        return None
    except IsADirectoryError:
        raise SpecConfigError(f"{what} {path!r} is a directory; it must be a file") from None
    except OSError as exc:
        raise SpecConfigError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise SpecConfigError(
            f"{what} {path!r} is larger than {limit} bytes; is it the right file?"
        )
    return data


def open_regular(path: str) -> Optional[int]:
    """Open *path* for reading without ever blocking; ``None`` when it is no regular file.

    ``O_NONBLOCK`` makes opening a FIFO return at once (a plain ``open()`` waits
    for a writer, for ever); the file is then checked on its descriptor, so a
    file swapped for a FIFO after a ``stat`` is caught too.  OSErrors propagate.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        return None
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def read_marker(rdir: str) -> Optional[Marker]:
    """Read the build-time backend marker of the root package folder *rdir*.

    Two shapes, as FlagTree's build writes them:

    * a text file ``FLAGTREE_BACKEND`` (at most 4 KiB of strict UTF-8,
      stripped; empty means no backend);
    * a module ``_flagtree_backend.py``, read with :mod:`ast` and never
      executed.  A module holding only ``FLAGTREE_BACKEND = "literal"``
      (annotated or not, after an optional docstring) is a marker.  A module
      whose single top-level ``FLAGTREE_BACKEND = ...`` *computes* the value
      (FlagTree's own reads the text file beside it) is no marker by itself:
      the text file, when present, is; without it there is no marker (a
      debug line says so).

    When the text file and a literal module both exist they must agree.
    Returns ``None`` when there is no marker.  Raises
    :class:`SpecConfigError` for a marker that cannot be read: a text file
    that is not a backend stack, a module that is neither shape (several
    assignments, a literal among other code, a literal of the wrong type).
    Whether that error stops an import is the caller's decision.
    """
    found: list[Marker] = []
    path = os.path.join(rdir, MARKER_FILE)
    data = _read_limited(path, _MAX_MARKER, "backend marker")
    if data is not None:
        try:
            text = data.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise SpecConfigError(
                f"backend marker {path!r} is not UTF-8 text; it must hold one backend name"
            ) from None
        found.append(Marker(parse_stack(text, f"backend marker {path}"), path))
    path = os.path.join(rdir, MARKER_MODULE)
    data = _read_limited(path, _MAX_DECLARATION, "backend marker")
    if data is not None:
        value = _marker_module_value(data, path)
        if value is not None:
            found.append(Marker(parse_stack(value, f"{path}"), path))
        elif not found:
            from ._log import logger

            logger.debug(
                "%s computes FLAGTREE_BACKEND and there is no %s file beside it: no build marker",
                path,
                MARKER_FILE,
            )
    if len(found) == 2 and found[0].stack != found[1].stack:
        raise SpecConfigError(
            f"backend markers disagree: {found[0].path} names {','.join(found[0].stack) or 'none'}"
            f" but {found[1].path} names {','.join(found[1].stack) or 'none'}; keep one"
        )
    return found[0] if found else None


def computes_marker(rdir: str) -> bool:
    """Whether ``<rdir>/_flagtree_backend.py`` is FlagTree's module, which computes its
    ``FLAGTREE_BACKEND`` (a literal marker, a malformed or missing module: no)."""
    path = os.path.join(rdir, MARKER_MODULE)
    try:
        data = _read_limited(path, _MAX_DECLARATION, "backend marker")
        return data is not None and _marker_module_value(data, path) is None
    except SpecConfigError:
        return False


def _marker_module_value(data: bytes, path: str) -> Optional[str]:
    """The literal of a marker module, or ``None`` when the module computes the value."""
    import ast

    rule = (
        f'{path} must hold exactly one top-level FLAGTREE_BACKEND = "name" and nothing else, '
        "or compute the value in one top-level FLAGTREE_BACKEND = ... (FlagTree's own module, "
        f"then the {MARKER_FILE} file beside it is the marker)"
    )
    try:
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError) as exc:
        raise SpecConfigError(f"{rule}; it does not parse: {exc}") from None
    except (MemoryError, RecursionError):  # nesting too deep for the parser
        raise SpecConfigError(f"{rule}; it is too deeply nested to parse") from None
    body = list(tree.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # a module docstring is allowed
    bindings = [node for node in body if _binds_marker(node)]
    if len(bindings) == 1:
        node = bindings[0]
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        single = isinstance(node, ast.AnnAssign) or (
            isinstance(node, ast.Assign) and len(node.targets) == 1
        )
        if value is not None and single:
            if isinstance(value, ast.Constant):
                if isinstance(value.value, str) and len(body) == 1:
                    return value.value
                if not isinstance(value.value, str):
                    raise SpecConfigError(
                        f"{rule}; its FLAGTREE_BACKEND is {value.value!r}, not a string "
                        "(it is read, never executed)"
                    )
            else:
                return None  # computed: only running the module would tell
    if len(bindings) > 1:
        raise SpecConfigError(
            f"{rule}; it assigns FLAGTREE_BACKEND {len(bindings)} times (it is read, never "
            "executed)"
        )
    raise SpecConfigError(f"{rule} (it is read, never executed)")


def _binds_marker(node: object) -> bool:
    """Whether the top-level statement *node* binds the name ``FLAGTREE_BACKEND``."""
    import ast

    assert isinstance(node, ast.stmt)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == "FLAGTREE_BACKEND"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.partition(".")[0]) == "FLAGTREE_BACKEND" for a in node.names)
    # Any other statement binds it when a name it stores is FLAGTREE_BACKEND (an assignment,
    # a for or with target, a walrus); function and class bodies are their own scopes.
    pending: list[ast.AST] = [node]
    while pending:
        item = pending.pop()
        if (
            isinstance(item, ast.Name)
            and item.id == "FLAGTREE_BACKEND"
            and isinstance(item.ctx, ast.Store)
        ):
            return True
        scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        if isinstance(item, scopes) and item is not node:
            continue
        pending.extend(ast.iter_child_nodes(item))
    return False


class Declaration(NamedTuple):
    """A spec root's ``flagtree_spec.json``.

    ``mirror`` and ``hooks`` are relative paths, ``None`` for "none", or
    absent from ``given`` when the declaration leaves the default.
    """

    path: str
    given: frozenset[str]
    mirror: Optional[str]
    hooks: Optional[str]
    base: tuple[str, ...]
    exclude: tuple[str, ...]


_DECLARATION_KEYS: Final = ("mirror", "hooks", "base", "exclude")


def read_declaration(spec_root: str) -> Optional[Declaration]:
    """Read ``<spec_root>/flagtree_spec.json``; ``None`` when there is none."""
    path = os.path.join(spec_root, DECLARATION)
    data = _read_limited(path, _MAX_DECLARATION, "backend declaration")
    if data is None:
        return None
    import json  # only now: importing it costs milliseconds at start-up

    def bad(why: str) -> SpecConfigError:
        return SpecConfigError(f"backend declaration {path}: {why}")

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        result: dict[str, object] = {}
        for key, value in items:
            if key in result:
                raise bad(f"key {key!r} appears twice")
            result[key] = value
        return result

    def constant(name: str) -> object:
        raise bad(f"{name} is not strict JSON")

    try:
        raw = json.loads(
            data.decode("utf-8", errors="strict"),
            object_pairs_hook=pairs,
            parse_constant=constant,
        )
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    except ValueError as exc:
        raise bad(f"not valid JSON ({exc})") from None
    except (RecursionError, MemoryError):
        raise bad(
            'nested too deeply to read; a declaration is a flat object like {"mirror": "triton"}'
        ) from None
    if not isinstance(raw, dict):
        raise bad('the top level must be an object like {"mirror": "triton"}')
    unknown = sorted(set(raw) - set(_DECLARATION_KEYS))
    if unknown:
        raise bad(f"unknown key {unknown[0]!r}; the keys are {', '.join(_DECLARATION_KEYS)}")

    def relative(key: str) -> Optional[str]:
        value = raw.get(key)
        if value is None:
            return None
        if key == "mirror" and value == "":
            return os.curdir  # the spec root itself: a flat mirror tree
        if not isinstance(value, str) or not value.strip():
            raise bad(f"{key!r} must be a relative path or null, not {value!r}")
        norm = os.path.normpath(value)
        if os.path.isabs(value) or norm == ".." or norm.startswith(".." + os.sep):
            raise bad(f"{key!r}={value!r} must stay inside the spec root (a relative path)")
        return norm

    def strings(key: str) -> list[str]:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(f"{key!r} must be a list of strings, not {value!r}")
        return list(value)

    base = tuple(
        check_backend_name(b, f"backend declaration {path}: 'base'") for b in strings("base")
    )
    if len(set(base)) != len(base):
        raise bad(f"'base' names a backend twice: {list(base)}")
    exclude = strings("exclude")
    for name in exclude:
        if not is_module_name(name):
            raise bad(
                f"'exclude' entry {name!r} is not a dotted module name relative to the root package"
            )
    return Declaration(
        path=path,
        given=frozenset(raw),
        mirror=relative("mirror"),
        hooks=relative("hooks"),
        base=base,
        exclude=tuple(exclude),
    )
