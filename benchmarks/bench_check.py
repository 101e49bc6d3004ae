"""Speed of ``flagtree-spec check`` against reading and parsing the same files once.

    python3 benchmarks/bench_check.py [MODULES ...]   (default: 500 2000 8000)

Generates a FlagTree-style tree (trunk packages of 20 modules that import from
each other and call a hook each, plus overrides for 15% of the modules in a
backend's mirror tree, and a hook package that gathers 50 hooks from 10
fragment files with star imports),
then times, in this process and side by side, (a) reading and ``ast.parse``-ing
every file of trunk and mirror once and (b) building the static model and
running every check on it.  The two are timed alternately, round by round.
The ratio is that of the fastest round of each side (as ``timeit`` advises: a
slower round measures the machine's other work, not the code); the ratio of
the medians is shown beside it.  Target: at 2,000 trunk modules and 300
overrides, (b) at most 2.0x (a).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from treegen import PER_PACKAGE, module_text, parse_files

from flagtree_spec._tools.check.driver import check
from flagtree_spec._tools.model.model import load

FRAGMENTS = 10
HOOKS_PER_FRAGMENT = 5
REPEATS = 15


def generate(base: str, modules: int, overrides: int) -> str:
    rdir = os.path.join(base, "python", "benchpkg")
    mirror = os.path.join(base, "third_party", "vendor", "backend", "spec", "benchpkg")
    spec = "from flagtree_spec import spec_path\n\nspec_path(__path__)\n"
    packages = max(1, modules // PER_PACKAGE)
    every = max(1, modules // max(1, overrides))
    written = 0
    os.makedirs(rdir)
    with open(os.path.join(rdir, "__init__.py"), "w") as f:
        f.write(spec)
    for p in range(packages):
        folder = os.path.join(rdir, f"pkg{p}")
        os.makedirs(folder)
        with open(os.path.join(folder, "__init__.py"), "w") as f:
            f.write(spec)
        for i in range(PER_PACKAGE):
            hook = (p * PER_PACKAGE + i) % (FRAGMENTS * HOOKS_PER_FRAGMENT)
            text = module_text(i, p, hook)
            with open(os.path.join(folder, f"m{i}.py"), "w") as f:
                f.write(text)
            index = p * PER_PACKAGE + i
            if index % every == 0 and written < overrides:
                os.makedirs(os.path.join(mirror, f"pkg{p}"), exist_ok=True)
                with open(os.path.join(mirror, f"pkg{p}", f"m{i}.py"), "w") as f:
                    f.write(text.replace("return self.value * 2", "return self.value * 3"))
                written += 1
    hooks = os.path.dirname(mirror)
    with open(os.path.join(hooks, "__init__.py"), "w") as f:
        f.writelines(f"from ._fragment{n} import *\n" for n in range(FRAGMENTS))
    for n in range(FRAGMENTS):
        names = [f"hook_{n * HOOKS_PER_FRAGMENT + k}" for k in range(HOOKS_PER_FRAGMENT)]
        with open(os.path.join(hooks, f"_fragment{n}.py"), "w") as f:
            f.write(f"__all__ = {names!r}\n")
            f.writelines(f"\n\ndef {name}(x, y=1):\n    return x + y\n" for name in names)
    return base


def parse_all(base: str) -> int:
    return parse_files([base])


def run_check(base: str) -> int:
    model = load(repo=base, backends=["vendor"])
    return len(check(model))


def interleaved(base: str) -> tuple[float, float, float, float]:
    """Parse-once and check timed side by side, alternating, REPEATS rounds each:
    the fastest round of both and the medians of both."""
    parses, checks = [], []
    for _ in range(REPEATS):
        # Neither side pays for collecting what the other left (the collector
        # stays on while each runs, as it does in use; check pauses it itself).
        gc.collect()
        start = time.perf_counter()
        parse_all(base)
        parse = time.perf_counter() - start
        gc.collect()
        start = time.perf_counter()
        run_check(base)
        checked = time.perf_counter() - start
        parses.append(parse)
        checks.append(checked)
    return min(parses), min(checks), statistics.median(parses), statistics.median(checks)


TARGET = 2.0


def main() -> int:
    """Print the table; 1 when the 2,000-module row misses the target."""
    sizes = [int(a) for a in sys.argv[1:]] or [500, 2000, 8000]
    missed = False
    print(
        f"{'modules':>8} {'overrides':>9} {'files':>6} "
        f"{'parse (s)':>10} {'check (s)':>10} {'ratio':>6} {'median':>7}"
    )
    for modules in sizes:
        overrides = modules * 3 // 20
        with tempfile.TemporaryDirectory() as base:
            generate(base, modules, overrides)
            files = parse_all(base)
            run_check(base)  # warm the caches of the file system once
            parse, checked, parse_median, check_median = interleaved(base)
            findings = run_check(base)
            print(
                f"{modules:>8} {overrides:>9} {files:>6} {parse:>10.3f} {checked:>10.3f} "
                f"{checked / parse:>5.2f}x {check_median / parse_median:>6.2f}x  "
                f"({findings} findings)"
            )
            missed = missed or (modules == 2000 and checked / parse > TARGET)
    print("times: the fastest of the rounds; median: the ratio of the median times")
    print(f"target: ratio <= {TARGET:.2f}x at 2,000 modules and 300 overrides")
    if missed:
        print("target missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
