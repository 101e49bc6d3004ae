"""Package-init override of ``triton.language``: the trunk's, then ``init_language``.

An unmodified Triton calls no hooks, so this override plays the part a
FlagTree trunk plays: it runs the trunk ``triton/language/__init__.py`` in
this namespace (``inherit``), then calls the backend's ``init_language``
hook with the finished module.  Everything else stays the trunk's.
"""

import sys

from flagtree_spec import inherit, spec

inherit(globals())
spec("init_language", sys.modules[__name__])
