"""The public surface: names, exceptions, docstrings."""

from __future__ import annotations

import inspect

from conftest import scenario

import flagtree_spec
from flagtree_spec import SpecConfigError, SpecError, SpecImportError


def test_all_lists_every_public_name_and_each_exists():
    # In a fresh interpreter: in this one the pytest plugin has imported the package
    # (pytest rewrites the asserts of plugin packages, which adds names to it).
    public = scenario(
        """
        import json, flagtree_spec
        print(json.dumps(sorted(n for n in dir(flagtree_spec) if not n.startswith("_"))))
        """
    )
    assert set(public) == set(flagtree_spec.__all__) - {"__version__"}


def test_every_error_is_a_spec_error_reported_from_the_package():
    for cls in (SpecError, SpecConfigError, SpecImportError):
        assert issubclass(cls, SpecError)
        assert cls.__module__ == "flagtree_spec"


def test_public_callables_have_docstrings():
    for name in flagtree_spec.__all__:
        obj = getattr(flagtree_spec, name)
        if callable(obj):
            assert inspect.getdoc(obj), name


def test_spec_path_docstring_opens_with_the_idiom():
    doc = inspect.getdoc(flagtree_spec.spec_path)
    assert "spec_path(__path__)" in doc.split("\n\n")[2]
