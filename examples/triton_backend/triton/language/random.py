"""Override of ``triton.language.random``: another uint-to-float conversion.

``inherit`` runs the trunk module in this namespace; the one definition
below replaces ``uint_to_uniform_float``.  The trunk's ``@jit`` functions
``rand``, ``rand4x``, ``randn`` and ``randn4x`` call it by its global name,
so when Triton compiles (or interprets) their unchanged trunk source, they
call this version.  A backend whose hardware converts integers to floats
with 24 bits would do this.
"""

from flagtree_spec import inherit

inherit(globals())

from ..runtime.jit import jit  # noqa: E402  (the trunk's names, spelled out for readers)
from . import core as tl  # noqa: E402


@jit
def uint_to_uniform_float(x):
    """The top 24 bits of a random 32-bit integer as a float in ``[0, 1)``.

    Every result is exact (a multiple of ``2**-24``), where the trunk keeps 31
    bits and folds the sign.
    """
    tl.static_assert(x.dtype.primitive_bitwidth == 32, "32-bit random integers only")
    x = x.to(tl.uint32, bitcast=True)
    return (x >> 8).to(tl.float32) * 5.9604644775390625e-08  # 2**-24
