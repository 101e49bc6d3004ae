"""A tiny stand-in for a compiler's trunk package."""

from flagtree_spec import spec_path

spec_path(__path__)
