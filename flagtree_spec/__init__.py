"""Keep a compiler backend's changes to the trunk's Python code in a separate spec tree.

Each trunk package opts in with one line in its ``__init__.py``::

    from flagtree_spec import spec_path
    spec_path(__path__)

and trunk code calls hooks where a backend must add something::

    from flagtree_spec import spec, spec_func
    spec("init_language")

PYTEST_DONT_REWRITE
"""

# The marker above: "flagtree-spec run -m pytest" imports the library before pytest
# starts, too late for pytest to rewrite its asserts; the marker keeps pytest from
# warning about that, which filterwarnings = error would turn into a failed run.

from ._activate import Activation, ActiveState, Root, activate, active, for_root
from ._auto import install, uninstall
from ._bind import BindResult, bind_symbols
from ._calls import spec, spec_func
from ._discovery import SpecRoot
from ._errors import SpecConfigError, SpecError, SpecImportError, SpecWarning
from ._inherit import inherit
from ._path import spec_path
from ._trunk import fingerprint, trunk_path

__version__ = "0.1.0"

__all__ = [
    "Activation",
    "ActiveState",
    "BindResult",
    "Root",
    "SpecConfigError",
    "SpecError",
    "SpecImportError",
    "SpecRoot",
    "SpecWarning",
    "__version__",
    "activate",
    "active",
    "bind_symbols",
    "fingerprint",
    "for_root",
    "inherit",
    "install",
    "spec",
    "spec_func",
    "spec_path",
    "trunk_path",
    "uninstall",
]
