"""Run one small program under no backend, one backend, and a stack of two.

    python3 examples/demo.py

The program (``demo_program.py``) imports the trunk package ``minitriton``
from ``demo_repo/python``; the backends live in ``demo_repo/third_party``.
Nothing needs to be installed: the library is taken from this checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def run(backend: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "demo_repo", "python"), REPO])
    if backend:
        env["FLAGTREE_BACKEND"] = backend
    print(f"$ FLAGTREE_BACKEND={backend or '(unset)'} python demo_program.py")
    sys.stdout.flush()
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "demo_program.py")], env=env
    ).returncode


def main() -> int:
    for backend in ("", "vendor_a", "vendor_b,vendor_a"):
        code = run(backend)
        if code:
            return code
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
