"""Cost of ``lock`` and of FTS016 in ``check``, side by side with plain ``check``.

    python3 benchmarks/bench_lock.py

Generates the tree of ``bench_check.py`` (trunk packages of 20 modules, 15% of
them overridden), turns half of the overrides into ``inherit(globals())``
overrides that replace one function, locks it, upgrades a tenth of the
overridden trunk modules, then times in this process, interleaved in each
round and taking the minimum over rounds: reading and ``ast.parse``-ing every
file once, building the lock, and ``check`` without and with the lock file
(FTS016).  Twice: outside git (no blob ids: every counterpart is digested),
and in a git work tree, where a counterpart that keeps its locked blob id is
not digested again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_check import generate, parse_all

from flagtree_spec._tools.check.driver import check
from flagtree_spec._tools.model.model import load
from flagtree_spec._tools.upgrade import lock

ROUNDS = 5
INHERITING = """from flagtree_spec import inherit

inherit(globals())


def helper_{i}(x: int, y: int = 2) -> int:
    return x * y
"""


def inheriting(base: str) -> None:
    """Turn every second override into one that inherits and replaces helper_<i>."""
    mirror = os.path.join(base, "third_party", "vendor", "backend", "spec", "benchpkg")
    for n, (folder, _, names) in enumerate(sorted(os.walk(mirror))):
        for name in sorted(names):
            if name.startswith("m") and (n + len(name)) % 2:
                with open(os.path.join(folder, name), "w") as f:
                    f.write(INHERITING.format(i=name[1:-3]))


def upgrade(base: str) -> int:
    """Change helper_<i> in a tenth of the overridden trunk modules."""
    mirror = os.path.join(base, "third_party", "vendor", "backend", "spec", "benchpkg")
    trunk = os.path.join(base, "python", "benchpkg")
    changed = 0
    for n, (folder, _, names) in enumerate(sorted(os.walk(mirror))):
        for name in sorted(names):
            if (n + len(name)) % 10 == 0:
                path = os.path.join(trunk, os.path.relpath(folder, mirror), name)
                with open(path) as f:
                    text = f.read()
                with open(path, "w") as f:
                    f.write(text.replace("total = 0", "total = 1"))
                changed += 1
    return changed


def run_check(base: str) -> int:
    return len(check(load(repo=base, backends=["vendor"])))


def run_lock(base: str) -> int:
    model = load(repo=base, backends=["vendor"])
    return len(lock.build(model, lock.target(model))["overrides"])


def best(
    funcs: dict[str, Callable[[str], int]],
    base: str,
    setups: Optional[dict[str, Callable[[], None]]] = None,
) -> dict[str, float]:
    """The minimum time of each function over ROUNDS interleaved rounds."""
    times: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(ROUNDS):
        for name, func in funcs.items():
            if setups and name in setups:
                setups[name]()
            start = time.perf_counter()
            func(base)
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}


def git(base: str, *args: str) -> None:
    command = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args]
    subprocess.run(command, cwd=base, check=True, capture_output=True)


def measure(base: str, in_git: bool) -> tuple[dict[str, float], int]:
    generate(base, MODULES, MODULES * 3 // 20)
    inheriting(base)
    if in_git:
        git(base, "init", "-q", ".")
        git(base, "add", "-A")
        git(base, "commit", "-qm", "v1")
    model = load(repo=base, backends=["vendor"])
    spec_root = lock.target(model)
    lock.write(spec_root, lock.build(model, spec_root))
    upgrade(base)
    path = lock.lock_path(spec_root)
    aside = path + ".aside"
    drifted = sum(f.code == "FTS016" for f in check(load(repo=base, backends=["vendor"])))
    # check without and with the lock file in the same rounds: the lock is moved
    # aside and back between the timed calls.
    times = best(
        {"parse": parse_all, "lock": run_lock, "check": run_check, "check+FTS016": run_check},
        base,
        {"check": lambda: os.replace(path, aside), "check+FTS016": lambda: os.replace(aside, path)},
    )
    return times, drifted


MODULES = 2000


def main() -> None:
    print(f"{MODULES} trunk modules, {MODULES * 3 // 20} overrides (half inheriting)")
    for in_git in (False, True):
        with tempfile.TemporaryDirectory() as base:
            times, drifted = measure(base, in_git)
        parse = times["parse"]
        print("in a git work tree (lock records blob ids)" if in_git else "outside git")
        for name, seconds in times.items():
            print(f"  {name:<13} {seconds:7.3f} s  {seconds / parse:5.2f}x parse")
        ratio = times["check+FTS016"] / times["check"]
        print(
            f"  FTS016 findings after the upgrade: {drifted}; check with a lock / without: "
            f"{ratio:.2f}x"
        )


if __name__ == "__main__":
    main()
