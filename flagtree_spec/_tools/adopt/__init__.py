"""``adopt``: FlagTree's own spec file replaced by the forwarder, proven by importing.

* ``proof``: the scratch copies, the two sides imported and compared;
* ``probe``: what runs in each fresh interpreter (standard library only).
"""

from .proof import Comparison, Difference, compare, imported_names

__all__ = ["Comparison", "Difference", "compare", "imported_names"]
