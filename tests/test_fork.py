"""Forks while other threads are inside the library.

A fork copies the library's locks in whatever state they are; a lock held by
a thread that does not exist in the child would hang the child's first
``activate()`` for ever.  ``os.register_at_fork`` handlers (as :mod:`logging`
has) give the child fresh locks.  Fixture: fixtures/threads_repo, backends
``one`` and ``two`` of package ``thrpkg``.
"""

from __future__ import annotations

from conftest import FIXTURES, scenario

REPO = FIXTURES / "threads_repo"

FORK_UNDER_LOAD = """
import json, os, sys, threading, time, warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)  # 3.12+: fork with threads
sys.setswitchinterval(1e-6)
import flagtree_spec, thrpkg.runtime.jit

stop = threading.Event()


def churn(backend):
    while not stop.is_set():
        flagtree_spec.activate(backend)
        flagtree_spec.active("thrpkg")


threads = [threading.Thread(target=churn, args=(b,), daemon=True) for b in ("one", "two")]
for t in threads:
    t.start()
outcomes = []
for _ in range({children}):
    time.sleep(0.005)
    pid = os.fork()
    if pid == 0:  # the child: its first activate() must not wait for a thread it lacks
        try:
            flagtree_spec.activate("two")
            import thrpkg.language.core as core
            os._exit(0 if core.WHERE == "two" else 3)
        except BaseException:
            os._exit(4)
    deadline = time.monotonic() + 5
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            outcomes.append(os.waitstatus_to_exitcode(status)
                            if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            outcomes.append("hung")
            break
        time.sleep(0.01)
    if outcomes[-1] == "hung":
        break  # one is enough
stop.set()
for t in threads:
    t.join()
print(json.dumps(outcomes))
"""


def test_a_child_forked_while_threads_are_inside_activate_never_inherits_a_held_lock():
    out = scenario(
        FORK_UNDER_LOAD.format(children=20),
        path=[REPO / "python"],
        env={"FLAGTREE_BACKEND": "one", "FLAGTREE_SOURCE_ROOT": str(REPO)},
        timeout=120,
    )
    assert out == [0] * 20, out
