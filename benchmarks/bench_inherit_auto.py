"""Benchmark: inherit() and auto mode against their plain counterparts.

    python benchmarks/bench_inherit_auto.py [--runs N]

Two comparisons, each timed in fresh interpreters (one import per process,
measured with ``time.perf_counter`` around the import statement only, the
library and the parent packages already imported), with
``PYTHONDONTWRITEBYTECODE`` unset and ``__pycache__`` warmed first, the two
sides interleaved run by run:

1. importing an override that calls ``inherit(globals())`` against importing
   the trunk module alone (a generated trunk module of 200 functions and 20
   classes, about 1100 lines; the override replaces one function).
   Target: at most 1.3x.
2. importing a generated tree of 300 packages (every ``__init__`` imports its
   child packages) under auto mode with a backend, against the same tree whose
   ``__init__`` files call ``spec_path(__path__)``, with the same backend.
   Target: at most 1.1x.

Prints the medians and ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

LIBRARY = str(Path(__file__).resolve().parent.parent)


def _trunk_module() -> str:
    parts = ['"""A generated trunk module."""', "import math", ""]
    for i in range(200):
        parts.append(f"def func_{i}(x, y=1):\n    return helper(x) * {i} + math.sqrt(y)\n")
    for i in range(20):
        parts.append(
            f"class Thing{i}:\n    def __init__(self, v):\n        self.v = v\n\n"
            f"    def value(self):\n        return func_{i}(self.v)\n"
        )
    parts.append("def helper(x):\n    return x + 1\n")
    return "\n".join(parts)


OVERRIDE = '''"""The backend's version: inherits the trunk, changes helper()."""
from flagtree_spec import inherit

inherit(globals())


def helper(x):
    return x + 2
'''


def build_inherit(base: Path) -> Path:
    repo = base / "inherit"
    trunk = repo / "python" / "benchpkg"
    mirror = repo / "third_party" / "bk" / "backend" / "spec" / "benchpkg"
    trunk.mkdir(parents=True)
    mirror.mkdir(parents=True)
    (trunk / "__init__.py").write_text("from flagtree_spec import spec_path\nspec_path(__path__)\n")
    (trunk / "big.py").write_text(_trunk_module())
    (trunk / "plain.py").write_text(_trunk_module())  # the same module, never overridden
    (mirror / "big.py").write_text(OVERRIDE)
    return repo


def build_tree(base: Path, *, with_spec_path: bool) -> Path:
    """301 packages: treepkg, 10 children, 29 grandchildren each; 10 overridden modules."""
    repo = base / ("spec_path" if with_spec_path else "auto")
    root = repo / "python" / "treepkg"
    mirror = repo / "third_party" / "bk" / "backend" / "spec" / "treepkg"
    line = "from flagtree_spec import spec_path\nspec_path(__path__)\n" if with_spec_path else ""
    children = [f"c{i}" for i in range(10)]
    root.mkdir(parents=True)
    (root / "__init__.py").write_text(line + "".join(f"from . import {c}\n" for c in children))
    for c in children:
        grand = [f"g{j}" for j in range(29)]
        (root / c).mkdir()
        (root / c / "__init__.py").write_text(line + "".join(f"from . import {g}\n" for g in grand))
        for g in grand:
            (root / c / g).mkdir()
            (root / c / g / "__init__.py").write_text(line + "VALUE = 1\n")
            (root / c / g / "mod.py").write_text("WHERE = 'trunk'\n")
        # The backend overrides a few modules and adds a folder to a few packages.
        (mirror / c / "g0").mkdir(parents=True)
        (mirror / c / "g0" / "mod.py").write_text("WHERE = 'bk'\n")
    return repo


TIMER = """
import sys, time
{setup}
t0 = time.perf_counter()
{statement}
t1 = time.perf_counter()
{check}
sys.stdout.write(repr(t1 - t0))
"""


def measure(repo: Path, setup: str, statement: str, check: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        FLAGTREE_BACKEND="bk",
        PYTHONPATH=os.pathsep.join([str(repo / "python"), LIBRARY]),
    )
    code = TIMER.format(setup=setup, statement=statement, check=check)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{proc.stderr}")
    return float(proc.stdout)


def compare(label: str, runs: int, a: tuple, b: tuple) -> tuple[str, float, float, float]:
    for _ in range(2):  # warm __pycache__ and the OS caches
        measure(*a)
        measure(*b)
    times_a, times_b = [], []
    for _ in range(runs):
        times_a.append(measure(*a))
        times_b.append(measure(*b))
    ma, mb = statistics.median(times_a), statistics.median(times_b)
    return label, ma, mb, ma / mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=41, help="processes per side (default 41)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        inherit_repo = build_inherit(base)
        setup = "import flagtree_spec, benchpkg"
        rows = [
            compare(
                "inherit override vs trunk module alone",
                runs,
                (inherit_repo, setup, "import benchpkg.big as m", "assert m.func_3(1) == 10.0"),
                (inherit_repo, setup, "import benchpkg.plain as m", "assert m.func_3(1) == 7.0"),
            )
        ]
        auto_repo = build_tree(base, with_spec_path=False)
        spec_repo = build_tree(base, with_spec_path=True)
        check = (
            "import treepkg.c3.g0.mod as m\nassert m.WHERE == 'bk', m.WHERE\n"
            "assert sum(1 for n in sys.modules if n.startswith('treepkg')) == 302"
        )
        rows.append(
            compare(
                "300 packages: auto mode vs spec_path calls",
                runs,
                (
                    auto_repo,
                    "import flagtree_spec\nflagtree_spec.install('treepkg')",
                    "import treepkg",
                    check,
                ),
                (spec_repo, "import flagtree_spec", "import treepkg", check),
            )
        )
    print(f"CPython {sys.version.split()[0]}, {runs} fresh processes per side, medians")
    print(f"{'comparison':<44} {'measured':>10} {'baseline':>10} {'ratio':>7}  target")
    for (label, ma, mb, ratio), target in zip(rows, (1.3, 1.1)):
        verdict = "ok" if ratio <= target else "MISSED"
        print(
            f"{label:<44} {ma * 1e3:>8.3f}ms {mb * 1e3:>8.3f}ms {ratio:>6.2f}x  "
            f"<= {target}x {verdict}"
        )


if __name__ == "__main__":
    main()
