"""Benchmark: what the pytest plugin costs a session that does not use it.

    python benchmarks/bench_pytest_plugin.py [--runs N]

The plugin is registered through an entry point, so every pytest run of an
environment that has the library loads it. Two measurements in fresh
processes, the two sides interleaved run by run, with
``PYTHONDONTWRITEBYTECODE`` unset and ``__pycache__`` warmed first:

1. importing the plugin module after ``import pytest`` (``time.perf_counter``
   around the import statement only), which imports the runtime with it;
2. a whole pytest session of one passing test, wall clock of the process,
   with the plugin against ``-p no:flagtree_spec``. Target: at most 1.05x.

It measures the plugin of the library installed in this interpreter's
environment (``pip install .`` first). Prints the medians and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORT = """
import sys, time
import pytest
t0 = time.perf_counter()
import flagtree_spec.pytest_plugin
t1 = time.perf_counter()
sys.stdout.write(repr(t1 - t0))
"""


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    return env


def import_time(folder: Path) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT],
        cwd=folder,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{proc.stderr}")
    return float(proc.stdout)


def session_time(folder: Path, *options: str) -> float:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options]
    start = time.perf_counter()
    proc = subprocess.run(
        command, cwd=folder, env=environment(), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or "1 passed" not in proc.stdout:
        raise SystemExit(f"pytest session failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="processes per side (default 21)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        for _ in range(2):  # warm __pycache__ and the OS caches
            import_time(folder)
            session_time(folder)
            session_time(folder, "-p", "no:flagtree_spec")
        imports, with_plugin, without = [], [], []
        for _ in range(runs):
            imports.append(import_time(folder))
            with_plugin.append(session_time(folder))
            without.append(session_time(folder, "-p", "no:flagtree_spec"))
    plugin_import = statistics.median(imports)
    a, b = statistics.median(with_plugin), statistics.median(without)
    ratio = a / b
    verdict = "ok" if ratio <= 1.05 else "MISSED"
    print(f"CPython {sys.version.split()[0]}, {runs} fresh processes per side, medians")
    print(f"import flagtree_spec.pytest_plugin after pytest: {plugin_import * 1e3:.2f} ms")
    print(
        f"pytest session, one test: {a * 1e3:.1f} ms with the plugin, {b * 1e3:.1f} ms "
        f"with -p no:flagtree_spec: {ratio:.3f}x (target <= 1.05x) {verdict}"
    )
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
