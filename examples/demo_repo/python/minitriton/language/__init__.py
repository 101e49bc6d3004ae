from flagtree_spec import spec, spec_path

spec_path(__path__)

from .core import program_id, vector_add  # noqa: E402, F401

# A backend may add primitives here.
spec("init_language", globals())
