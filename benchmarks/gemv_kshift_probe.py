"""Session 25: the GEMV against a misaligned K-major weight (nn.Linear's, K not a whole number of 16-byte vectors)
read in whole vectors by residue class of columns (gemv_kshift.gemv_kshift_kernel) against gemv_kernel reading it as
it is (2-byte loads in 16 bits, 4-byte in fp32), the tensor-core tiles and cuBLAS, in GPU time (CUDA-graph replay),
every output checked against an fp32 product with the tolerance table.

Shapes: the hunts' worst rows against such weights (bf16 4x3813x27698 B^T, fp32 50x37x2248 B^T, ...), aligned
controls, and with --seed fresh draws of 1-96 rows (the rule's check on rows it was not made from). MxKxN; B = W^T
for W (N, K) contiguous.

    PYTHONPATH=.:benchmarks python benchmarks/gemv_kshift_probe.py --json kshift.json
    PYTHONPATH=.:benchmarks python benchmarks/gemv_kshift_probe.py --seed 7 --json verify7.json
    PYTHONPATH=.:benchmarks python benchmarks/gemv_kshift_probe.py --small-n --json small-n.json
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
# (M, K, N, dtype, epilogue): B = W^T, W (N, K) contiguous
SHAPES: list[tuple[int, int, int, torch.dtype, str]] = [
    (4, 3813, 27698, BF16, "none"), (2, 11402, 17198, BF16, "none"), (3, 5290, 19666, BF16, "none"),
    (1, 4097, 4096, BF16, "none"), (1, 6364, 38, F16, "none"), (3, 805, 13804, F16, "bias"),
    (8, 4097, 4096, BF16, "none"), (6, 2049, 11008, F16, "bias"), (16, 3001, 4096, BF16, "none"),
    (1, 14854, 64, F32, "none"), (2, 1068, 11660, F32, "none"), (8, 2876, 11229, F32, "none"),
    (50, 37, 2248, F32, "none"), (71, 517, 16549, F32, "none"), (89, 589, 1577, F32, "none"),
    (12, 4097, 4096, F32, "bias_relu"), (30, 2350, 7191, F32, "none"),
    # aligned controls
    (4, 3816, 27698, BF16, "none"), (1, 4096, 4096, BF16, "none"), (8, 2876, 11228, F32, "none"),
]
# Session 26: fewer than KSHIFT_MIN_N columns against a long odd K (hunt seed 21: fp16 4x12143x95 B^T at 0.57x; the
# rule's N floor came from short K: fp32 5x409x86 1.70 -> 1.45x).
SMALL_N: list[tuple[int, int, int, torch.dtype, str]] = [
    (4, 12143, 95, F16, "none"), (2, 8191, 64, BF16, "none"), (1, 16385, 100, F16, "none"),
    (3, 6001, 120, BF16, "bias"), (4, 20001, 48, F16, "none"), (1, 3001, 96, BF16, "none"),
    (2, 1025, 80, F16, "none"), (4, 409, 86, BF16, "none"), (2, 9001, 37, F32, "none"), (5, 409, 86, F32, "none"),
]


def draws(seed: int) -> list[tuple[int, int, int, torch.dtype, str]]:
    """Fresh misaligned K-major shapes: 16-bit 1-16 rows, fp32 1-96 rows, K 17-16384 (not a whole vector), N 32-40000."""
    r = random.Random(seed)

    def lu(lo: int, hi: int) -> int:
        return int(round(math.exp(r.uniform(math.log(lo), math.log(hi)))))

    out = []
    for i in range(24):
        dt = (F32, BF16, F16)[i % 3]
        per = 16 // dt.itemsize
        k = lu(17, 16384)
        k = k if k % per else k + 1
        m = lu(1, 96) if dt == F32 else lu(1, 16)
        out.append((m, k, lu(32, 40000), dt, r.choice(("none", "bias"))))
    return out


def forms(t: policy.Target, M: int, N: int, K: int, dt: torch.dtype, cus: int) -> dict[str, tuple[str, Any]]:
    base = dict(policy.gemv_config(t, M, N, K, dt.itemsize, True, cus))
    shift = 16 // dt.itemsize
    ks = {**base, "SHIFT": shift}
    out: dict[str, tuple[str, Any]] = {"tiles": ("pointer", None), "gemv": ("gemv", {**base, "SHIFT": 1}),
                                       "kshift": ("gemv", ks)}
    if base["SPLIT_K"] > 1:
        out["kshift split/2"] = ("gemv", {**ks, "SPLIT_K": base["SPLIT_K"] // 2})
    if base["SPLIT_K"] * 2 <= 64 and base["SPLIT_K"] * 2 * base["BLOCK_K"] * 4 <= K:
        out["kshift split*2"] = ("gemv", {**ks, "SPLIT_K": base["SPLIT_K"] * 2})
    if base["BLOCK_N"] >= 32:
        out["kshift bn/2"] = ("gemv", {**ks, "BLOCK_N": base["BLOCK_N"] // 2})
    if base["BLOCK_K"] >= 32:
        out["kshift bk/2"] = ("gemv", {**ks, "BLOCK_K": base["BLOCK_K"] // 2, "BLOCK_N": base["BLOCK_N"] * 2})
    out["auto"] = ("auto", None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=None, help="fresh random draws instead of SHAPES")
    ap.add_argument("--small-n", action="store_true", help="SMALL_N: under 128 columns against long odd K")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)}, {cus} SMs, torch {torch.__version__}", flush=True)
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    shapes = SMALL_N if args.small_n else draws(args.seed) if args.seed is not None else SHAPES
    for M, K, N, dt, epi in shapes:
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g) / K**0.5).t()
        bias = torch.randn(N, device=dev, dtype=dt, generator=g) if epi != "none" else None
        ref = gemm.reference(a, b, bias, epi)
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N} B^T {epi}"
        t_blas = float(do_bench_cudagraph(lambda: gemm.eager(a, b, bias, epi, 0.0), rep=30))
        takes = policy.gemv_takes(t, M, dt.itemsize, not misaligned(b), True, K, N)
        # what auto ran before the windows: the GEMV reading the weight as it is where it took the rows (16-bit:
        # 1-3 misaligned rows; fp32 unchanged), else the tiles
        before = takes if dt == F32 else (M <= 3 and misaligned(b))
        row: dict[str, Any] = {"name": name, "cublas_ms": t_blas, "misaligned": misaligned(b),
                               "auto_kernel": "gemv" if takes else "tiles", "before": "gemv" if before else "tiles"}
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
        print(f"{name:36s} cuBLAS {t_blas * 1e3:7.1f} us | " + " | ".join(
            f"{k} {v['x']:.2f}{'' if v['ok'] else ' WRONG'}" if "x" in v else f"{k} ERR {v['error'][:60]}"
            for k, v in row.items() if isinstance(v, dict)), flush=True)
    wrong = sum(1 for r in rows for v in r.values() if isinstance(v, dict) and v.get("ok") is False)
    print(f"\n{len(rows)} shapes, {wrong} wrong outputs")
    print("shape | cuBLAS us | tiles x | gemv x | kshift x | best kshift variant | auto (takes) x | before x")
    for r in rows:
        sv = {k: v for k, v in r.items() if k.startswith("kshift") and isinstance(v, dict) and "x" in v}
        best = max(sv, key=lambda k: sv[k]["x"]) if sv else "-"

        def x(k: str, r: dict[str, Any] = r) -> str:
            v = r.get(k, {})
            return f"{v['x']:.2f}" if "x" in v else "-"
        print(f"{r['name']} | {r['cublas_ms'] * 1e3:.1f} | {x('tiles')} | {x('gemv')} | {x('kshift')} | {best} "
              f"{sv.get(best, {}).get('x', float('nan')):.2f} | {x('auto')} ({r['auto_kernel']}) | {x(r['before'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "seed": args.seed,
                       "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
