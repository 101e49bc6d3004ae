"""The ``flagtree_run`` fixture: a function or code run in a fresh interpreter.

:class:`Runner` starts ``sys.executable`` with the caller's ``sys.path``,
working directory and environment, plus ``FLAGTREE_BACKEND`` for the
backend asked for; what the child loaded counts in the session's report.

PYTEST_DONT_REWRITE: no ``assert`` here for pytest to rewrite.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, Callable, Optional, Union

import pytest

from .._config import parse_stack
from ._report import RECORDER

__all__ = ["Backend", "ChildError", "Runner", "flagtree_run"]


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

        from .._child import BOOTSTRAP

        child_env = dict(os.environ)
        if backend is not _SESSION:
            child_env["FLAGTREE_BACKEND"] = _backend_value(backend)
        child_env.update(env or {})
        value = child_env.get("FLAGTREE_BACKEND", "").strip()
        shown = f"FLAGTREE_BACKEND={value}" if value else "FLAGTREE_BACKEND unset"
        recorder = (
            self._config.pluginmanager.get_plugin(RECORDER) if self._config is not None else None
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
