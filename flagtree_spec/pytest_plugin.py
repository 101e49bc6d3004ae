"""pytest plugin: run a session under a backend stack, and see which overrides it exercised.

Registered through the ``pytest11`` entry point as ``flagtree_spec``, so it is
active in every pytest run of an environment that has the library (disable it
with ``-p no:flagtree_spec``).  Unused, it costs one option check at start-up:
nothing else runs, and nothing but the runtime is imported.

* ``--flagtree-backend=B`` (or the ini option ``flagtree_backend``) runs the
  session as if ``FLAGTREE_BACKEND=B`` were set, child processes included.
  It is applied in ``pytest_load_initial_conftests`` (first), before any
  ``conftest.py`` can import a root package; a root package imported even
  earlier under another backend is a usage error naming who imported it, and
  so is a backend that exists nowhere for the root packages the session
  imports (a typo: the close matches are named), before any test runs.
* ``--flagtree-report`` prints which overrides and added modules were loaded
  during the session and which never were; ``--flagtree-report=json:PATH``
  writes the same as JSON.  Under pytest-xdist the workers' findings are
  merged.  The static model (the ``flagtree-spec list`` states) is imported
  only then.
* The fixture ``flagtree_run`` runs a function or code in a fresh interpreter
  under a given backend stack and returns its result.

PYTEST_DONT_REWRITE: a program may import this module before pytest starts;
it has no ``assert`` for pytest to rewrite, and the marker keeps pytest from
warning that it cannot (a warning ``filterwarnings = error`` makes fatal).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, Callable, Optional, Union

import pytest

from . import _state
from ._config import is_module_name, parse_stack, quote
from ._discovery import _Finder, backend_exists, nowhere_message
from ._errors import SpecError, SpecWarning

__all__ = ["ChildError", "Runner", "flagtree_run"]


class _Settings:
    """What the session asked for, kept in the config's stash."""

    __slots__ = ("backend", "checked", "reports", "roots", "saved", "source", "stack")

    def __init__(self) -> None:
        self.stack: Optional[tuple[str, ...]] = None  # None: the plugin selects nothing
        self.backend = ""  # the value as given
        self.source = ""  # where it came from
        self.roots: tuple[str, ...] = ()
        self.reports: list[str] = []
        self.saved: Optional[tuple[bool, str]] = None  # FLAGTREE_BACKEND before the session
        self.checked = False  # whether the stack's backends were found to exist


_SETTINGS = pytest.StashKey[_Settings]()
_RECORDER = "flagtree_spec_report"


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
    settings = _Settings()
    early_config.stash[_SETTINGS] = settings
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
        _check_exists(settings, named=False)
        _check_imported(early_config, settings)
    if settings.reports:
        early_config.pluginmanager.register(_Recorder(early_config, settings), _RECORDER)


def _check_exists(settings: _Settings, named: bool = True) -> None:
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
    settings = session.config.stash.get(_SETTINGS, None)
    if settings is not None:
        _check_exists(settings)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # Before any test runs: the root packages that the test modules imported are known.
    settings = session.config.stash.get(_SETTINGS, None)
    if settings is not None:
        _check_exists(settings)


def pytest_sessionfinish(session: pytest.Session) -> None:
    # No root package was known before the tests ran: judge the ones they imported, so
    # that the session fails rather than passes on trunk.
    settings = session.config.stash.get(_SETTINGS, None)
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


def _check_imported(config: pytest.Config, settings: _Settings) -> None:
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
    settings = config.stash.get(_SETTINGS, None)
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
    settings = config.stash.get(_SETTINGS, None)
    if settings is not None and settings.saved is not None:
        existed, value = settings.saved
        if existed:
            os.environ["FLAGTREE_BACKEND"] = value
        else:
            os.environ.pop("FLAGTREE_BACKEND", None)
        settings.saved = None


# --------------------------------------------------------------------------- report


class _Recorder:
    """Registered only with ``--flagtree-report``: records what loaded, reports at the end."""

    def __init__(self, config: pytest.Config, settings: _Settings) -> None:
        self.config = config
        self.settings = settings
        self.roots: set[str] = set(settings.roots)
        self.auto: set[str] = set()
        self.origins: set[str] = set()
        self.inherited: set[str] = set()
        self.report: Optional[dict[str, Any]] = None
        self.log = _ImportLog()
        sys.meta_path.insert(0, self.log)

    def scan(self, full: bool = False) -> None:
        """Record what loaded: the modules imported since the last scan, or all of them.

        After each test only the names :class:`_ImportLog` saw being imported are
        looked at, so a test costs what it imported, not the size of ``sys.modules``;
        a full scan runs at collection end, at session end and when a new root
        package becomes known.
        """
        before = len(self.roots)
        self.roots.update(_state.known_roots())
        auto = sys.modules.get("flagtree_spec._auto")
        self.auto.update(getattr(auto, "_roots", ()))
        self.roots.update(self.auto)
        names = self.log.take()
        if full or len(self.roots) != before:
            origins, inherited = _loaded_files(self.roots)
        else:
            origins, inherited = _loaded_files(self.roots, names)
        self.origins |= origins
        self.inherited |= inherited

    def merge(self, seen: Sequence[Sequence[str]]) -> None:
        """Add what another process (an xdist worker, a ``flagtree_run`` child) loaded."""
        roots, origins, inherited = seen[0], seen[1], seen[2]
        self.roots.update(roots)
        self.origins.update(origins)
        self.inherited.update(inherited)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        self.scan(full=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self) -> None:
        self.scan()  # before the fixtures are torn down (one may restore sys.modules)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any) -> None:
        seen = getattr(node, "workeroutput", {}).get("flagtree_spec")
        if seen is not None:
            self.merge(seen)

    def pytest_sessionfinish(self) -> None:
        self.scan(full=True)
        while self.log in sys.meta_path:
            sys.meta_path.remove(self.log)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports
            workeroutput["flagtree_spec"] = (
                sorted(self.roots),
                sorted(self.origins),
                sorted(self.inherited),
            )
            return
        from ._tools.cli.report import build_report

        self.report = build_report(self.roots, self.auto, self.origins, self.inherited)
        if self.settings.stack is not None:
            for entry in self.report["roots"]:
                if entry.get("source") == "FLAGTREE_BACKEND":
                    entry["source"] = self.settings.source
        for target in self.settings.reports:
            if target.startswith("json:"):
                import json

                path = os.path.join(str(self.config.invocation_params.dir), target[5:])
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(self.report, f, indent=2)
                    f.write("\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None or "term" not in self.settings.reports:
            return
        from ._tools.cli.report import format_report

        terminalreporter.section("flagtree_spec override report")
        for line in format_report(self.report):
            terminalreporter.write_line(line)


class _ImportLog:
    """A meta path finder that finds nothing and notes every name imported (for the report)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        self.names.append(fullname)  # list.append: safe from any thread
        return None

    def invalidate_caches(self) -> None:
        """Nothing is cached (part of the finder protocol)."""

    def take(self) -> list[str]:
        names, self.names = self.names, []
        return names


def _loaded_files(
    roots: Iterable[str], only: Optional[Iterable[str]] = None
) -> tuple[set[str], set[str]]:
    from ._child import loaded_files

    return loaded_files(roots, only)


# --------------------------------------------------------------------------- fixture


class ChildError(Exception):
    """The function or code run by :class:`Runner` failed in the child interpreter.

    ``type_name`` and ``child_message`` describe the child's exception (empty
    when the child died without one), ``child_traceback`` is its formatted
    traceback, ``stderr`` what the child wrote to stderr.
    """

    def __init__(
        self, summary: str, type_name: str, message: str, child_traceback: str, stderr: str
    ) -> None:
        text = summary
        if child_traceback:
            text += f"\n--- traceback in the child interpreter\n{child_traceback.rstrip()}"
        if stderr.strip():
            text += f"\n--- stderr of the child interpreter\n{stderr.rstrip()}"
        super().__init__(text)
        self.type_name = type_name
        self.child_message = message
        self.child_traceback = child_traceback
        self.stderr = stderr


_SESSION: Any = object()
Backend = Union[str, Sequence[str], None]


class Runner:
    """Runs a function or code in a fresh interpreter; the ``flagtree_run`` fixture.

    Each call starts ``sys.executable`` with the caller's ``sys.path`` and
    working directory, and the environment of the session plus
    ``FLAGTREE_BACKEND`` for *backend* (``None`` means no backend; the
    default keeps the session's), plus *env*.  Switching backends inside one
    process is unsafe for packages with compiled parts, so tests that compare
    backends run each side here::

        def test_same_result(flagtree_run):
            trunk = flagtree_run("mypkg.ops:compute", 3, backend=None)
            assert flagtree_run("mypkg.ops:compute", 3, backend="mybackend") == trunk
    """

    def __init__(self, config: Optional[pytest.Config] = None) -> None:
        self._config = config

    def __call__(
        self,
        target: Union[str, Callable[..., Any]],
        /,
        *args: Any,
        backend: Backend = _SESSION,
        env: Optional[dict[str, str]] = None,
        timeout: Optional[float] = None,
        **kwargs: Any,
    ) -> Any:
        """Call *target* (``"module:function"`` or an importable callable) with the arguments.

        Returns what it returns (it must pickle).  Raises :class:`ChildError`,
        with the child's traceback, when it raises or the child dies.
        """
        if isinstance(target, str):
            if ":" not in target:
                raise TypeError(f"flagtree_run({target!r}): name the function as 'module:function'")
            job: tuple[Any, ...] = ("name", target, args, kwargs)
        elif callable(target):
            job = ("object", target, args, kwargs)
        else:
            raise TypeError(
                f"flagtree_run({target!r}): give 'module:function' or an importable function"
            )
        return self._run(job, backend, env, timeout, getattr(target, "__qualname__", target))

    def code(
        self,
        source: str,
        /,
        *,
        backend: Backend = _SESSION,
        env: Optional[dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        """Run *source* as a script; return the value of its last line if that is an expression."""
        if not isinstance(source, str):
            raise TypeError(f"flagtree_run.code() takes source code, not {type(source).__name__}")
        return self._run(("code", source, (), {}), backend, env, timeout, "code")

    def _run(
        self,
        job: tuple[Any, ...],
        backend: Backend,
        env: Optional[dict[str, str]],
        timeout: Optional[float],
        what: object,
    ) -> Any:
        import pickle
        import subprocess
        import tempfile

        from ._child import BOOTSTRAP

        child_env = dict(os.environ)
        if backend is not _SESSION:
            child_env["FLAGTREE_BACKEND"] = _backend_value(backend)
        child_env.update(env or {})
        value = child_env.get("FLAGTREE_BACKEND", "").strip()
        shown = f"FLAGTREE_BACKEND={value}" if value else "FLAGTREE_BACKEND unset"
        recorder = (
            self._config.pluginmanager.get_plugin(_RECORDER) if self._config is not None else None
        )
        with tempfile.TemporaryDirectory(prefix="flagtree_run-") as tmp:
            job_file = os.path.join(tmp, "job.pickle")
            out_file = os.path.join(tmp, "out.pickle")
            with open(job_file, "wb") as f:
                pickle.dump(list(sys.path), f)
                try:
                    pickle.dump((*job, recorder is not None), f)
                except Exception as exc:
                    raise TypeError(
                        f"flagtree_run: {what!r} or its arguments cannot be sent to another "
                        f"interpreter ({exc}); give a module-level function or 'module:function' "
                        "and picklable arguments"
                    ) from exc
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", BOOTSTRAP, job_file, out_file],
                    env=child_env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired as exc:
                raise ChildError(
                    f"{what} did not finish within {timeout} s in a fresh interpreter ({shown})",
                    "",
                    "",
                    "",
                    _text(exc.stderr),
                ) from None
            try:
                with open(out_file, "rb") as f:
                    outcome = pickle.load(f)
            except (OSError, EOFError, pickle.UnpicklingError):
                raise ChildError(
                    f"the fresh interpreter running {what} ({shown}) exited with code "
                    f"{proc.returncode} before reporting a result",
                    "",
                    "",
                    "",
                    proc.stderr,
                ) from None
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if recorder is not None:
            recorder.merge(outcome[-1])
        if outcome[0] == "error":
            _, type_name, message, child_tb, _ = outcome
            raise ChildError(
                f"{what} raised {type_name}: {message} (in a fresh interpreter, {shown})",
                type_name,
                message,
                child_tb,
                proc.stderr,
            )
        try:
            return pickle.loads(outcome[1])
        except Exception as exc:
            raise ChildError(
                f"the result of {what} cannot be unpickled here: {type(exc).__name__}: {exc}",
                type(exc).__name__,
                str(exc),
                "",
                proc.stderr,
            ) from exc


def _text(data: Union[str, bytes, None]) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def _backend_value(backend: Backend) -> str:
    if backend is None:
        return "none"
    if isinstance(backend, str):
        return ",".join(parse_stack(backend, "flagtree_run(backend=...)")) or "none"
    if isinstance(backend, Sequence) and all(isinstance(b, str) for b in backend):
        return ",".join(parse_stack(",".join(backend), "flagtree_run(backend=[...])")) or "none"
    raise TypeError(
        f"flagtree_run(backend={backend!r}): give a backend name, a stack like 'a,b', a list "
        "of names, or None for no backend"
    )


@pytest.fixture
def flagtree_run(request: pytest.FixtureRequest) -> Runner:
    """Run a function or code in a fresh interpreter under a given backend stack.

    ``flagtree_run("pkg.mod:func", *args, backend="b", **kwargs)`` returns
    ``func(*args, **kwargs)`` computed in a new interpreter;
    ``flagtree_run.code("import pkg; pkg.VALUE", backend=None)`` returns the
    value of the code's last line.  See :class:`Runner`.
    """
    return Runner(request.config)
