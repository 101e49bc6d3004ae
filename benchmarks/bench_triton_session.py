"""Benchmark: a long Triton session under ``flagtree-spec run`` against the same session plain.

    .venvs/bench/bin/python benchmarks/bench_triton_session.py [--rounds N] [--launches N]

Needs an interpreter with ``triton==3.9.0`` and the CPU build of
``torch==2.13.0`` installed (CPython 3.11); the kernels run in Triton's
interpreter (``TRITON_INTERPRET=1``), no GPU needed.  Without them it prints a
note and exits 0 (the other benchmarks do not need them).

Each round runs one program in three fresh interpreters, interleaved: plain
``python prog.py``, the same again (plain against plain shows how noisy the
machine is), and ``flagtree-spec run -b bench --root triton prog.py``
with backend ``bench`` (a generated spec root, found through
``FLAGTREE_SOURCE_ROOT``) whose overrides of seven Triton modules
(``runtime/jit.py``, ``runtime/interpreter.py``, ``runtime/autotuner.py``,
``language/core.py``, ``language/semantic.py``, ``language/standard.py``,
``compiler/compiler.py``, where present) only ``inherit(globals())``.  The
program launches a few hundred interpreter kernels (vector add, a row
softmax, a small blocked matmul, a reduction) on varying shapes, checks every
result against torch, and reports the time of its kernel loop and a digest of
the outputs.  The digests of both sides must be identical, and the run side
must have loaded the overrides.  Reported: the minima over the rounds of the
kernel loop's CPU time (the measure least disturbed by other load on a shared
machine), of its wall time and of the whole processes, with the medians.
Target: the kernel loop's CPU time at most 1.03x plain.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIBRARY = str(Path(__file__).resolve().parent.parent)
TARGET = 1.03

PROGRAM = r"""
import hashlib, json, sys, time
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + offs, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def sum_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))


def main(launches):
    torch.manual_seed(0)
    digest = hashlib.sha256()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(launches):
        kind = i % 4
        if kind == 0:
            n = 256 + 37 * (i % 11)
            x, y = torch.rand(n), torch.rand(n)
            out = torch.empty(n)
            add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
            assert torch.allclose(out, x + y)
        elif kind == 1:
            rows, cols = 4 + i % 5, 30 + i % 17
            x = torch.rand(rows, cols)
            out = torch.empty_like(x)
            softmax_kernel[(rows,)](out, x, x.stride(0), cols, BLOCK=64)
            assert torch.allclose(out, torch.softmax(x, dim=1), atol=1e-5)
        elif kind == 2:
            m, n, k = 16 + i % 9, 16 + i % 7, 32
            a, b = torch.rand(m, k), torch.rand(k, n)
            out = torch.empty(m, n)
            matmul_kernel[(triton.cdiv(m, 16), triton.cdiv(n, 16))](a, b, out, m, n, k,
                                                                    BM=16, BN=16, BK=16)
            assert torch.allclose(out, a @ b, atol=1e-4)
        else:
            n = 100 + i % 150
            x = torch.rand(n)
            out = torch.empty(1)
            sum_kernel[(1,)](x, out, n, BLOCK=256)
            assert torch.allclose(out, x.sum(), atol=1e-4)
        digest.update(out.numpy().tobytes())
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    import triton.runtime.jit as jit
    print(json.dumps({"loop": elapsed, "cpu": cpu, "digest": digest.hexdigest(),
                      "jit": jit.__spec__.origin}))


main(int(sys.argv[1]))
"""

OVERRIDES = (
    "runtime/jit.py",
    "runtime/interpreter.py",
    "runtime/autotuner.py",
    "language/core.py",
    "language/semantic.py",
    "language/standard.py",
    "compiler/compiler.py",
)


def spec_tree(repo: Path, trunk: Path) -> list[str]:
    """Write backend ``bench``'s spec root: inherit-only overrides of the modules above."""
    spec = repo / "third_party" / "bench" / "backend" / "spec" / "triton"
    made = []
    for rel in OVERRIDES:
        if not (trunk / rel).is_file():
            continue
        target = spec / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            '"""Inherit-only override (benchmark)."""\n'
            "from flagtree_spec import inherit\n\ninherit(globals())\n"
        )
        made.append(rel)
    return made


def _run(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return wall, out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--launches", type=int, default=300)
    args = parser.parse_args()
    try:
        import torch
        import triton
    except ImportError as exc:
        print(f"bench_triton_session: skipped, needs triton==3.9.0 and torch==2.13.0: {exc}")
        return 0
    print(
        f"triton {triton.__version__}, torch {torch.__version__}, Python {sys.version.split()[0]}"
    )
    trunk = Path(triton.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        made = spec_tree(work / "repo", trunk)
        prog = work / "prog.py"
        prog.write_text(PROGRAM)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGTREE_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["TRITON_INTERPRET"] = "1"
        # One thread per process: the two sides run side by side on a shared machine.
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
        env["PYTHONPATH"] = LIBRARY
        under = dict(env, FLAGTREE_SOURCE_ROOT=str(work / "repo"))
        run_prefix = ["-m", "flagtree_spec", "run", "-b", "bench", "--root", "triton"]
        plain_cmd = [sys.executable, str(prog), str(args.launches)]
        run_cmd = [sys.executable, *run_prefix, str(prog), str(args.launches)]
        # Warm the bytecode caches of both sides once.
        _run([sys.executable, str(prog), "4"], env, tmp)
        _run([sys.executable, *run_prefix, str(prog), "4"], under, tmp)
        sides: dict[str, dict[str, list[float]]] = {
            side: {"loop": [], "cpu": [], "wall": []} for side in ("plain", "run", "plain again")
        }
        digests = set()
        for _ in range(args.rounds):
            for side, cmd, side_env in (
                ("plain", plain_cmd, env),
                ("run", run_cmd, under),
                ("plain again", plain_cmd, env),
            ):
                wall, out = _run(cmd, side_env, tmp)
                sides[side]["wall"].append(wall)
                sides[side]["loop"].append(float(str(out["loop"])))
                sides[side]["cpu"].append(float(str(out["cpu"])))
                digests.add(str(out["digest"]))
                if side == "run" and "third_party" not in str(out["jit"]):
                    print(f"FAIL: the run side did not load the override: {out['jit']}")
                    return 1
        if len(digests) != 1:
            print(f"FAIL: the outputs differ between the two sides: {sorted(digests)}")
            return 1
        print(f"overrides (inherit only): {', '.join(made)}")
        print(f"{args.launches} kernel launches per process, {args.rounds} rounds, interleaved")
        ratios = {}
        for what, label in (
            ("cpu", "kernel loop, CPU time"),
            ("loop", "kernel loop, wall time"),
            ("wall", "whole process, wall"),
        ):
            plain, run = min(sides["plain"][what]), min(sides["run"][what])
            again = min(sides["plain again"][what])
            ratios[what] = run / plain
            print(
                f"{label:24} min plain {plain:7.3f} s  run {run:7.3f} s  ratio {run / plain:.3f}x"
                f"  (medians {statistics.median(sides['plain'][what]):.3f} / "
                f"{statistics.median(sides['run'][what]):.3f} s; plain against plain "
                f"{again / plain:.3f}x, the noise of this machine)"
            )
        ok = ratios["cpu"] <= TARGET
        print(f"target: kernel loop CPU time at most {TARGET}x plain: {'met' if ok else 'MISSED'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
