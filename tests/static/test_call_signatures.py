"""What a call of a ``def`` or ``class`` binds to, as ``migrate --minimize`` judges
calls between kept definitions and those left to trunk (``check/signatures.py``)."""

from __future__ import annotations

import ast
from typing import Optional

import pytest

from flagtree_spec._tools.check.signatures import bind_error, call_shape, callable_signature


def signature(source: str) -> Optional[str]:
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    sig = callable_signature(node)
    return None if sig is None else sig.describe()


@pytest.mark.parametrize(
    ("source", "described"),
    [
        ("def f(a, b=1, *, c): pass", "(a, b=..., *, c)"),
        ("class K:\n    def __init__(self, num, param): pass", "(num, param)"),
        ("class K:\n    def __init__(self, /, x, y=2): pass", "(x, y=...)"),
        ("class K:\n    def __init__(self=None, x=1): pass", "(x=...)"),
        ("class K:\n    def __init__(*args): pass", None),  # self is somewhere in args
        ("class K:\n    x = 1", None),  # no __init__ of its own: its bases decide
        ("@dataclass\nclass K:\n    x: int", None),  # the decorator writes __init__
        ("class K:\n    @wraps(f)\n    def __init__(self, x): pass", None),
    ],
)
def test_a_class_is_called_through_its_own_init_without_self(
    source: str, described: Optional[str]
) -> None:
    assert signature(source) == described


def test_calls_that_unpack_their_arguments_have_no_shape() -> None:
    def shape(text: str) -> Optional[tuple[int, tuple[str, ...]]]:
        call = ast.parse(text).body[0]
        assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
        return call_shape(call.value)

    assert shape("K(0, fn, x=1)") == (2, ("x",))
    assert shape("K(*args)") is None
    assert shape("K(**kwargs)") is None
    node = ast.parse("class K:\n    def __init__(self, num, param): pass").body[0]
    assert isinstance(node, ast.ClassDef)
    sig = callable_signature(node)
    assert sig is not None
    assert bind_error(sig, 3, ()) == "takes 2 positional arguments but 3 were given"
    assert bind_error(sig, 2, ()) is None
