"""Speed of ``flagtree-spec migrate`` (the plan) against reading and parsing both trees once.

    python3 benchmarks/bench_migrate.py

Generates a trunk of 2,000 modules (packages of 20) and a whole-tree copy of
it as a backend keeps one: half the modules byte-identical, a quarter
identical but for a comment, a fifth with one changed function, the rest
added by the backend, plus a few symlinks back into trunk.  Then times, in
this process, side by side and interleaved (the order alternates each round),
(a) reading and ``ast.parse``-ing every Python file of trunk and copy once,
(b) the plan (``make_plan``), and (c) the plan with ``--minimize`` (no base).
Minimum over the rounds.  Target: (b) at most 2.0x (a) at 2,000 modules.
Exit code 1 when the target is missed.
"""

from __future__ import annotations

import ast
import os
import sys
import tempfile
import time
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from flagtree_spec._tools.migrate.plan import make_plan

PER_PACKAGE = 20
ROUNDS = 5
MODULE = '''"""Module {i} of package {p}."""

from __future__ import annotations

import os
from .m{prev} import helper_{prev}, Thing{prev}


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
    return Thing{prev}(helper_{i}(3))


CONSTANT_{i} = {{"name": "m{i}", "size": {i}, "tags": ["x", "y", "z"]}}
'''


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def generate(base: str, modules: int) -> tuple[str, str, str]:
    trunk = os.path.join(base, "python", "benchpkg")
    fork = os.path.join(base, "third_party", "vendor", "python", "benchpkg")
    into = os.path.join(base, "third_party", "vendor", "backend", "spec", "benchpkg")
    write(os.path.join(trunk, "__init__.py"), '"""Root."""\n')
    write(os.path.join(fork, "__init__.py"), '"""Root."""\n')
    for index in range(modules):
        p, i = divmod(index, PER_PACKAGE)
        text = MODULE.format(i=i, p=p, prev=(i - 1) % PER_PACKAGE)
        if i == 0:
            write(os.path.join(trunk, f"pkg{p}", "__init__.py"), "")
            write(os.path.join(fork, f"pkg{p}", "__init__.py"), "")
        write(os.path.join(trunk, f"pkg{p}", f"m{i}.py"), text)
        kind = index % 20
        copy = os.path.join(fork, f"pkg{p}", f"m{i}.py")
        if kind < 10:
            write(copy, text)
        elif kind < 15:
            write(copy, text.replace("    total = 0\n", "    total = 0  # vendor copy\n"))
        elif kind < 19:
            write(copy, text.replace("return self.value * 2", "return self.value * 3"))
        elif p % 10 == 0:
            os.symlink(os.path.join(trunk, f"pkg{p}", f"m{i}.py"), copy)
        else:
            write(os.path.join(fork, f"pkg{p}", f"vendor{i}.py"), text)
    return fork, trunk, into


def parse_both(fork: str, trunk: str) -> int:
    count = 0
    for top in (trunk, fork):
        for dirpath, _, filenames in os.walk(top):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if name.endswith(".py") and not os.path.islink(path):
                    with open(path, "rb") as f:
                        ast.parse(f.read())
                    count += 1
    return count


def timed(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def measure(fork: str, trunk: str, into: str) -> tuple[float, float, float]:
    """Minimum times of (a), (b) and (c), interleaved, the order alternating each round."""
    jobs: dict[str, Callable[[], object]] = {
        "parse": lambda: parse_both(fork, trunk),
        "plan": lambda: make_plan(fork, trunk, into),
        "minimize": lambda: make_plan(fork, trunk, into, minimize_files=True),
    }
    runs: dict[str, list[float]] = {name: [] for name in jobs}
    for r in range(ROUNDS):
        for name in list(jobs) if r % 2 == 0 else list(reversed(jobs)):
            runs[name].append(timed(jobs[name]))
    return min(runs["parse"]), min(runs["plan"]), min(runs["minimize"])


def main() -> int:
    print(
        f"{'modules':>8} {'parse (s)':>10} {'plan (s)':>9} {'ratio':>6} {'minimize (s)':>13} ratio"
    )
    status = 0
    for modules in (500, 2000):
        with tempfile.TemporaryDirectory() as base:
            fork, trunk, into = generate(base, modules)
            parse, plan, small = measure(fork, trunk, into)
            summary = make_plan(fork, trunk, into, minimize_files=True).summary()
            print(
                f"{modules:>8} {parse:>10.3f} {plan:>9.3f} {plan / parse:>5.2f}x "
                f"{small:>13.3f} {small / parse:>5.2f}x  {summary}"
            )
            if modules == 2000 and plan > 2 * parse:
                status = 1
    print("target: plan <= 2.00x parse at 2,000 modules")
    return status


if __name__ == "__main__":
    sys.exit(main())
