"""The plugin's options and its session: the backend stack a session runs under.

``--flagtree-backend`` (or the ini option ``flagtree_backend``) is applied in
``pytest_load_initial_conftests``, before any ``conftest.py`` can import a
root package; a root package imported even earlier under another backend,
and a backend that exists nowhere for the root packages the session
imports, are usage errors.  The header names the stack and the spec roots;
``--flagtree-report`` registers the recorder of :mod:`._report`.

PYTEST_DONT_REWRITE: no ``assert`` here for pytest to rewrite.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

from .. import _state
from .._config import is_module_name, parse_stack, quote
from .._discovery import _Finder
from .._errors import SpecError, SpecWarning
from .._missing import backend_exists, hush, nowhere_message
from ._report import RECORDER, Recorder
from ._settings import SETTINGS, Settings

__all__ = [
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_load_initial_conftests",
    "pytest_report_header",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flagtree_spec", "flagtree_spec backends")
    group.addoption(
        "--flagtree-backend",
        metavar="B",
        default=None,
        help="run the session under backend stack B ('a,b'; 'none' for no backend), as if "
        "FLAGTREE_BACKEND=B were set, child processes included",
    )
    group.addoption(
        "--flagtree-root",
        metavar="R",
        default=None,
        help="root packages (R or R,S) whose spec roots the header and the report show even "
        "before (or without) their import",
    )
    group.addoption(
        "--flagtree-report",
        metavar="json:PATH",
        nargs="?",
        const="term",
        action="append",
        default=None,
        help="at the end, list which overrides and added modules were loaded and which never "
        "were; =json:PATH writes it as JSON (repeatable)",
    )
    parser.addini(
        "flagtree_backend",
        "backend stack for the session (--flagtree-backend and FLAGTREE_BACKEND win over it)",
        default="",
    )
    parser.addini("flagtree_root", "root packages for the header and the report", default="")


def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(f"flagtree_spec: {message}")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Select the backend before any conftest (or coverage) can import a root package."""
    options = early_config.known_args_namespace
    settings = Settings()
    early_config.stash[SETTINGS] = settings
    given = getattr(options, "flagtree_backend", None)
    ini = str(early_config.getini("flagtree_backend") or "").strip()
    env = os.environ.get("FLAGTREE_BACKEND", "")
    if given is not None:
        settings.backend, settings.source = given, "--flagtree-backend"
    elif env.strip():
        settings.backend, settings.source = env, "FLAGTREE_BACKEND"
    elif ini:
        where = early_config.inipath.name if early_config.inipath else "the ini file"
        settings.backend, settings.source = ini, f"flagtree_backend in {where}"
    roots = getattr(options, "flagtree_root", None) or early_config.getini("flagtree_root")
    settings.roots = _root_names(str(roots or ""))
    settings.reports = _report_targets(getattr(options, "flagtree_report", None) or [])
    if settings.source == "FLAGTREE_BACKEND":
        # Not the plugin's to judge: the runtime reports a bad value where it is used.
        try:
            settings.stack = parse_stack(settings.backend, settings.source)
        except SpecError:
            settings.source = ""
    elif settings.source:
        try:
            settings.stack = parse_stack(settings.backend, settings.source)
        except SpecError as exc:
            raise _usage(str(exc)) from None
        settings.saved = ("FLAGTREE_BACKEND" in os.environ, env)
        os.environ["FLAGTREE_BACKEND"] = ",".join(settings.stack) or "none"
        # A backend of this stack that exists nowhere is the plugin's usage error
        # (_check_exists), said once: the runtime's warning for the same name is not given.
        hush(settings.stack)
        _check_exists(settings, named=False)
        _check_imported(early_config, settings)
    if settings.reports:
        early_config.pluginmanager.register(Recorder(early_config, settings), RECORDER)


def _check_exists(settings: Settings, named: bool = True) -> None:
    """A usage error for a backend of the session's stack that exists nowhere (a typo).

    Judged against the root packages known so far (those already resolved, and
    with *named* those that ``--flagtree-root`` names), as ``flagtree-spec
    check`` judges ``-b``: a backend exists when one of them has a spec root or
    a folder of it, or when an entry point declares it.  With no root package
    known yet the check waits for one (after the conftest files, after
    collection, at the end of the session), so a misspelt backend never ends in
    a green run.
    """
    if settings.checked or settings.saved is None or not settings.stack:
        return
    finders = []
    roots = set(_state.known_roots())
    for root in sorted(roots | set(settings.roots) if named else roots):
        try:
            finders.append(_Finder(root, _state.root_dir(root), _state.entry_points))
        except SpecError:
            continue  # the header says why the root package cannot be found
    if not finders:
        return
    shown = f"{settings.source}={quote(settings.backend.strip())}"
    for backend in settings.stack:
        try:
            if any(backend_exists(finder, backend) for finder in finders):
                continue
        except SpecError:
            continue  # not a typo: the runtime reports it where the backend is used
        message = nowhere_message(finders[0], backend, shown)
        if len(finders) > 1:
            others = ", ".join(repr(f.root) for f in finders[1:])
            message += f" Nor does it exist for the other root packages ({others})."
        raise _usage(message)
    settings.checked = True


def pytest_sessionstart(session: pytest.Session) -> None:
    # The conftest files are loaded: the root packages they imported are known.
    settings = session.config.stash.get(SETTINGS, None)
    if settings is not None:
        _check_exists(settings)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # Before any test runs: the root packages that the test modules imported are known.
    settings = session.config.stash.get(SETTINGS, None)
    if settings is not None:
        _check_exists(settings)


def pytest_sessionfinish(session: pytest.Session) -> None:
    # No root package was known before the tests ran: judge the ones they imported, so
    # that the session fails rather than passes on trunk.
    settings = session.config.stash.get(SETTINGS, None)
    if settings is None or settings.checked or hasattr(session.config, "workeroutput"):
        return
    try:
        _check_exists(settings)
    except pytest.UsageError as exc:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"ERROR: {exc}", red=True, bold=True)
        else:
            print(f"ERROR: {exc}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.USAGE_ERROR


def _root_names(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.replace("\n", ",").split(",") if n.strip())
    for name in names:
        if "." in name or not is_module_name(name):
            raise _usage(
                f"--flagtree-root/flagtree_root {quote(name)} is not a top-level package name "
                "(like 'triton')"
            )
    return names


def _report_targets(values: Sequence[str]) -> list[str]:
    for value in values:
        if value == "term":
            continue
        kind, colon, path = value.partition(":")
        if kind != "json" or not colon or not path:
            raise _usage(
                f"--flagtree-report={quote(value)}: give no value (a report at the end of the "
                "output) or json:PATH; write it as --flagtree-report=VALUE so that no test path "
                "is taken for it"
            )
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise _usage(f"--flagtree-report={value}: folder {folder!r} does not exist")
    return list(values)


def _check_imported(config: pytest.Config, settings: Settings) -> None:
    """A root package resolved before this point must already be in the requested state."""
    shown = f"{settings.source}={quote(settings.backend.strip())}"
    if _state._override_all is not None or _state._override_root:
        raise _usage(
            f"{shown} cannot apply: activate() was called before pytest loaded the conftest "
            "files, and it wins over the backend of the session; remove that early call"
        )
    for root, state in _state.known_roots().items():
        try:
            fresh = _state._compute(root)
        except SpecError as exc:
            raise _usage(f"{shown}: {exc}") from None
        if fresh.stack == state.stack and [r.real for r in fresh.spec_roots] == [
            r.real for r in state.spec_roots
        ]:
            continue
        raise _usage(
            f"{shown} cannot apply: root package {root!r} was imported before pytest loaded the "
            f"conftest files, under backend stack {','.join(state.stack) or 'none'!r} "
            f"({state.source}); {_importers(root, config)}. Modules already imported cannot "
            "switch backends: import it later (in a conftest or a test), or set "
            f"FLAGTREE_BACKEND={','.join(settings.stack or ()) or 'none'} in the environment "
            "of the pytest command instead"
        )


def _refers_to(value: object, root: str) -> bool:
    try:
        if isinstance(value, ModuleType):
            name: object = value.__name__
        else:
            name = getattr(value, "__module__", None)
    except Exception:  # an object whose attribute access fails tells nothing
        return False
    return isinstance(name, str) and (name == root or name.startswith(root + "."))


def _importers(root: str, config: pytest.Config) -> str:
    """Who imported *root* so early, as well as can be known (error path only)."""
    plugins = {
        id(plugin): name
        for name, plugin in config.pluginmanager.list_name_plugin()
        if isinstance(plugin, ModuleType)
    }
    found = []
    for name, module in list(sys.modules.items()):
        if name == root or name.startswith((root + ".", "flagtree_spec")):
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        if any(_refers_to(v, root) for v in list(namespace.values())):
            where = getattr(module, "__file__", None) or "no file"
            plugin = plugins.get(id(module))
            if plugin is None:
                found.append(f"module {name} ({where})")
            elif plugin == name:
                found.append(f"pytest plugin {plugin!r} ({where})")
            else:
                found.append(f"pytest plugin {plugin!r} (module {name}, {where})")
    auto = sys.modules.get("flagtree_spec._auto")
    if root in getattr(auto, "_roots", ()) and os.environ.get("FLAGTREE_SPEC_AUTO", "").strip():
        found.append("auto mode from FLAGTREE_SPEC_AUTO (flagtree-spec run or autostart)")
    if found:
        return "it is used by " + "; ".join(found[:5])
    return (
        "no loaded module refers to it, so a start-up file (a .pth file, sitecustomize, "
        "PYTHONSTARTUP) or another pytest plugin imported it; "
        "'python -X importtime -m pytest ...' shows the importer"
    )


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash.get(SETTINGS, None)
    if settings is None or (settings.stack is None and not settings.roots and not settings.reports):
        return []
    lines = []
    if settings.stack is not None:
        stack = ",".join(settings.stack) or "none"
        lines.append(f"flagtree_spec: backend stack {stack} ({settings.source})")
    roots = sorted(set(settings.roots) | set(_state.known_roots()))
    for root in roots:
        try:
            state = _state_for_option(config, root)
        except SpecError as exc:
            lines.append(f"flagtree_spec: {root}: {exc}")
            continue
        where = ", ".join(f"{r.path} [{r.backend or r.kind}]" for r in state.spec_roots)
        lines.append(f"flagtree_spec: {root}: spec roots {where or 'none'}")
    if not roots:
        lines.append(
            "flagtree_spec: no root package imported yet (--flagtree-root=R shows its spec roots)"
        )
    return lines


def _state_for_option(config: pytest.Config, root: str) -> _state.RootState:
    """The state of *root*, resolved here because ``--flagtree-root`` names it.

    A warning the runtime gives while resolving it (a backend of
    ``FLAGTREE_BACKEND`` that exists nowhere for this root package) would point
    at the plugin machinery that called; it is given again as the option's, at
    the ini file's line when ``flagtree_root`` came from there.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SpecWarning)
        state = _state.state_of(root)
    option = _option_location(config)
    for warning in caught:
        where, line = (
            option
            if issubclass(warning.category, SpecWarning)
            else (warning.filename, warning.lineno)
        )
        warnings.warn_explicit(warning.message, warning.category, where, line)
    return state


def _option_location(config: pytest.Config) -> tuple[str, int]:
    """Where the root packages were named: ``("--flagtree-root", 0)``, the ini file's line,
    or ``("flagtree_root", 0)`` for an ini value given with ``-o``."""
    if getattr(config.option, "flagtree_root", None) or config.inipath is None:
        return "--flagtree-root", 0
    # pytest has read this file already: it is there and decodes.
    lines = config.inipath.read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines, 1):
        if re.match(r"\s*flagtree_root\s*[=:]", text):
            return str(config.inipath), number
    return "flagtree_root", 0


def pytest_unconfigure(config: pytest.Config) -> None:
    settings = config.stash.get(SETTINGS, None)
    if settings is not None and settings.saved is not None:
        existed, value = settings.saved
        if existed:
            os.environ["FLAGTREE_BACKEND"] = value
        else:
            os.environ.pop("FLAGTREE_BACKEND", None)
        settings.saved = None
