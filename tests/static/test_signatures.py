"""FTS012's argument matching agrees with ``inspect.signature(...).bind`` on generated cases."""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from flagtree_spec._tools.check.signatures import bind_error
from flagtree_spec._tools.model.calls import Signature, signature_of

NAMES = ("a", "b", "c", "d", "e")


@st.composite
def signatures(draw: Any) -> str:
    """The parameter list of a ``def``, drawn over every kind of parameter."""
    names = draw(st.permutations(NAMES))
    counts = draw(st.tuples(*[st.integers(0, 2)] * 3))
    posonly, positional, keyword = (
        list(names[: counts[0]]),
        list(names[counts[0] : counts[0] + counts[1]]),
        list(names[counts[0] + counts[1] : sum(counts)]),
    )
    slots = posonly + positional
    defaults = draw(st.integers(0, len(slots)))
    parts = [n if i < len(slots) - defaults else f"{n}=0" for i, n in enumerate(slots)]
    if posonly:
        parts.insert(len(posonly), "/")
    star = draw(st.booleans())
    if star:
        parts.append("*args")
    elif keyword:
        parts.append("*")
    parts.extend(n if draw(st.booleans()) else f"{n}=0" for n in keyword)
    if draw(st.booleans()):
        parts.append("**kwargs")
    return ", ".join(parts)


def _outcome(call: Any) -> str:
    try:
        call()
    except TypeError:
        return "rejects"
    return "binds"


@settings(max_examples=600, deadline=None)
@given(
    signatures(),
    st.integers(0, 5),
    st.lists(st.sampled_from((*NAMES, "args", "kwargs", "z")), unique=True, max_size=4),
)
@example("a, /, **kwargs", 0, ["a"])  # inspect.bind differs from the call on 3.13.0
@example("a=1, /, **kwargs", 0, ["a"])  # and before 3.13
def test_fts012_argument_matching_agrees_with_python_and_inspect_bind(
    params: str, positional: int, keywords: list[str]
) -> None:
    source = f"def f({params}):\n    pass\n"
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    func, args, kwargs = namespace["f"], range(positional), dict.fromkeys(keywords, 0)
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    sig = signature_of(node)
    error = bind_error(sig, positional, keywords)
    got = "binds" if error is None else "rejects"
    case = (source, positional, keywords, error)
    # The call itself is the rule.
    assert got == _outcome(lambda: func(*args, **kwargs)), case
    # inspect.Signature.bind agrees, except for a keyword named like a
    # positional-only parameter that no positional argument filled, with **kwargs:
    # before Python 3.13 bind rejects it although **kwargs would take it, and
    # 3.13.0 binds it into **kwargs although the parameter has no default and the
    # call fails (there the call alone is the oracle).
    bound = _outcome(lambda: inspect.signature(func).bind(*args, **kwargs))
    quirk = sig.var_keyword and any(k in sig.positional_only[positional:] for k in keywords)
    if quirk and got == "binds" and sys.version_info < (3, 13):
        assert bound == "rejects", case
    elif not (quirk and got == "rejects" and sys.version_info >= (3, 13)):
        assert bound == got, case


def parse(params: str) -> Signature:
    node = ast.parse(f"lambda {params}: 0", mode="eval").body
    assert isinstance(node, ast.Lambda)
    return signature_of(node)


def test_fts012_messages_name_what_cannot_bind() -> None:
    assert bind_error(parse("a, b=0"), 3, ()) == (
        "takes from 1 to 2 positional arguments but 3 were given"
    )
    assert bind_error(parse("a"), 2, ()) == "takes 1 positional argument but 2 were given"
    assert bind_error(parse("a"), 0, ("b", "c")) == "got an unexpected keyword argument 'b' and 'c'"
    assert (
        bind_error(parse("a, /"), 0, ("a",)) == "positional-only parameter 'a' passed as a keyword"
    )
    assert bind_error(parse("a"), 1, ("a",)) == "got multiple values for parameter 'a'"
    assert bind_error(parse("a, b"), 1, ()) == "missing required positional argument 'b'"
    assert bind_error(parse("*, k"), 0, ()) == "missing required keyword-only argument 'k'"
    assert bind_error(parse("a, /, **kw"), 1, ("a",)) is None


def test_signature_describe_shows_the_parameter_list() -> None:
    assert parse("a, /, b=1, *args, k, m=2, **kw").describe() == (
        "(a, /, b=..., *args, k, m=..., **kwargs)"
    )
    assert parse("*, k").describe() == "(*, k)"


def test_dispatchers_follow_aliases_and_guarded_imports() -> None:
    from flagtree_spec._tools.model.calls import dispatchers, hook_calls

    tree = ast.parse(
        "try:\n    from flagtree_spec import spec\nexcept ImportError:\n    spec = None\n"
        "if True:\n    from flagtree_spec import spec_func as lookup\n"
        "def _forward(name, *args, **kwargs):\n    return table[name](*args, **kwargs)\n"
        "spec = _forward\ncall = spec\n"
        "from flagtree_spec import for_root, active\nactive = 1\n"
        "def spec_two(name, *args, **kwargs):\n    return 0\n"
        "from .driver import other\n"
    )
    found = dispatchers(tree)
    assert found == {
        "spec": ("forwarder", ""),
        "call": ("forwarder", ""),
        "lookup": ("flagtree_spec", "spec_func"),
    }
    assert hook_calls(tree, "x = 1", ["call"]) == []


def test_hook_calls_finds_what_a_full_walk_finds() -> None:
    from flagtree_spec._tools.model.calls import hook_calls

    text = (
        "from flagtree_spec import spec, spec_func\n"
        "@decorate(spec('in_decorator', 1))\n"
        "def f(x=spec('in_default')):\n"
        "    return [spec(\n        'multi_line',\n        x,\n    ) for _ in x]\n"
        "class C:\n    y = obj.spec('attribute', k=1)\n"
        "z = spec  (\n'spaced', *a)\n"
        "w = spec_func('lookup')\n"
        "v = spec(name)  # not a literal\n"
        "u = spec_path('not a hook')\n"
    )
    tree = ast.parse(text)
    found = sorted(hook_calls(tree, text, ()))
    assert [(c.hook, c.line) for c in found] == [
        ("attribute", 9),
        ("in_decorator", 2),
        ("in_default", 3),
        ("lookup", 12),
        ("multi_line", 4),
        ("spaced", 10),
    ]
    assert next(c for c in found if c.hook == "spaced").unpacked
    assert next(c for c in found if c.hook == "attribute").callee == ""
