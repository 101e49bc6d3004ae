"""Start-up module of the Python processes started under ``flagtree-spec run``.

``flagtree-spec run`` puts this folder first on ``PYTHONPATH`` and sets
``FLAGTREE_SPEC_AUTO`` (and ``FLAGTREE_BACKEND`` for ``-b``), so every child
Python process (``subprocess`` running Python, ``multiprocessing`` with
spawn or forkserver) imports this module at start-up.  It takes its folder
off ``sys.path``, starts auto mode from the environment, then runs the
environment's own ``sitecustomize`` (which this module shadows), if any.
"""

import os
import sys


def _start() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    library = os.path.dirname(os.path.dirname(here))
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
        sys.stderr.write(f"flagtree-spec: auto mode not started: {type(exc).__name__}: {exc}\n")
    _chain()


def _chain() -> None:
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    spec = PathFinder.find_spec(__name__)  # sys.path no longer holds this folder
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


_start()
