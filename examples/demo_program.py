"""The program that ``demo.py`` runs: it reports where each module came from."""

from __future__ import annotations

import os

import minitriton.compiler.codegen as codegen
import minitriton.language as tl
import minitriton.runtime.autotuner as autotuner
import minitriton.runtime.driver as driver

from flagtree_spec import active, spec

ROOT = os.path.dirname(os.path.abspath(__file__))


def where(module: object) -> str:
    return os.path.relpath(str(getattr(module, "__file__", "")), os.path.join(ROOT, "demo_repo"))


state = active("minitriton")
print(f"  backend stack : {','.join(state.backends) or 'none'} ({state.source})")
for module in (driver, autotuner, codegen):
    print(f"  {module.__name__:28} <- {where(module)}")
print(f"  driver.device()            = {driver.device()!r}")
print(f"  autotuner.configs()        = {autotuner.configs()!r}")
print(f"  codegen.emit('add')        = {codegen.emit('add')!r}")
print(f"  spec('lower_op', 'mul')    = {spec('lower_op', 'mul')!r}")
fused = getattr(tl, "fused_axpy", None)
print(
    f"  tl.fused_axpy              = {'added by backend' if fused else 'absent'}"
    + (f", fused_axpy(2, [1, 2], [10, 20]) = {fused(2, [1, 2], [10, 20])}" if fused else "")
)
