"""Hook module of the example Triton backend (a spec root on ``FLAGTREE_SPEC_PATH``).

It adds one language primitive, ``tl.fused_axpy(a, x, y) == a * x + y``, to
the unmodified ``triton.language``.  The library imports this module lazily,
at the first ``spec()`` call; the backend's override of
``triton/language/__init__.py`` makes that call, ``spec("init_language")``,
because an unmodified Triton trunk calls no hooks itself.

A ``@triton.jit`` helper is a device function: it works in the interpreter
(``TRITON_INTERPRET=1``) and compiled alike.  Triton requires ``tl`` (or
``triton.language.core``) among its globals, hence the import below.
"""

import sys
from types import ModuleType

import triton
import triton.language as tl  # noqa: F401  (a @triton.jit function's globals need tl)

from flagtree_spec import bind_symbols

# What init_language() binds into triton.language (and its __all__).
LANGUAGE = ["fused_axpy"]


@triton.jit
def fused_axpy(a, x, y):
    """``a * x + y`` in one primitive (a backend would lower it to one instruction)."""
    return a * x + y


def init_language(language: ModuleType) -> None:
    """Hook: bind this backend's primitives into *language* (``triton.language``).

    A name the trunk defines already is kept (``overwrite=False``): if Triton
    ever gains its own ``fused_axpy``, the trunk's wins.
    """
    bind_symbols(sys.modules[__name__], language, LANGUAGE)
