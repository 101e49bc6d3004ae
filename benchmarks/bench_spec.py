"""Speed of the hot paths: spec(), spec_func(), spec_path(), and start-up discovery.

    python3 benchmarks/bench_spec.py

Each measurement runs in a fresh interpreter on the fixture tree
``fixtures/source_repo`` with the library from this checkout; every ratio compares
two timings taken side by side in the same process.  Medians of several
``timeit`` repeats are reported.  Targets: a ``spec()``
hit at most 3.0x a direct call of the hook; a miss, or any call with no
backend, at most 2.5x an empty function call; discovery at start-up at most
5 ms more than the same import with no backend.  The discovery of a spec
root that keeps its hook package at ``<spec root>/R/__init__.py`` (FlagTree's
layout, ``fixtures/hook_convention``) is shown beside one with its own
``__init__.py``: the former reads both root ``__init__.py`` files and, when
they differ, parses both to compare them.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TRUNK = os.path.join(REPO, "fixtures", "source_repo", "python")
CONVENTION = os.path.join(REPO, "fixtures", "hook_convention", "python")

CALLS = """
import json, statistics, timeit
import fixpkg
from fixpkg.runtime import jit  # noqa: F401
from flagtree_spec import spec, spec_func, spec_path

def empty():
    pass

# The floors: what any pure-Python spec(hook, /, *args, **kwargs) costs at least.
def forward(hook_name, /, *args, **kwargs):
    return hook(*args, **kwargs)

def same_signature(hook_name, /, *args, **kwargs):
    return None

hook = spec_func("add_one") or (lambda x: x + 1)
spec("add_one", 1)
spec("missing")
R, N = 9, 200_000

def per_call(stmt, **names):
    t = timeit.Timer(stmt, globals={"spec": spec, "spec_func": spec_func, "hook": hook,
                                    "empty": empty, "forward": forward,
                                    "same_signature": same_signature, **names})
    return statistics.median(t.repeat(R, N)) / N

pkg = __import__("fixpkg.runtime", fromlist=["x"])
result = {
    "direct": per_call("hook(1)"),
    "empty": per_call("empty()"),
    "hit": per_call("spec('add_one', 1)"),
    "miss": per_call("spec('missing')"),
    "spec_func": per_call("spec_func('add_one')"),
    "forward": per_call("forward('add_one', 1)"),
    "same_signature": per_call("same_signature('missing')"),
    "spec_path": statistics.median(
        timeit.Timer("spec_path(path, name='fixpkg.runtime')",
                     setup="path = list(pkg.__path__)",
                     globals={"spec_path": spec_path, "pkg": pkg}).repeat(R, 2000)) / 2000,
}
print(json.dumps(result))
"""

STARTUP = """
import time
import flagtree_spec  # the library's own import is the same in both runs
t0 = time.perf_counter()
import fixpkg
t1 = time.perf_counter()
print((t1 - t0) * 1e3)
"""


DISCOVERY = """
import time
import flagtree_spec, hcpkg
t0 = time.perf_counter()
flagtree_spec.active("hcpkg")  # resolves the state: discovery, no hook module imported
t1 = time.perf_counter()
print((t1 - t0) * 1e3)
"""


def child_env(backend: str, trunk: str = TRUNK) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # time imports, not compilation
    env["PYTHONPATH"] = os.pathsep.join([trunk, REPO])
    if backend:
        env["FLAGTREE_BACKEND"] = backend
    return env


def run(code: str, backend: str, trunk: str = TRUNK) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=child_env(backend, trunk),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise SystemExit(f"benchmark child failed:\n{proc.stderr}")
    return proc.stdout.strip()


def startup_ms(backend: str, runs: int) -> float:
    run(STARTUP, backend)  # warm the bytecode caches
    return statistics.median(float(run(STARTUP, backend)) for _ in range(runs))


def discovery_ms(backends: tuple[str, ...], runs: int) -> dict[str, float]:
    """Median discovery time per backend, the backends' processes interleaved."""
    times: dict[str, list[float]] = {b: [] for b in backends}
    for backend in backends:
        run(DISCOVERY, backend, CONVENTION)  # warm the bytecode caches
    for _ in range(runs):
        for backend in backends:
            times[backend].append(float(run(DISCOVERY, backend, CONVENTION)))
    return {b: statistics.median(t) for b, t in times.items()}


def main() -> int:
    with_backend: dict[str, Any] = json.loads(run(CALLS, "alpha"))
    without: dict[str, Any] = json.loads(run(CALLS, ""))
    base = startup_ms("", 25)
    active = startup_ms("alpha", 25)
    version = ".".join(map(str, sys.version_info[:3]))
    rows = [
        ("spec('hook', x) hit / direct call", with_backend["hit"] / with_backend["direct"], 3.0),
        (
            "spec('missing'), backend / empty call",
            with_backend["miss"] / with_backend["empty"],
            2.5,
        ),
        ("spec('hook'), no backend / empty call", without["miss"] / without["empty"], 2.5),
        ("spec_func('hook') / empty call", with_backend["spec_func"] / with_backend["empty"], None),
        (
            "floor: pure forwarding / direct call",
            with_backend["forward"] / with_backend["direct"],
            None,
        ),
        (
            "floor: same signature, no body / empty call",
            with_backend["same_signature"] / with_backend["empty"],
            None,
        ),
        ("spec hit / pure forwarding", with_backend["hit"] / with_backend["forward"], None),
        (
            "spec miss / same signature, no body",
            with_backend["miss"] / with_backend["same_signature"],
            None,
        ),
    ]
    print(f"CPython {version}: spec() dispatch (median per call, ratios side by side)")
    print(f"  {'measure':44} {'ratio':>7} {'target':>7}  verdict")
    failed = False
    for name, ratio, target in rows:
        ok = target is None or ratio <= target
        failed |= not ok
        shown = f"<= {target:.1f}" if target else "-"
        print(f"  {name:44} {ratio:7.2f} {shown:>7}  {'ok' if ok else 'OVER TARGET'}")
    print(
        f"  direct call {with_backend['direct'] * 1e9:.0f} ns, empty call "
        f"{with_backend['empty'] * 1e9:.0f} ns, spec hit {with_backend['hit'] * 1e9:.0f} ns"
    )
    print(
        f"  spec_path(__path__) per call: {with_backend['spec_path'] * 1e6:.2f} us with a "
        f"backend, {without['spec_path'] * 1e6:.2f} us without"
    )
    extra = active - base
    ok = extra <= 5.0
    failed |= not ok
    print(
        f"  import fixpkg: {base:.2f} ms no backend, {active:.2f} ms with backend 'alpha' "
        f"(discovery + entry points): +{extra:.2f} ms (target <= 5 ms) "
        f"{'ok' if ok else 'OVER TARGET'}"
    )
    found = discovery_ms(("none", "both", "stray", "flag"), 25)
    extra = found["flag"] - found["both"]
    ok = extra <= 5.0
    failed |= not ok
    print(
        f"  discovery of hcpkg: {found['none']:.2f} ms no backend; {found['both']:.2f} ms a spec "
        f"root with its own __init__.py; {found['stray']:.2f} ms spec/hcpkg/__init__.py a byte "
        f"copy of the trunk's; {found['flag']:.2f} ms spec/hcpkg/__init__.py the hook package "
        f"(both read and parsed): +{extra:.2f} ms for the convention "
        f"(target <= 5 ms) {'ok' if ok else 'OVER TARGET'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
