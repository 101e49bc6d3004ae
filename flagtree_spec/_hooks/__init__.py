"""The package under which hook modules outside their root package are imported.

A backend's hook module that does not live inside its root package gets a
private, stable name here, ``flagtree_spec._hooks.<backend>_<digest>``, the
digest naming its file.  Importing it goes through the import system (so it
runs exactly once) via :class:`HookFinder`, installed on ``sys.meta_path``
when this package is first imported.  Because the name is stable, a child
process that unpickles an object defined in a hook module imports the same
file again, once its root package has been imported there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_file_location
from types import ModuleType
from typing import Optional

__all__ = ["HookFinder"]

__path__: list[str] = []  # type: ignore[no-redef]


class HookFinder:
    """Meta path finder for ``flagtree_spec._hooks.<name>``."""

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[ModuleSpec]:
        prefix, _, tail = fullname.rpartition(".")
        if prefix != __name__ or not tail:
            return None
        from .._state import private_hook_root

        root = private_hook_root(fullname)
        if root is None and path is None:
            return None  # a probe (find_spec called by hand): nothing here
        if root is None:
            # An import (the import system passes this package's __path__) of a
            # private name no state knows: typically unpickling, in a child process,
            # an object defined in a hook module, where the child's state lacks it.
            backend = tail.rpartition("_")[0] or tail
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: it is the hook module of backend {backend!r} "
                "(or of a spec root), and the state of no root package imported in this "
                "process includes it (typically an object of a hook module unpickled in a child "
                "process). Import the root package before unpickling; activate() does not "
                "reach child processes: set FLAGTREE_BACKEND (or FLAGTREE_SPEC_PATH) in their "
                "environment, or call activate() in the child (a Pool initializer)",
                name=fullname,
            )
        if root.hooks is None:
            return None
        locations = [os.path.dirname(root.hooks)] if root.hooks_package else None
        return spec_from_file_location(fullname, root.hooks, submodule_search_locations=locations)


if HookFinder not in sys.meta_path:
    sys.meta_path.append(HookFinder)
