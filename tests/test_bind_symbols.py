"""bind_symbols(source, target, names=None, *, overwrite=False, export=True)."""

from __future__ import annotations

import types

import pytest

from flagtree_spec import BindResult, SpecError, bind_symbols


def module(name, **attrs):
    m = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(m, key, value)
    return m


def test_binds_source_all_and_exports():
    source = module("ext", __all__=["fma", "clamp"], fma=1, clamp=2)
    target = module("lang", __all__=["add"], add=0)
    result = bind_symbols(source, target)
    assert result == BindResult("lang", ("fma", "clamp"), ())
    assert (target.fma, target.clamp) == (1, 2)
    assert target.__all__ == ["add", "fma", "clamp"]


def test_existing_names_skipped_unless_overwrite():
    source = module("ext", __all__=["add", "fma"], add="new", fma=1)
    target = module("lang", __all__=["add"], add="old")
    assert bind_symbols(source, target).skipped == ("add",)
    assert target.add == "old"
    assert bind_symbols(source, target, overwrite=True).bound == ("add", "fma")
    assert target.add == "new"
    assert target.__all__ == ["add", "fma"]


def test_explicit_names_and_no_export():
    source = module("ext", a=1, b=2)
    target = module("lang", __all__=("x",))
    bind_symbols(source, target, ["a"], export=False)
    assert target.a == 1 and not hasattr(target, "b") and target.__all__ == ("x",)
    bind_symbols(source, target, ["b"])
    assert target.__all__ == ("x", "b")


def test_target_without_all_gets_none():
    source = module("ext", a=1)
    target = module("lang")
    bind_symbols(source, target, ["a"])
    assert target.a == 1 and not hasattr(target, "__all__")


def test_several_targets():
    source = module("ext", __all__=["a"], a=1)
    t1, t2 = module("one"), module("two", a=0)
    results = bind_symbols(source, [t1, t2])
    assert results == (BindResult("one", ("a",), ()), BindResult("two", (), ("a",)))


def test_no_names_and_no_all_is_error():
    with pytest.raises(SpecError, match="has no __all__; pass names"):
        bind_symbols(module("ext", a=1), module("lang"))


def test_missing_listed_name_is_error_and_nothing_changes():
    source = module("ext", __all__=["a", "ghost", "phantom"], a=1)
    target = module("lang", __all__=[])
    with pytest.raises(SpecError, match="ext has no attribute 'ghost' \\(nor 'phantom'\\)"):
        bind_symbols(source, target)
    assert not hasattr(target, "a") and target.__all__ == []


@pytest.mark.parametrize(
    ("names", "target", "match"),
    [
        ("a", None, "give a list of names"),
        (["not a name"], None, "is not a name"),
        ([3], None, "is not a name"),
        (["a"], "not a module", "is not a module"),
        (["a"], 3, "is not a module"),
    ],
)
def test_bad_arguments_are_errors(names, target, match):
    source = module("ext", a=1)
    with pytest.raises(SpecError, match=match):
        bind_symbols(source, target or module("lang"), names)


def test_target_all_of_wrong_type_is_error_before_binding():
    target = module("lang", __all__={"x"})
    with pytest.raises(SpecError, match="must be a list or a tuple"):
        bind_symbols(module("ext", a=1), target, ["a"])
    assert not hasattr(target, "a")


def test_a_name_listed_twice_is_bound_and_exported_once():
    source = module("ext", __all__=["fma", "fma"], fma=1)
    target = module("lang", __all__=[])
    assert bind_symbols(source, target, overwrite=True) == BindResult("lang", ("fma",), ())
    assert target.__all__ == ["fma"]
    assert bind_symbols(source, module("other")) == BindResult("other", ("fma",), ())
