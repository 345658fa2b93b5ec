"""Session 22: the GEMV kernel reading a misaligned N-major B in shifted 16-byte windows (gemm_kernels.gemv_kernel's
SHIFT) against reading it as it is (SHIFT 1: 4-byte loads in fp32, 2-byte in 16 bits), the tensor-core tiles and
cuBLAS, in GPU time (CUDA-graph replay), every output checked against an fp32 product with the tolerance table.

Shapes: the hunts' decode rows against a row-major weight whose rows are not 16-byte aligned (seed 13's worst GEMM,
fp32 2x1041x12427 bias_gelu at 0.59x cuBLAS), 16-bit rows of session 18's pipelined-GEMV draws, 4-16 fp32 rows the
IEEE tiles run now, and aligned controls (the speed a vector read of the same size gets). --seed draws fresh
misaligned shapes instead (the rule's check on rows it was not made from).

    PYTHONPATH=.:benchmarks python benchmarks/gemv_shift_probe.py --json shift.json
    PYTHONPATH=.:benchmarks python benchmarks/gemv_shift_probe.py --seed 5 --json verify.json
    PYTHONPATH=.:benchmarks python benchmarks/gemv_shift_probe.py --seed 6 --fp32 --json verify6.json  (the rule)

"old" in the summary: what gemm(kernel="auto") ran before the windows (the GEMV reading B as it is up to 3 rows,
the tiles from 4).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.aligned_copy import misaligned
from rocm_triton_doctor.kernels.tolerances import tolerance

F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
# (M, K, N, dtype, epilogue), B row-major (K, N)
SHAPES: list[tuple[int, int, int, torch.dtype, str]] = [
    (2, 1041, 12427, F32, "bias_gelu"), (1, 4096, 4097, F32, "none"), (3, 1346, 31141, F32, "bias_relu"),
    (1, 9693, 307, F32, "none"), (2, 4096, 14335, F32, "none"), (1, 768, 50257, F32, "none"),
    (4, 171, 1914, F32, "none"), (4, 6000, 1999, F32, "none"), (8, 1629, 30833, F32, "none"),
    (8, 4096, 14335, F32, "none"), (15, 12643, 193, F32, "none"),
    (1, 832, 27011, BF16, "none"), (2, 4096, 4097, BF16, "none"), (3, 15605, 9269, BF16, "none"),
    (4, 2048, 5001, F16, "none"), (7, 8439, 15427, BF16, "none"), (2, 301, 765, F16, "none"),
    (2, 147, 24173, BF16, "none"), (8, 4096, 14335, BF16, "bias"), (1, 7161, 22449, BF16, "none"),
    # aligned controls: the same reads with 16-byte rows
    (2, 1041, 12428, F32, "bias_gelu"), (1, 4096, 4096, F32, "none"), (2, 4096, 4096, BF16, "none"),
]


def draws(seed: int, fp32: bool = False) -> list[tuple[int, int, int, torch.dtype, str]]:
    """Fresh misaligned N-major decode shapes: 1-16 rows, K 64-16384, N odd or 2 mod 4, fp32 and 16-bit; with
    `fp32`, fp32 only with 1-4 rows (where the policy shifts: --verify)."""
    r = random.Random(seed)

    def lu(lo: int, hi: int) -> int:
        return int(round(math.exp(r.uniform(math.log(lo), math.log(hi)))))

    out = []
    for i in range(20 if not fp32 else 24):
        n = lu(129, 40000)
        n = n | 1 if r.random() < 0.7 else n // 4 * 4 + 2
        m = r.randint(1, 4) if fp32 else lu(1, 16 if i % 2 else 4)
        out.append((m, lu(64, 16384), n, F32 if fp32 else (F32, BF16, F16)[i % 3], r.choice(("none", "bias"))))
    return out


def forms(t: policy.Target, M: int, N: int, K: int, dt: torch.dtype, cus: int) -> dict[str, tuple[str, Any]]:
    base = dict(policy.gemv_config(t, M, N, K, dt.itemsize, False, cus))
    shift = 16 // dt.itemsize
    out: dict[str, tuple[str, Any]] = {"tiles": ("pointer", None), "gemv": ("gemv", {**base, "SHIFT": 1}),
                                       "shift": ("gemv", {**base, "SHIFT": shift}),
                                       "shift S1": ("gemv", {**base, "SHIFT": shift, "STAGES": 1})}
    if base["SPLIT_K"] > 1:
        out["shift split/2"] = ("gemv", {**base, "SHIFT": shift, "SPLIT_K": base["SPLIT_K"] // 2})
    if base["SPLIT_K"] * 2 * shift <= 64 and base["SPLIT_K"] * 2 * base["BLOCK_K"] * 4 <= K:
        out["shift split*2"] = ("gemv", {**base, "SHIFT": shift, "SPLIT_K": base["SPLIT_K"] * 2})
    if base["BLOCK_K"] < shift:  # the policy's tile is too shallow for the windows: twice as deep, half as wide
        out["shift"] = ("gemv", {**base, "SHIFT": shift, "BLOCK_K": shift,
                                 "BLOCK_N": max(16, base["BLOCK_N"] * base["BLOCK_K"] // shift)})
        out.pop("shift S1")
    else:
        out["shift bk*2"] = ("gemv", {**base, "SHIFT": shift, "BLOCK_K": base["BLOCK_K"] * 2})
    out["auto"] = ("auto", None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=None, help="fresh random draws instead of SHAPES")
    ap.add_argument("--fp32", action="store_true", help="with --seed: fp32 draws of 1-4 rows only")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)}, {cus} SMs, torch {torch.__version__}", flush=True)
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    for M, K, N, dt, epi in (draws(args.seed, args.fp32) if args.seed is not None else SHAPES):
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = torch.randn(K, N, device=dev, dtype=dt, generator=g) / K**0.5
        bias = torch.randn(N, device=dev, dtype=dt, generator=g) if epi != "none" else None
        ref = gemm.reference(a, b, bias, epi)
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N} {epi}"
        t_blas = float(do_bench_cudagraph(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=30))
        takes = policy.gemv_takes(t, M, dt.itemsize, not misaligned(b), False, K, N)
        row: dict[str, Any] = {"name": name, "cublas_ms": t_blas, "misaligned": misaligned(b),
                               "auto_kernel": "gemv" if takes else "tiles"}
        for label, (kern, cfg) in forms(t, M, N, K, dt, cus).items():
            try:
                y = gemm.gemm(a, b, bias, epi, kernel=kern, config=cfg)
                excess = float(((y.double() - ref.double()).abs() - (tol.atol + tol.rtol * ref.double().abs())).max())
                ms = float(do_bench_cudagraph(lambda kern=kern, cfg=cfg: gemm.gemm(a, b, bias, epi, kernel=kern,
                                                                                    config=cfg), rep=30))
                row[label] = {"ms": ms, "x": t_blas / ms, "ok": excess <= 0, "excess": excess, "config": cfg}
            except Exception as exc:  # noqa: BLE001 - a probe records what failed and goes on
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        rows.append(row)
        print(f"{name:34s} cuBLAS {t_blas * 1e3:7.1f} us | " + " | ".join(
            f"{k} {v['x']:.2f}{'' if v['ok'] else ' WRONG'}" if "x" in v else f"{k} ERR {v['error'][:50]}"
            for k, v in row.items() if isinstance(v, dict)), flush=True)
    wrong = sum(1 for r in rows for v in r.values() if isinstance(v, dict) and v.get("ok") is False)
    print(f"\n{len(rows)} shapes, {wrong} wrong outputs")
    print("shape | cuBLAS us | tiles x | gemv x | shift x | best shift variant | auto (takes) x | old x")
    for r in rows:
        sv = {k: v for k, v in r.items() if k.startswith("shift") and isinstance(v, dict) and "x" in v}
        best = max(sv, key=lambda k: sv[k]["x"]) if sv else "-"

        def x(k: str, r: dict[str, Any] = r) -> str:
            v = r.get(k, {})
            return f"{v['x']:.2f}" if "x" in v else "-"
        print(f"{r['name']} | {r['cublas_ms'] * 1e3:.1f} | {x('tiles')} | {x('gemv')} | {x('shift')} | {best} "
              f"{sv.get(best, {}).get('x', float('nan')):.2f} | {x('auto')} ({r['auto_kernel']}) | "
              f"{x('gemv') if int(r['name'].split()[1].split('x')[0]) <= 3 else x('tiles')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "seed": args.seed,
                       "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
