"""``python -m flagtree_spec``: the ``flagtree-spec`` command."""

import sys

from ._cli import main

sys.exit(main())
