"""Hook module of the example Triton backend (a spec root on ``FLAGTREE_SPEC_PATH``).

It adds the primitives of :mod:`.primitives` (``tl.fused_axpy(a, x, y) ==
a * x + y``) to the unmodified ``triton.language``.  The library imports
this module lazily, at the first ``spec()`` call; the backend's override of
``triton/language/__init__.py`` makes that call, ``spec("init_language",
language)``, because an unmodified Triton trunk calls no hooks itself.
"""

from types import ModuleType

from flagtree_spec import bind_symbols

from . import primitives


def init_language(language: ModuleType) -> None:
    """Hook: bind ``primitives.__all__`` into *language* (``triton.language``) and its ``__all__``.

    A name the trunk defines already is kept (``overwrite=False``): if Triton
    ever gains its own ``fused_axpy``, the trunk's wins.
    """
    bind_symbols(primitives, language)
