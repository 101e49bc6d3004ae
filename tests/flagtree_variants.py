"""The trees of every variant of FlagTree's own spec file, from ``fixtures/flagtree_variants``.

The fixture holds the parts: ``trunk/triton`` (a trunk of FlagTree's shape whose
package inits call ``spec_path(__path__)`` from the spec file, whose name
:func:`build` writes for ``SPECFILE``, and hooks through ``SPECCALL``),
``own/<variant>.py`` (the spec file in the shape of each variant),
``spectree/hooks`` and ``spectree/mirror`` (one backend's hook package,
gathering a fragment with ``from ._utils import *``, and its overrides), and
``driver`` (a backend driver whose ``spec`` attribute is the backend's spec
package).  :func:`build` lays them out as each variant puts them: an installed
``site-packages/triton`` or a checkout ``python/triton`` beside
``third_party``, with the links FlagTree commits.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NamedTuple, Optional

from flagtree_spec._tools.model.flagtree import FORWARDER

PARTS = Path(__file__).resolve().parent.parent / "fixtures" / "flagtree_variants"


class Layout(NamedTuple):
    """Where one variant puts things, relative to the site folder or the checkout."""

    file: str
    call: str
    checkout: bool
    hooks: str
    mirror: str
    link: Optional[tuple[str, str]] = None
    root_args: str = "__path__"


MT = "mthreads"
VARIANTS = {
    "backends-spec-R": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec/triton",
        f"triton/backends/{MT}/spec/triton",
    ),
    "backends-spec": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec",
        f"triton/backends/{MT}/spec/triton",
    ),
    "driver": Layout(
        "flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec",
        f"triton/backends/{MT}/spec/triton",
    ),
    "checkout-overlay": Layout(
        "flagtree_spec",
        "spec",
        True,
        f"python/triton/backends/{MT}/spec",
        f"third_party/{MT}/python/triton",
        root_args='__path__, ("backends", "_C")',
    ),
    "driver-overlay": Layout(
        "flagtree_spec",
        "spec",
        True,
        f"python/triton/backends/{MT}/spec",
        f"third_party/{MT}/python/triton",
        root_args='__path__, exclude=("backends", "_C")',
    ),
    "spec-B": Layout("flagtree_spec", "spec", False, f"triton/spec/{MT}", f"triton/spec/{MT}"),
    "spec-B-backends-hooks": Layout(
        "flagtree_spec", "spec", False, f"triton/backends/{MT}/spec", f"triton/spec/{MT}"
    ),
    "renamed": Layout(
        "_flagtree_spec",
        "spec",
        False,
        f"triton/backends/{MT}/spec/triton",
        f"triton/backends/{MT}/spec/triton",
    ),
    "spec-call": Layout(
        "_flagtree_spec",
        "spec_call",
        True,
        f"third_party/{MT}/spec/triton",
        f"third_party/{MT}/spec/triton",
        link=(f"python/triton/spec/{MT}", f"../../../third_party/{MT}/spec/triton"),
    ),
    "spec-call-nested": Layout(
        "_flagtree_spec",
        "spec_call",
        True,
        f"third_party/{MT}/spec/triton",
        f"third_party/{MT}/spec/triton",
        link=(f"python/triton/spec/{MT}", f"../../../third_party/{MT}/spec"),
    ),
}
# The hook module each variant's own file imports, which the library must pick too.
HOOK_MODULE = {
    "backends-spec-R": f"triton.backends.{MT}.spec.triton",
    "backends-spec": f"triton.backends.{MT}.spec",
    "driver": f"triton.backends.{MT}.spec",
    "checkout-overlay": f"triton.backends.{MT}.spec",
    "driver-overlay": f"triton.backends.{MT}.spec",
    "spec-B": f"triton.spec.{MT}",
    "spec-B-backends-hooks": f"triton.backends.{MT}.spec",
    "renamed": f"triton.backends.{MT}.spec.triton",
    "spec-call": f"triton.spec.{MT}",
    "spec-call-nested": f"triton.spec.{MT}.triton",
}


def _copy(src: Path, dst: Path, text: dict[str, str]) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        body = path.read_text(encoding="utf-8")
        for key, value in text.items():
            body = body.replace(key, value)
        target.write_text(body, encoding="utf-8")


def build(tmp_path: Path, variant: str, *, forwarder: bool = False) -> tuple[Path, Path]:
    """Lay out *variant* under *tmp_path*; return ``(search folder, trunk folder)``."""
    layout = VARIANTS[variant]
    top = tmp_path / variant
    trunk = top / ("python/triton" if layout.checkout else "triton")
    words = {"SPECFILE": layout.file, "SPECCALL": layout.call}
    _copy(PARTS / "trunk/triton", trunk, {**words, "ROOT_SPEC_PATH_ARGS": layout.root_args})
    (trunk / "FLAGTREE_BACKEND").write_text(f"{MT}\n")
    spec = trunk / f"{layout.file}.py"
    if forwarder:
        spec.write_text(FORWARDER)
    else:
        # The renamed file is the same code as 71461e37's under its new name.
        own = "backends-spec-R" if variant == "renamed" else variant
        shutil.copyfile(PARTS / "own" / f"{own}.py", spec)
    _copy(PARTS / "spectree/hooks", top / layout.hooks, words)
    _copy(PARTS / "spectree/mirror", top / layout.mirror, words)
    if variant in ("driver", "driver-overlay"):
        _copy(PARTS / "driver", trunk / "backends" / MT, words)
    if variant in ("checkout-overlay", "driver-overlay"):
        # The checkout's copy holds stale copies of what the trunk's exclude keeps on trunk.
        copy = top / layout.mirror
        (copy / "backends").mkdir()
        (copy / "backends/__init__.py").write_text('WHERE = "stale copy"\n')
        # Its _C holds only type stubs, as FlagTree's do; _C is a namespace package.
        (copy / "_C/libtriton").mkdir(parents=True)
        (copy / "_C/libtriton/linear_layout.pyi").write_text("def f() -> None: ...\n")
    if layout.link is not None:
        link = top / layout.link[0]
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(layout.link[1], link)
    return (top / "python" if layout.checkout else top), trunk
