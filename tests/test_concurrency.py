"""Concurrency: first imports, first hook calls and activate() under threads.

Fixture: fixtures/threads_repo.  Package ``thrpkg`` is specialised by backend
``one`` (source layout, hook module under a private name, overrides
``runtime/jit.py``) and backend ``two`` (installed layout, hook module
``thrpkg.backends.two.spec``, overrides ``language/core.py``).  Every module of
the tree appends its name to ``sys._thr_runs`` when it is executed, so a
module executed twice shows up twice.

Each repetition is a fresh interpreter (the thing under test is the first
import and the first ``spec()`` of a process); the interpreters run a few at
a time to use both cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from conftest import FIXTURES, LIBRARY, NEUTRAL, clean_env

REPO = FIXTURES / "threads_repo"
TRUNK = REPO / "python" / "thrpkg"
ONE = REPO / "third_party" / "one" / "backend" / "spec"
TWO = TRUNK / "backends" / "two" / "spec"

RUNS = 200
THREADS = 16
PARALLEL = 4

# Every module of the fixture tree that a full run executes, once each.
EXECUTED = sorted(
    [
        "thrpkg",
        "thrpkg.runtime",
        "thrpkg.runtime.jit",
        "thrpkg.language",
        "thrpkg.language.core",
        "thrpkg.backends.two.spec",
        "flagtree_spec._hooks.one_*",
    ]
)

FIRST_USE = """
import json, sys, threading
sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
from flagtree_spec import spec

N, PRELOAD = {threads}, {preload}
if PRELOAD:  # the packages exist already: only the first spec() races
    import thrpkg.runtime.jit, thrpkg.language.core
barrier = threading.Barrier(N)
results, errors = [None] * N, []

def paths():
    return {{name: list(m.__path__) for name, m in list(sys.modules.items())
             if name.startswith("thrpkg") and isinstance(getattr(m, "__path__", None), list)}}

def work(i):
    try:
        barrier.wait()
        import thrpkg.runtime.jit as jit, thrpkg.language.core as core
        results[i] = [jit.WHERE, core.WHERE, spec("where"), spec("only_two"), paths()]
    except BaseException as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=work, args=(i,)) for i in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join()
runs = sorted("flagtree_spec._hooks.one_*" if n.startswith("flagtree_spec._hooks.one_") else n
              for n in sys._thr_runs)
distinct = sorted({{json.dumps(r, sort_keys=True) for r in results}})
print(json.dumps({{"runs": runs, "errors": errors, "results": distinct, "final": paths()}}))
"""


def run_many(
    scripts: Sequence[str],
    env: Mapping[str, str],
    path: Sequence[os.PathLike[str] | str] = (REPO / "python",),
) -> list[Any]:
    """Run each script in its own fresh interpreter, PARALLEL at a time; return their JSON.

    A run that has not ended after 60 seconds is killed and fails the test (a hang).
    """
    full_env = clean_env(env)
    full_env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in path), LIBRARY])
    results: list[Any] = [None] * len(scripts)
    running: list[tuple[int, subprocess.Popen[str]]] = []

    def reap(index: int, proc: subprocess.Popen[str]) -> None:
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"run {index}: still running after 60 s (a hang)\n{err}") from None
        assert proc.returncode == 0, f"run {index}: exit code {proc.returncode}\n{err}"
        results[index] = json.loads(out.strip().splitlines()[-1])

    for index, script in enumerate(scripts):
        if len(running) >= PARALLEL:
            reap(*running.pop(0))
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", script],  # -S: no site, a faster start
            env=full_env,
            cwd=NEUTRAL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        running.append((index, proc))
    for index, proc in running:
        reap(index, proc)
    return results


def expected_paths() -> dict[str, list[str]]:
    return {
        "thrpkg": [str(ONE / "thrpkg"), str(TWO / "thrpkg"), str(TRUNK)],
        "thrpkg.runtime": [str(ONE / "thrpkg" / "runtime"), str(TRUNK / "runtime")],
        "thrpkg.language": [str(TWO / "thrpkg" / "language"), str(TRUNK / "language")],
    }


def test_hook_module_executed_once_under_16_threads_in_200_fresh_interpreters():
    scripts = [
        textwrap.dedent(FIRST_USE.format(threads=THREADS, preload=i % 2)) for i in range(RUNS)
    ]
    outcomes = run_many(scripts, {"FLAGTREE_BACKEND": "one,two"})
    want = ["one", "two", "one", "two"]
    for index, out in enumerate(outcomes):
        assert out["errors"] == [], f"run {index}"
        # Each module, hook modules included, executed exactly once.
        assert out["runs"] == EXECUTED, f"run {index}"
        # Every thread saw the overrides, the hooks and complete paths.
        [only] = out["results"]
        result = json.loads(only)
        assert result[:4] == want, f"run {index}"
        for name, path in {**result[4], **out["final"]}.items():
            assert len(path) == len(set(path)), f"run {index}: duplicate in {name}: {path}"
        assert {k: v for k, v in out["final"].items() if k in expected_paths()} == (
            expected_paths()
        )


SWITCH = """
import json, sys, threading
sys.setswitchinterval(1e-5)
import thrpkg.runtime as runtime, thrpkg.language as language
from flagtree_spec import activate, spec, spec_func

activate("one")
spec("where")
stop = threading.Event()
seen, errors = set(), []

def read():
    local = set()
    while not stop.is_set():
        try:
            func = spec_func("where")
            local.add(("where", spec("where")))
            local.add(("only_two", spec("only_two")))
            local.add(("func", func.__module__, func()))
            local.add(("runtime", tuple(runtime.__path__)))
            local.add(("language", tuple(language.__path__)))
        except BaseException as exc:
            errors.append(repr(exc))
            return
    seen.update(local)

readers = [threading.Thread(target=read) for _ in range(8)]
for t in readers:
    t.start()
for k in range({switches}):
    activate("two" if k % 2 == 0 else "one")
stop.set()
for t in readers:
    t.join()
runs = sorted("flagtree_spec._hooks.one_*" if n.startswith("flagtree_spec._hooks.one_") else n
              for n in sys._thr_runs)
print(json.dumps({{"seen": sorted(map(list, seen), key=repr), "errors": errors, "runs": runs,
                  "last": [spec("where"), list(runtime.__path__), list(language.__path__)]}}))
"""


def test_activate_switching_while_threads_call_spec_gives_old_or_new_state_never_a_mix():
    switches = 101  # odd: the last activation is "two"
    outcomes = run_many([textwrap.dedent(SWITCH.format(switches=switches))] * 6, {})
    runtime_one = [str(ONE / "thrpkg" / "runtime"), str(TRUNK / "runtime")]
    language_two = [str(TWO / "thrpkg" / "language"), str(TRUNK / "language")]
    allowed = {
        # each call gives the answer of "one" or of "two"
        ("where", "one"),
        ("where", "two"),
        ("only_two", None),
        ("only_two", "two"),
        ("func", "flagtree_spec._hooks.one_*", "one"),
        ("func", "thrpkg.backends.two.spec", "two"),
        ("runtime", tuple(runtime_one)),
        ("runtime", (str(TRUNK / "runtime"),)),
        ("language", (str(TRUNK / "language"),)),
        ("language", tuple(language_two)),
    }
    calls: set[tuple[Any, ...]] = set()
    for index, out in enumerate(outcomes):
        assert out["errors"] == [], f"run {index}"
        seen = set()
        for kind, *rest in out["seen"]:
            if kind == "func" and rest[0].startswith("flagtree_spec._hooks.one_"):
                rest[0] = "flagtree_spec._hooks.one_*"
            seen.add((kind, *(tuple(r) if isinstance(r, list) else r for r in rest)))
        assert seen <= allowed, f"run {index}: {sorted(seen - allowed, key=str)}"
        calls.update(item for item in seen if item[0] == "where")
        # The hook modules were still executed once each, however often the state switched.
        assert out["runs"] == sorted(
            [
                "thrpkg",
                "thrpkg.runtime",
                "thrpkg.language",
                "thrpkg.backends.two.spec",
                "flagtree_spec._hooks.one_*",
            ]
        ), f"run {index}"
        assert out["last"] == ["two", [str(TRUNK / "runtime")], language_two], f"run {index}"
    # The readers really ran while the state switched: they saw both states.
    assert calls == {("where", "one"), ("where", "two")}


# ----------------------------------------------------------------------------- no deadlock
#
# Fixture: fixtures/stress_repo.  ``autopkg`` (site/) is an unmodified trunk of 24
# sub-packages specialised by auto mode; ``decpkg`` (repo/python) calls spec_path() and
# its backend has a declaration, so its first spec_path() is the process's first
# ``import json``.  Every thread starts at once; each interpreter is bounded: a thread
# still alive after 20 s dumps every stack and exits 3.

STRESS = FIXTURES / "stress_repo"
STRESS_RUNS = 40

DEADLOCK = """
import faulthandler, os, sys, threading, time
sys.setswitchinterval(1e-6)
from flagtree_spec import activate, install

VARIANT = {variant}
install("autopkg")
barrier = threading.Barrier(4)
seen, errors = {{}}, []

def guarded(work):
    def run():
        try:
            barrier.wait()
            work()
        except BaseException as exc:
            errors.append(repr(exc))
    return run

def auto_imports():
    import importlib
    for i in range(24):
        seen[f"autopkg.p{{i}}.m"] = importlib.import_module(f"autopkg.p{{i}}.m").WHERE

def first_spec_path():
    import decpkg.m
    seen["decpkg.m"] = decpkg.m.WHERE

def activates():
    for _ in range(3):
        activate("one")

def first_stdlib_imports():
    import email.utils, decimal, zipfile  # first imports of modules nobody holds yet

works = [auto_imports, first_spec_path, activates, first_stdlib_imports]
if VARIANT % 2:
    works.reverse()
threads = [threading.Thread(target=guarded(w), daemon=True) for w in works]
for t in threads:
    t.start()
deadline = time.monotonic() + 20
for t in threads:
    t.join(max(0.0, deadline - time.monotonic()))
if any(t.is_alive() for t in threads):
    sys.stderr.write("HANG\\n")
    faulthandler.dump_traceback(all_threads=True)
    os._exit(3)
import json
print(json.dumps({{"seen": seen, "errors": errors}}))
"""


def test_no_deadlock_auto_mode_first_spec_path_activate_and_first_imports_in_threads():
    """The library's lock is never held across an import, nor waited on by the finder.

    Auto mode imports sub-packages in one thread (its meta path finder runs while the
    import system holds its lock) while another thread's first spec_path() reads a
    declaration (the first ``import json``), a third calls activate() (which invalidates
    the import caches: on 3.13 that imports importlib.metadata) and a fourth makes first
    imports of its own.
    """
    scripts = [textwrap.dedent(DEADLOCK.format(variant=i)) for i in range(STRESS_RUNS)]
    outcomes = run_many(
        scripts, {"FLAGTREE_BACKEND": "one"}, path=(STRESS / "site", STRESS / "repo" / "python")
    )
    want = {f"autopkg.p{i}.m": "one" for i in range(24)}
    want["decpkg.m"] = "one"
    for index, out in enumerate(outcomes):
        assert out == {"seen": want, "errors": []}, f"run {index}"
