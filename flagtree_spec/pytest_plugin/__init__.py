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

The package is one module per concept: :mod:`._session` (the options and
the session's backend stack), :mod:`._report` (the override report) and
:mod:`._runner` (the ``flagtree_run`` fixture); this module re-exports the
hooks and the fixture, which pytest finds on the module it registers.

PYTEST_DONT_REWRITE: a program may import this module before pytest starts;
it has no ``assert`` for pytest to rewrite, and the marker keeps pytest from
warning that it cannot (a warning ``filterwarnings = error`` makes fatal).
"""

from ._runner import ChildError, Runner, flagtree_run
from ._session import (
    pytest_addoption,
    pytest_collection_finish,
    pytest_load_initial_conftests,
    pytest_report_header,
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_unconfigure,
)

__all__ = [
    "ChildError",
    "Runner",
    "flagtree_run",
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_load_initial_conftests",
    "pytest_report_header",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
]
