"""Override of ``triton.language.standard``: ``sigmoid`` becomes a hard sigmoid.

``inherit`` runs the trunk module in this namespace; the one definition
below replaces the trunk's ``sigmoid`` (the function ``tl.sigmoid`` and the
member ``x.sigmoid()``).  Everything else, ``softmax`` included, is the
trunk's code.  A backend whose hardware has no fast ``exp`` would do this.
"""

from flagtree_spec import inherit

inherit(globals())

from ..runtime.jit import jit  # noqa: E402  (the trunk's names, spelled out for readers)
from . import core  # noqa: E402


@core._tensor_member_fn
@jit
def sigmoid(x):
    """Hard sigmoid: ``clamp(x / 6 + 1/2, 0, 1)``, as ``torch.nn.functional.hardsigmoid``."""
    return core.minimum(core.maximum(x / 6.0 + 0.5, 0.0), 1.0)
