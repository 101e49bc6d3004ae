"""Start-up module of the Python processes started under ``flagtree-spec run``.

``flagtree-spec run`` puts this folder first on ``PYTHONPATH`` and sets
``FLAGTREE_SPEC_AUTO`` (and ``FLAGTREE_BACKEND`` for ``-b``), so every child
Python process (``subprocess`` running Python, ``multiprocessing`` with
spawn or forkserver) imports this module at start-up.  It takes its folder
off ``sys.path``, starts auto mode from the environment, then runs the
environment's own ``sitecustomize`` (which this module shadows), if any.

Any Python may read ``PYTHONPATH``: this file is written in the language that
Python 2.7 and every Python 3 parse, and on an interpreter the library does
not support (before 3.9) it only runs the environment's own
``sitecustomize``, quietly.
"""

# Python 2.7 must parse this file: no f-strings, no annotations (mypy reads the type
# comments), version checks that ruff, which assumes Python 3.9, calls outdated.
# ruff: noqa: UP031, UP036

import os
import sys


def _start():
    # type: () -> None
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    if sys.version_info >= (3, 9):
        _start_auto_mode(os.path.dirname(os.path.dirname(here)))
    _chain()


def _start_auto_mode(library):
    # type: (str) -> None
    try:
        try:
            import flagtree_spec._auto as auto
        except ImportError:
            # Not installed in this interpreter (a vendored copy): import it from where it is.
            sys.path.insert(0, library)
            try:
                import flagtree_spec._auto as auto
            finally:
                sys.path.remove(library)
        auto.start_from_environment()
    except Exception as exc:  # never stop a Python process from starting
        sys.stderr.write(
            "flagtree-spec: auto mode not started: %s: %s\n" % (type(exc).__name__, exc)
        )


def _chain():
    # type: () -> None
    """Run the environment's own ``sitecustomize``, found on ``sys.path`` without this folder."""
    if sys.version_info < (3, 5):
        import imp  # Python 2.7 and 3.4: importlib.util.module_from_spec came in 3.5

        try:
            found = imp.find_module(__name__)
        except ImportError:
            return
        try:
            imp.load_module(__name__, *found)
        finally:
            if found[0] is not None:
                found[0].close()
        return
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    spec = PathFinder.find_spec(__name__)  # sys.path no longer holds this folder
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


_start()
