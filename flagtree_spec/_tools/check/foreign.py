"""What the trunk's own ``spec_path`` does, for the advice of FTS001 and FTS002.

A trunk may hold FlagTree's own spec file, whose ``spec_path`` is not this
library's (see :mod:`..model.flagtree`): then adding ``spec_path(__path__)`` to
a package-init override does not keep the trunk's folders, and the import a
package init uses is FlagTree's.  The rules word their advice after it.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Optional

from ..model.flagtree import SpecFile, spec_file
from ..model.model import Model

if TYPE_CHECKING:
    from ..model.overrides import MirrorFile

__all__ = [
    "foreign_does",
    "foreign_fix",
    "spec_path_import",
    "trunk_foreign_spec_path",
    "trunk_spec_file",
]

_spec_files: weakref.WeakKeyDictionary[Model, Optional[SpecFile]] = weakref.WeakKeyDictionary()


def trunk_spec_file(model: Model) -> Optional[SpecFile]:
    """The trunk's FlagTree spec file (its own or the forwarder), read once per model."""
    if model not in _spec_files:
        _spec_files[model] = spec_file(model.rdir, model.root)
    return _spec_files[model]


def spec_path_import(model: Model) -> str:
    """The import of ``spec_path`` the trunk's package inits use: FlagTree's spec file
    where the trunk has one (its own, or the forwarder), else this library."""
    found = trunk_spec_file(model)
    if found is not None and found.kind != "other":
        return f"from {model.root}.{os.path.basename(found.path)[:-3]} import spec_path"
    return "from flagtree_spec import spec_path"


def trunk_foreign_spec_path(mf: MirrorFile) -> Optional[str]:
    """The trunk's own ``spec_path`` that the lower ``__init__`` of package-init
    override *mf* calls (the next lower version, else the trunk's), if any."""
    inits = [mf.lower] if mf.lower else []
    inits += [os.path.join(t, "__init__.py") for t in mf.module.trunk]
    for init in inits:
        if init and os.path.isfile(init):
            return mf.model.foreign_spec_path(init, mf.module.name)
    return None


def foreign_does(model: Model, foreign: str) -> str:
    """What a trunk's own ``spec_path`` (defined in *foreign*) does, for FTS002."""
    found = trunk_spec_file(model)
    if found is not None and found.kind == "flagtree" and os.path.samefile(found.path, foreign):
        return (
            f"{found.describe(model.root)}; it never adds a package's trunk folders to the "
            "path of a package whose __init__ comes from a mirror"
        )
    return (
        "it is not flagtree_spec's, and nothing says it puts a package's trunk folders on "
        "the path of a package whose __init__ comes from a mirror"
    )


def foreign_fix(model: Model, foreign: str, calls: bool) -> str:
    """What works for FTS002 where the trunk's ``spec_path`` is *foreign*; *calls* says
    whether the override calls ``spec_path(__path__)`` already."""
    inherit = (
        "'from flagtree_spec import inherit' and 'inherit(globals())' in this override, "
        "which runs the trunk __init__ and keeps its folders on __path__"
    )
    then = (
        "its spec_path(__path__) then keeps them, so 'adopt' shows modules that import with "
        "the forwarder only, and '--keep-on-failure' writes it"
        if calls
        else "then add 'spec_path(__path__)' to this override"
    )
    found = trunk_spec_file(model)
    if found is not None and found.kind == "flagtree":
        return (
            f"Replace {foreign} by the forwarder ('flagtree-spec adopt' does it, proven by "
            f"importing every module both ways), whose spec_path keeps the trunk folders: {then}; "
            f"or, keeping FlagTree's own file, call {inherit} (spec_path(__path__) does not help "
            "there); or delete this __init__.py"
        )
    return (
        f"Replace {foreign} by the few lines that forward to flagtree_spec, whose spec_path "
        f"keeps the trunk folders: {then}; or call {inherit}; or delete this __init__.py"
    )
