"""The language primitives this backend adds to ``triton.language`` (its ``__all__``).

A ``@triton.jit`` function is a device function: it works in the
interpreter (``TRITON_INTERPRET=1``) and compiled alike.  Triton requires
``tl`` (or ``triton.language.core``) among a jit function's globals, hence
the import below.  They live here, not in the hook module, because every
callable of a hook module is a hook.
"""

import triton
import triton.language as tl  # noqa: F401  (a @triton.jit function's globals need tl)

__all__ = ["fused_axpy"]


@triton.jit
def fused_axpy(a, x, y):
    """``a * x + y`` in one primitive (a backend would lower it to one instruction)."""
    return a * x + y
