"""The generated trees the tool benchmarks time: modules of packages of 20 that import
from each other, and reading and parsing files once (the measure they compare with)."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from typing import Optional

PER_PACKAGE = 20

MODULE = '''"""Module {i} of package {p}."""

from __future__ import annotations

import os
{hook_import}from .m{prev} import helper_{prev}, Thing{prev}


class Thing{i}:
    """A class with a few methods."""

    def __init__(self, value: int) -> None:
        self.value = value

    def double(self) -> int:
        return self.value * 2

    def path(self) -> str:
        return os.path.join("a", str(self.value))


def helper_{i}(x: int, y: int = 2) -> int:
    total = 0
    for k in range(x):
        if k % y:
            total += k
        else:
            total -= helper_{prev}(k, 3) if k > 100 else 1
    return total


def use_{i}() -> object:
{hook_call}    return Thing{prev}(helper_{i}(3))


CONSTANT_{i} = {{"name": "m{i}", "size": {i}, "tags": ["x", "y", "z"]}}
'''


def module_text(i: int, p: int, hook: Optional[int] = None) -> str:
    """Module ``m{i}`` of package ``pkg{p}``; with *hook*, its ``use_`` calls that hook."""
    return MODULE.format(
        i=i,
        p=p,
        prev=(i - 1) % PER_PACKAGE,
        hook_import="from flagtree_spec import spec\n" if hook is not None else "",
        hook_call=f'    spec("hook_{hook}", {i}, y=2)\n' if hook is not None else "",
    )


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def parse_files(tops: Iterable[str], links: bool = True) -> int:
    """Read and ``ast.parse`` every ``.py`` file below *tops* once (symlinks too when
    *links*); the number of files."""
    count = 0
    for top in tops:
        for dirpath, _, filenames in os.walk(top):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if name.endswith(".py") and (links or not os.path.islink(path)):
                    with open(path, "rb") as f:
                        ast.parse(f.read())
                    count += 1
    return count
