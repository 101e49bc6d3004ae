"""The README's first command: the demonstration runs and shows what it says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import clean_env

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.py"


def test_demo_shows_trunk_one_backend_and_a_stack():
    proc = subprocess.run(
        [sys.executable, str(DEMO)], env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    runs = proc.stdout.split("$ ")[1:]
    assert len(runs) == 3
    assert "driver.device()            = 'cpu (trunk)'" in runs[0]
    assert "spec('lower_op', 'mul')    = None" in runs[0]
    assert "third_party/vendor_a/backend/spec/minitriton/runtime/driver.py" in runs[1]
    assert "spec('lower_op', 'mul')    = 'vendor_a.mul'" in runs[1]
    assert "autotuner.configs()        = ['BLOCK=64 (vendor_b)']" in runs[2]
    assert "driver.device()            = 'vendor_a accelerator'" in runs[2]
