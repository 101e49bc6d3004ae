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

import os
import sys
import tempfile
import time
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from treegen import PER_PACKAGE, module_text, parse_files, write

from flagtree_spec._tools.migrate.plan import make_plan

ROUNDS = 5


def generate(base: str, modules: int) -> tuple[str, str, str]:
    trunk = os.path.join(base, "python", "benchpkg")
    fork = os.path.join(base, "third_party", "vendor", "python", "benchpkg")
    into = os.path.join(base, "third_party", "vendor", "backend", "spec", "benchpkg")
    write(os.path.join(trunk, "__init__.py"), '"""Root."""\n')
    write(os.path.join(fork, "__init__.py"), '"""Root."""\n')
    for index in range(modules):
        p, i = divmod(index, PER_PACKAGE)
        text = module_text(i, p)
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
    return parse_files([trunk, fork], links=False)


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
