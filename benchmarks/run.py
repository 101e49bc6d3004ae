"""Run every benchmark on every interpreter that ``scripts/test`` prepared.

    python3 benchmarks/run.py            # each .venvs/<version> found
    python3 benchmarks/run.py 3.11       # only the versions named

Each benchmark script prints its own table of medians and ratios measured
side by side; this runner adds the Python version as a heading, uses the
library from this checkout, and exits non-zero when a benchmark
reports a target missed.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCRIPTS = (
    "bench_spec.py",
    "bench_inherit_auto.py",
    "bench_check.py",
    "bench_pytest_plugin.py",
    "bench_migrate.py",
)


def main(argv: list[str]) -> int:
    venvs = os.path.join(REPO, ".venvs")
    versions = argv or sorted(
        (v for v in os.listdir(venvs) if not v.startswith(".")) if os.path.isdir(venvs) else [],
        key=lambda v: tuple(map(int, v.split("."))),
    )
    if not versions:
        print("no environments in .venvs/: run scripts/test first", file=sys.stderr)
        return 2
    status = 0
    for version in versions:
        python = os.path.join(venvs, version, "bin", "python")
        if not os.path.exists(python):
            print(f"== CPython {version}: no environment, skipped")
            continue
        for script in SCRIPTS:
            print(f"== CPython {version}: {script}", flush=True)
            code = subprocess.run([python, os.path.join(HERE, script)]).returncode
            status = status or code
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
