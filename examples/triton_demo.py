"""Run real Triton kernels on the CPU and say what the active backend changed.

With the example backend (``triton_backend/``), under auto mode::

    FLAGTREE_SPEC_PATH=examples/triton_backend \\
        python -m flagtree_spec run --root triton examples/triton_demo.py

and without it (plain trunk Triton)::

    python examples/triton_demo.py

It needs ``torch`` and ``triton`` (``pip install ".[triton]"`` in this repository)
and no GPU: ``TRITON_INTERPRET=1`` runs the kernels through the interpreter.
``--json`` prints one JSON document instead of text (the integration test
reads it).
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")  # must be set before triton is imported

import torch
import triton
import triton.language as tl
import triton.language.random as tl_random
import triton.language.standard as standard
import triton.runtime.cache as cache

N = 1000  # not a multiple of BLOCK: the masks matter
BLOCK = 256


@triton.jit
def axpy_kernel(a, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.fused_axpy(a, x, y), mask=mask)  # the backend's primitive


@triton.jit
def sigmoid_kernel(x_ptr, fn_ptr, member_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(fn_ptr + offs, tl.sigmoid(x), mask=mask)  # the function ...
    tl.store(member_ptr + offs, x.sigmoid(), mask=mask)  # ... and the tensor member


@triton.jit
def softmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.softmax(tl.load(x_ptr + offs)))  # trunk code, in every case


@triton.jit
def rand_kernel(seed, rand_ptr, int_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(rand_ptr + offs, tl.rand(seed, offs), mask=mask)  # trunk rand() ...
    tl.store(int_ptr + offs, tl.randint(seed, offs), mask=mask)  # ... and the integers it converts


def uniform_24_bits(ints: torch.Tensor) -> torch.Tensor:
    """The backend's conversion: the top 24 bits of each 32-bit integer, times 2**-24."""
    return ((ints.to(torch.int64) & 0xFFFFFFFF) >> 8).double() * 2.0**-24


def uniform_31_bits(ints: torch.Tensor) -> torch.Tensor:
    """The trunk's conversion: fold the sign of the int32, scale by about 2**-31."""
    return (torch.where(ints < 0, ~ints, ints).float() * 4.6566127342e-10).double()


def max_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


def main() -> dict[str, object]:
    torch.manual_seed(0)
    grid = (triton.cdiv(N, BLOCK),)
    x = torch.linspace(-8.0, 8.0, N)
    y = torch.randn(N)
    a = 2.5
    report: dict[str, object] = {
        "standard_file": standard.__spec__.origin,  # __file__ is the trunk file it inherits
        "standard_inherits": getattr(standard, "__inherits__", None),
        "language_file": tl.__spec__.origin,
        "random_file": tl_random.__spec__.origin,
        "cache_file": cache.__spec__.origin,
        "cache_dunder_file": cache.__file__,
        "fused_axpy_in_language": hasattr(tl, "fused_axpy"),
        "fused_axpy_exported": "fused_axpy" in tl.__all__,
    }

    out = torch.full((N,), float("nan"))
    try:
        axpy_kernel[grid](a, x, y, out, N, BLOCK=BLOCK)
    except Exception as exc:  # without the backend the primitive does not exist
        report["axpy_error"] = f"{type(exc).__name__}: {exc}"
    else:
        report["axpy_error"] = None
        report["axpy_max_error"] = max_error(out, a * x + y)

    fn_out, member_out = torch.empty(N), torch.empty(N)
    sigmoid_kernel[grid](x, fn_out, member_out, N, BLOCK=BLOCK)
    for name, result in (("fn", fn_out), ("member", member_out)):
        report[f"sigmoid_{name}_vs_exact"] = max_error(result, torch.sigmoid(x))
        report[f"sigmoid_{name}_vs_hard"] = max_error(result, torch.nn.functional.hardsigmoid(x))

    row = torch.randn(64)
    softmax_out = torch.empty(64)
    softmax_kernel[(1,)](row, softmax_out, BLOCK=64)
    report["softmax_max_error"] = max_error(softmax_out, torch.softmax(row, 0))

    uniform, ints = torch.empty(N), torch.empty(N, dtype=torch.int32)
    rand_kernel[grid](1234, uniform, ints, N, BLOCK=BLOCK)
    report["rand_vs_24_bits"] = max_error(uniform, uniform_24_bits(ints))
    report["rand_vs_31_bits"] = max_error(uniform, uniform_31_bits(ints))

    # The key of Triton's compilation cache (trunk's triton_key() reads files next to
    # its own __file__, so this also shows that an inheriting override keeps it working).
    report["triton_key"] = cache.triton_key()
    return report


if __name__ == "__main__":
    report = main()
    if "--json" in sys.argv[1:]:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            if isinstance(value, str) and len(value) > 100:  # the cache key is long
                value = f"{value[:40]}...{value[-40:]}"
            print(f"{key:26} {value}")
