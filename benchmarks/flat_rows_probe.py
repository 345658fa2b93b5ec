"""Session 27: a flat form of softmax, RMSNorm and LayerNorm (the prototype kernels below) on narrow rows whose width
is not a multiple of 16 bytes.

Seeded random shapes (an op, a dtype, a width of 3-511 off 16-byte multiples, a tensor of 1 MiB - 1 GiB), or with
--fixed the hunts' (seeds 18-21) narrow rows of 64 MiB and more under 85 % of copy. Each against the plain kernels at
the policy's config ("plain", forced through config=), the policy ("auto"), the flat form at several tile sizes
(fLANESwWARPS: R rows of W lanes, R·W = LANES; the session's run had the flat form in the policy as "auto", at
f2048w4), eager torch and Liger-Kernel. GPU time (CUDA-graph replay), each output checked against an fp64 reference
first; host µs per call (no graphs) for plain, auto and eager on the small shapes.

    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/flat_rows_probe.py --seed 1 --count 24 --json f.json
    PYTHONPATH=/tmp/site:.:benchmarks python benchmarks/flat_rows_probe.py --fixed --json f.json

The flat form (prototype kernels below: R rows of a contiguous x as one stretch of R·N elements read and written in
whole 16-byte vectors, laid out as the (R, W) tile the row math needs by tl.gather through shared memory) lost to the
plain kernels on 19 of the 21 fixed rows on an H200, at its best tiling of four (docs/measurements/2026-11-29-h200-
s27-flat-fixed.json, µs plain -> flat: RMSNorm fp16 552429x36 25.5 -> 86.0, softmax fp16 209653x215 66.6 -> 138.1,
LayerNorm fp16 458059x150 104.0 -> 339.4); it tied softmax bf16 6367216x3 and won softmax bf16 49053079x9 by 7 %.
The two gathers cost more than the scalar loads and stores they replace. It was taken out of the product; the
kernels stay here with the measurement.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.rows_split import LOG2E
from window_rows_probe import announce, baseline_fns, checked_times, report, row_inputs, summarise

DTYPES = (torch.bfloat16, torch.float16, torch.float32)
BF, FP, F32 = torch.bfloat16, torch.float16, torch.float32
# The hunts' narrow rows (seeds 18-21, docs/measurements/2026-11-2[89]-h200-s2[456]-hunt*.json) of 64 MiB and more
# under 85 % of copy whose width is not a multiple of 16 bytes.
FIXED = [("rmsnorm", FP, 9780223, 23), ("layernorm", BF, 4012566, 5), ("softmax", BF, 6367216, 3),
         ("rmsnorm", FP, 552429, 36), ("rmsnorm", F32, 19238098, 7), ("layernorm", F32, 331663, 401),
         ("layernorm", FP, 1080301, 247), ("rmsnorm", BF, 7039531, 3), ("rmsnorm", BF, 3058421, 54),
         ("softmax", BF, 49053079, 9), ("rmsnorm", F32, 20349958, 5), ("rmsnorm", BF, 3610961, 13),
         ("softmax", FP, 1047799, 207), ("layernorm", F32, 71417, 174), ("layernorm", F32, 1447933, 13),
         ("layernorm", F32, 10044712, 5), ("softmax", F32, 777319, 19), ("softmax", FP, 209653, 215),
         ("layernorm", FP, 458059, 150), ("softmax", BF, 64322598, 3), ("softmax", BF, 8192, 197)]
VARIANTS = ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8))


@triton.jit
def flat_load(x_ptr, M, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    """This program's rows of x (rows of N, contiguous) as an (R, W) tile of the values as stored (0 in lanes past a
    row and in rows past M), with: the lanes that hold the rows' elements, the row indices, which rows exist, and
    (start, full, n) for flat_store: the stretch's offset, whether the program holds R rows, its element count."""
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * R * N
    j = tl.arange(0, P)
    n = tl.minimum(M - pid * R, R) * N
    full = n == R * N
    if full:
        f = tl.load(x_ptr + start + j, mask=j < R * N, other=0.0)  # j < R·N: constant over V lanes, so vectors
    else:
        f = tl.load(x_ptr + start + j, mask=j < n, other=0.0)
    r = tl.arange(0, R)
    c = tl.arange(0, W)[None, :]
    inrow = (c < N) & (r[:, None] < R)
    tile = tl.gather(f, tl.reshape(tl.where(inrow, r[:, None] * N + c, 0), (R * W,)), 0)
    rows = pid.to(tl.int64) * R + r
    return tl.reshape(tile, (R, W)), inrow, rows, rows < M, start, full, n


@triton.jit
def flat_store(out_ptr, y, start, full, n, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    """The (R, W) tile y (lanes past a row are not stored) back into the output's stretch at start: n elements,
    in whole vectors when the program is full."""
    j = tl.arange(0, P)
    row = j // N
    back = tl.where(j < R * N, row * W + (j - row * N), 0)
    v = tl.gather(tl.reshape(y.to(out_ptr.dtype.element_ty), (R * W,)), back, 0)
    if full:
        tl.store(out_ptr + start + j, v, mask=j < R * N)
    else:
        tl.store(out_ptr + start + j, v, mask=j < n)


@triton.jit
def flat_param(p_ptr, sp, N, W: tl.constexpr):
    """A per-column parameter (stride sp) as a (1, W) row, fp32, 0 past N."""
    c = tl.arange(0, W)
    return tl.load(p_ptr + c.to(tl.int64) * sp, mask=c < N, other=0.0).to(tl.float32)[None, :]


@triton.jit
def softmax_flat_kernel(x_ptr, out_ptr, M, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    # R rows a program from one flat stretch (rows_flat.py); the math of softmax_kernel's single block.
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
    e = tl.exp2((x - tl.max(x, axis=1)[:, None]) * LOG2E)
    inv = 1.0 / tl.sum(e, axis=1)
    flat_store(out_ptr, e * inv[:, None], start, full, n, N, R, W, P)


@triton.jit
def rmsnorm_flat_kernel(x_ptr, w_ptr, out_ptr, M, N, sw, eps, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr,
                        rstd_ptr=None, STATS: tl.constexpr = False):
    # R rows a program from one flat stretch (rows_flat.py); the math of rmsnorm_kernel's single block.
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = tl.where(inrow, raw.to(tl.float32), 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    if STATS:
        tl.store(rstd_ptr + rows, rstd, mask=rmask)
    flat_store(out_ptr, x * rstd[:, None] * flat_param(w_ptr, sw, N, W), start, full, n, N, R, W, P)


@triton.jit
def layernorm_flat_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, sw, sb, eps, R: tl.constexpr, W: tl.constexpr,
                          P: tl.constexpr, mean_ptr=None, rstd_ptr=None, STATS: tl.constexpr = False):
    # R rows a program from one flat stretch (rows_flat.py); the math of layernorm_kernel's single block, its
    # statistics of x minus the row's first element (within 2^60; layernorm.py says why).
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = raw.to(tl.float32)
    first = tl.sum(tl.where(tl.arange(0, W)[None, :] == 0, x, 0.0), axis=1)
    shift = tl.where(tl.abs(first) < 1.152921504606847e18, first, 0.0)
    x = tl.where(inrow, x - shift[:, None], 0.0)
    mean = tl.sum(x, axis=1) / N
    d = tl.where(inrow, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
    if STATS:
        tl.store(mean_ptr + rows, mean + shift, mask=rmask)
        tl.store(rstd_ptr + rows, rstd, mask=rmask)
    y = d * rstd[:, None] * flat_param(w_ptr, sw, N, W) + flat_param(b_ptr, sb, N, W)
    flat_store(out_ptr, y, start, full, n, N, R, W, P)


def flat(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, rows: int, warps: int) -> torch.Tensor:
    """The flat form of op with `rows` rows a program (a power of two, at least 8) and `warps` warps."""
    M, N = x.shape
    R, W = rows, triton.next_power_of_2(N)
    P = triton.next_power_of_2(R * N)
    out = torch.empty_like(x)
    grid = (triton.cdiv(M, R),)
    if op == "softmax":
        softmax_flat_kernel[grid](x, out, M, N, R=R, W=W, P=P, num_warps=warps)
    elif op == "rmsnorm":
        rmsnorm_flat_kernel[grid](x, w, out, M, N, w.stride(0), 1e-6, R=R, W=W, P=P, num_warps=warps)
    else:
        layernorm_flat_kernel[grid](x, w, b, out, M, N, w.stride(0), b.stride(0), 1e-5, R=R, W=W, P=P,
                                    num_warps=warps)
    return out


def draw(r: random.Random) -> tuple[str, torch.dtype, int, int]:
    op = r.choice(("softmax", "rmsnorm", "layernorm"))
    dt = r.choice(DTYPES)
    n = 0
    while n * dt.itemsize % 16 == 0:
        n = int(round(math.exp(r.uniform(math.log(3), math.log(511)))))
    total = int(math.exp(r.uniform(math.log(1 << 20), math.log(1 << 30)))) // dt.itemsize
    return op, dt, max(1, total // n), n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--fixed", action="store_true", help="the hunts' narrow rows instead of random draws")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    copy_gbps = announce(dev)
    r = random.Random(args.seed)
    shapes = FIXED if args.fixed else [draw(r) for _ in range(args.count)]
    rows: list[dict[str, Any]] = []
    for op, dt, m, n in shapes:
        x, w, b, plain = row_inputs(t, dt, m, n, dev)
        fns = baseline_fns(op, x, w, b, plain)
        for lanes, warps in VARIANTS:
            rows_ = max(8, lanes // triton.next_power_of_2(n))
            fns[f"f{lanes}w{warps}"] = lambda r_=rows_, w_=warps: flat(op, x, w, b, r_, w_)
        row = checked_times(op, x, w, b, fns)
        summarise(row, x, fns, copy_gbps, "best_flat", lambda k: k.startswith("f") or k == "auto", 16)
        rows.append(row)
    report(rows, "best_flat", args.json, copy_gbps, None if args.fixed else args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
