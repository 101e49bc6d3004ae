"""What a module reads while it is imported, and what a call of a definition binds to,
each compared with what Python does when the code runs.

``import_time_reads`` (FTS023) is run on snippets that exercise every scope rule;
each snippet is executed too, in a fresh namespace: a snippet that raises
``NameError`` names exactly the one read that nothing binds, one that runs
leaves none.  ``parameters`` (FTS024) is asked about classes and functions of
several shapes, and every call shape it judges is made for real.
"""

from __future__ import annotations

import ast
import builtins
import sys
import textwrap
from typing import Optional

import pytest

from flagtree_spec._tools.check.signatures import bind_error
from flagtree_spec._tools.model.definitions import (
    calls_of,
    definition_of,
    parameters,
    statement_names,
)
from flagtree_spec._tools.model.facts import extract
from flagtree_spec._tools.model.names import import_time_reads
from flagtree_spec._tools.upgrade.digest import analyse
from flagtree_spec._tools.upgrade.reshape import (
    carry_dropped,
    drop_identical,
    imported_modules,
    whole_module,
)

_BUILTINS = frozenset(dir(builtins))

# (snippet, the one name nothing binds, or None when it runs)
SNIPPETS = [
    ("x = 1\ny = x + 1\n", None),
    ("y = missing + 1\n", "missing"),
    ("for i in range(2):\n    pass\nelse:\n    j = i\nz = j\n", None),
    ("for i in unknown_seq:\n    pass\n", "unknown_seq"),
    ("while flag_w:\n    break\n", "flag_w"),
    ("n = 0\nwhile n < 2:\n    n += 1\nelse:\n    done = n\n", None),
    ("import contextlib\nwith contextlib.nullcontext(3) as v:\n    w = v\n", None),
    ("with absent_ctx():\n    pass\n", "absent_ctx"),
    (
        "try:\n    a = 1\nexcept ValueError as e:\n    b = e\n"
        "else:\n    c = a\nfinally:\n    d = 2\n",
        None,
    ),
    ("try:\n    raise ValueError\nexcept (OtherError, ValueError):\n    pass\n", "OtherError"),
    ("total = 1\ntotal += 2\n", None),
    ("del nothing_here\n", "nothing_here"),
    ("things = {}\nthings['a'] = 1\ndel things['a']\n", None),
    ("squares = [k * k for k in range(3) if k]\n", None),
    ("pairs = {k: v for k, v in zip('ab', 'cd')}\n", None),
    ("g = list(i + offset for i in range(2))\n", "offset"),
    ("s = {i for i in source_set}\n", "source_set"),
    ("nested = [[a + b for b in range(2)] for a in range(2)]\n", None),
    ("f = lambda a=1: a + later_name\n", None),  # the body runs when called
    ("f = lambda a=default_name: a\n", "default_name"),
    ("def f(a, b=2, *, c=3):\n    return undefined_in_body\n", None),
    ("def f(a=missing_default):\n    return a\n", "missing_default"),
    ("def f(a: NotAType):\n    return a\n", "NotAType"),  # annotations evaluated
    ("from __future__ import annotations\ndef f(a: NotAType) -> Other:\n    return a\n", None),
    ("def deco(fn):\n    return fn\n@deco\ndef f():\n    pass\n", None),
    ("@missing_deco\ndef f():\n    pass\n", "missing_deco"),
    ("class C:\n    k = 1\n    m = k + 1\n    def meth(self, x=k):\n        return x\n", None),
    ("class C(MissingBase):\n    pass\n", "MissingBase"),
    ("class C:\n    attr = outer_name\n", "outer_name"),
    ("class C:\n    __slots__ = ()\n    q = __qualname__\n", None),
    ("x: int = 1\n", None),
    ("x: MissingAnnotation = 1\n", "MissingAnnotation"),
    ("(w := 3)\nprint(w)\n", None),
    ("ok = [y := 5, y ** 2]\nz = y\n", None),
    ("if __name__ == '__main__':\n    print(only_as_script)\n", None),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import missing_module\n", None),
    ("if False:\n    never = 1\nelse:\n    e = 2\n", None),
    ("def make():\n    global made\n    made = 1\nmake()\nm = made\n", None),
    ("print(__name__, __doc__, len, __builtins__ is not None)\n", None),
]
if sys.version_info >= (3, 10):
    SNIPPETS += [
        (
            "point = (1, 2)\nmatch point:\n    case (0, y):\n        r = y\n"
            "    case [x, *rest]:\n        r = x\n    case {'k': v, **others}:\n"
            "        r = v\n    case _:\n        r = None\n",
            None,
        ),
        ("match 3:\n    case MissingClass():\n        pass\n", "MissingClass"),
        (
            "import math\nmatch 3:\n    case math.pi:\n        pass\n    case _:\n        pass\n",
            None,
        ),
    ]


def _unbound(source: str) -> set[str]:
    tree = ast.parse(source)
    reads = import_time_reads(tree)
    assert not reads.unknown, reads.unknown
    defined = extract(tree, source).defined | reads.bound
    module_names = {"__name__", "__doc__", "__builtins__", "__file__", "__spec__"}
    return {n for n in reads.reads if n not in defined | _BUILTINS | module_names}


@pytest.mark.parametrize(("source", "missing"), SNIPPETS)
def test_import_time_reads_name_exactly_what_python_finds_unbound(
    source: str, missing: Optional[str]
) -> None:
    namespace: dict[str, object] = {"__name__": "snippet", "__builtins__": builtins}
    try:
        exec(compile(source, "<snippet>", "exec", dont_inherit=True), namespace)
    except NameError as exc:
        raised: Optional[str] = exc.name if hasattr(exc, "name") else str(exc).split("'")[1]
    else:
        raised = None
    assert raised == missing
    assert _unbound(source) == ({missing} if missing else set())


def test_import_time_reads_give_up_where_names_cannot_be_told() -> None:
    for source in ("exec('x = 1')\ny = x\n", "globals()['x'] = 1\ny = x\n"):
        assert import_time_reads(ast.parse(source)).unknown
    reads = import_time_reads(ast.parse("a = b\nc = b\n"))
    assert reads.reads == {"b": (1, 5)}  # the first read of each name


# --------------------------------------------------------------------------- parameters

DEFINITIONS = textwrap.dedent(
    """
    import enum
    from abc import ABC
    from typing import Generic, TypeVar

    T = TypeVar("T")


    def plain(a, b=1, *rest, key, other=2, **more):
        pass


    def positional(a, b, /, c):
        pass


    class NoInit:
        pass


    class WithInit:
        def __init__(self, x, y=0):
            pass


    class Generic1(Generic[T]):
        def __init__(self, value):
            pass


    class Abstract(ABC):
        def __init__(self, a, *, b):
            pass


    class Error(ValueError):
        def __init__(self, what):
            super().__init__(what)


    class StarInit:
        def __init__(*args):
            pass


    class Colour(enum.Enum):
        RED = 1


    class WithNew:
        def __new__(cls, *args):
            return super().__new__(cls)

        def __init__(self, a):
            pass


    class Decorated:
        pass


    Decorated = Decorated


    def decorated_fn(fn):
        return fn


    @decorated_fn
    def wrapped(a):
        pass
    """
)
# Whether syntax can tell what a call of each binds to.
JUDGED = {
    "plain": True,
    "positional": True,
    "NoInit": True,
    "WithInit": True,
    "Generic1": True,
    "Abstract": True,
    "Error": True,
    "StarInit": True,
    "Colour": False,  # a base with a metaclass
    "WithNew": False,
    "Decorated": False,  # bound twice
    "wrapped": False,
}
CALLS = [
    ((), ()),
    ((1,), ()),
    ((1, 2), ()),
    ((1, 2, 3), ()),
    ((1,), ("key",)),
    ((1, 2), ("key", "other", "extra")),
    ((), ("a", "b")),
    ((1,), ("b",)),
    ((1, 2), ("c",)),
    ((1,), ("y",)),
    ((1,), ("x",)),
    ((), ("value",)),
]


@pytest.mark.parametrize("name", sorted(JUDGED))
def test_parameters_bind_calls_as_python_does(name: str) -> None:
    tree = ast.parse(DEFINITIONS)
    definition = definition_of(tree, name, "pkg")
    assert definition is not None
    signature = parameters(definition)
    assert (signature is not None) == JUDGED[name], signature
    if signature is None:
        return
    namespace: dict[str, object] = {"__name__": "defs"}
    exec(compile(DEFINITIONS, "<defs>", "exec", dont_inherit=True), namespace)
    target = namespace[name]
    for positional, keywords in CALLS:
        try:
            target(*positional, **dict.fromkeys(keywords, 0))  # type: ignore[operator]
        except TypeError:
            works = False
        else:
            works = True
        predicted = bind_error(signature, len(positional), keywords) is None
        assert predicted == works, (name, positional, keywords)


def test_statement_names_and_calls_of_see_scopes_as_python_does() -> None:
    source = textwrap.dedent(
        """
        from .lib import make, other as alias

        def user(make=None):
            return make(1)  # the parameter, not the import

        def caller():
            for make in []:
                pass
            return make(2)  # a local again

        def real():
            return alias(3) + make(4, key=5)

        def unpacked(args):
            return make(*args)
        """
    )
    tree = ast.parse(source)
    calls = calls_of(tree, source, ["make", "alias"])
    assert [(c.name, c.line, c.positional, c.keywords, c.unpacked) for c in calls] == [
        ("alias", 13, 1, (), False),
        ("make", 13, 1, ("key",), False),
        ("make", 16, 1, (), True),
    ]
    body = ast.parse(
        "try:\n    import a.b as c\nexcept E as err:\n    d, (e, *f) = 1, (2, 3)\n"
        "finally:\n    with o as (g, h):\n        del i\n"
    ).body[0]
    assert set(statement_names(body)) == {"c", "err", "d", "e", "f", "g", "h", "i"}
    # A call on a line that the version the override shadows writes alike is its own.
    assert calls_of(tree, source, ["make"], other="    return make(4, key=5)\n") != []
    same = "        return alias(3) + make(4, key=5)\n"
    assert [c.line for c in calls_of(tree, source, ["make"], other=same)] == [16]


# --------------------------------------------------------------------------- reshape


def test_whole_module_keeps_the_order_inherit_gave_where_the_base_reads_a_name() -> None:
    base = (
        '"""Doc."""\nfrom __future__ import annotations\n\ndef f():\n    return 1\n\nTABLE = [f]\n'
    )
    override = (
        "from flagtree_spec import inherit, spec\nimport os\n\ninherit(globals())\n"
        "del inherit\n\n\ndef f():\n    return 2\n\n\ndef g():\n    return os.sep\n"
    )
    text = whole_module(base, override)
    assert "inherit" not in text
    assert text.startswith('"""Doc."""\nfrom __future__ import annotations\n\n')
    assert "from flagtree_spec import spec\nimport os\n" in text
    # TABLE read f at import: base's f stays in place, the override's follows.
    assert text.index("return 1") < text.index("TABLE = [f]") < text.index("return 2")
    namespace: dict[str, object] = {"__name__": "whole"}
    code = compile(text.replace("from flagtree_spec import spec\n", ""), "<whole>", "exec")
    exec(code, namespace)
    assert namespace["TABLE"][0]() == 1 and namespace["f"]() == 2  # type: ignore[index,operator]


def test_drop_identical_and_carry_dropped_on_their_edges() -> None:
    trunk = analyse("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    only = "from flagtree_spec import inherit\n\ninherit(globals())\n\n\ndef f():\n    return 1\n"
    dropped = drop_identical(only, trunk)
    assert dropped.names == ("f",) and dropped.empty
    wrapper = only.replace("inherit(globals())\n", "inherit(globals())\n_f = f\n")
    assert drop_identical(wrapper, trunk).names == ()  # reads the lower f first
    assert drop_identical("def f():\n    return 1\n", trunk).names == ()  # no inherit
    # Nothing to carry when the new trunk binds the name, or a star import may.
    override = "from flagtree_spec import inherit\n\ninherit(globals())\nX = T\n"
    base = "T = 1\n"
    assert carry_dropped(override, base, "T = 2\n") == (override, ())
    assert carry_dropped(override, base, "from .elsewhere import *\n") == (override, ())
    text, kept = carry_dropped(override, base, "")
    assert kept == ("T",) and "T = 1\n" in text
    assert carry_dropped("not python (", base, "") == ("not python (", ())


def test_imported_modules_resolve_relative_imports_and_skip_what_does_not_parse() -> None:
    found = imported_modules(
        [
            ("from . import x\nfrom ..up import y\nimport a.b\n", "pkg.sub"),
            ("from ...... import too_far\n", "pkg"),
            ("def broken(:\n", "pkg"),
        ]
    )
    assert {"pkg.sub", "pkg.sub.x", "pkg.up", "pkg.up.y", "a", "a.b"} <= found
    assert not any("too_far" in n for n in found)
