"""Override of ``triton.runtime.cache``: the compilation cache key names this backend.

Triton keys every compiled kernel on ``triton_key()``, a digest of the
trunk's compiler files, of ``libtriton`` and of the kernel's own ``@jit``
source.  Nothing there changes when this backend's files change, so a kernel
compiled before an override was edited would be served from the cache
afterwards.  ``fingerprint("triton")`` digests the active backend stack and
every file of its spec roots; adding it to ``triton_key()`` gives every edit
of a spec file a new key.

``inherit`` runs the trunk module in this namespace; ``__file__`` stays the
trunk's file, which the trunk ``triton_key()`` reads and whose folder it
walks, so the trunk function is called unchanged and only its result is
extended.
"""

import functools

from flagtree_spec import fingerprint, inherit

inherit(globals())

_trunk_triton_key = triton_key  # noqa: F821  (defined by the trunk module above)


@functools.lru_cache
def triton_key():
    """The trunk's key, then ``-spec-`` and the backend's fingerprint."""
    return f"{_trunk_triton_key()}-spec-{fingerprint('triton')}"
