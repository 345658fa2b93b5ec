"""A/B of the GEMM policy's aligned copies and small-grid split-K (policy.gemm_align_copy, policy_waves.
gemm_split_small_grid) on odd shapes: GPU time by CUDA-graph replay, ours / cuBLAS, every output checked against an
fp32 product. Variants per shape: the policy ("auto"), the policy's tiles without the copies ("no copy"), without
the split ("no split"), with the copies forced ("copy"), and the policy with a copied B masked at column N instead of
read to its zero padding ("no pad": gemm_kernel's B_PAD off).

    PYTHONPATH=. python benchmarks/gemm_align_probe.py --json probe.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, policy
from rocm_triton_doctor.kernels.aligned_copy import misaligned

# (M, K, N, dtype, B transposed): the seed-1 shape hunt's worst GEMM rows, then random odd shapes.
HUNT = [(686, 7137, 406, "bf16", False), (237, 1313, 10622, "bf16", True), (686, 1025, 9759, "bf16", True),
        (1401, 558, 31287, "fp16", False), (77, 1791, 29225, "fp16", True), (139, 148, 19013, "bf16", True),
        (39, 8737, 2462, "fp32", True), (376, 1433, 325, "fp32", False), (5751, 4313, 86, "fp32", False),
        (3713, 854, 212, "fp32", True), (76, 2346, 6230, "fp32", False), (1373, 495, 616, "fp32", False)]
# Small M with a misaligned weight (an odd K in nn.Linear's layout, or an odd N in (K, N)): where does copying B pay?
SMALL_M = [(m, k, n, "bf16", bt) for m in (1, 8, 16, 32, 64, 128, 237) for k, n, bt in ((4097, 4096, True),
                                                                                     (4096, 4097, False))]
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def ms(fn: Any) -> float:
    return float(do_bench_cudagraph(fn, rep=20))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=12, help="random odd shapes after the fixed ones")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--small-m", action="store_true", help="only the small-M misaligned-weight shapes")
    args = ap.parse_args()
    r = random.Random(args.seed)
    shapes = list(SMALL_M) if args.small_m else list(HUNT)
    for _ in range(0 if args.small_m else args.random):
        shapes.append((r.randint(64, 6000) | 1, r.randint(300, 9000) | 1, r.randint(64, 20000),
                       r.choice(("bf16", "fp16", "fp32")), r.random() < 0.5))
    dev = torch.device("cuda")
    target = policy.target_for_device("cuda")
    rows = []
    for M, K, N, dt, bt in shapes:
        dtype = DT[dt]
        a = torch.randn(M, K, device=dev, dtype=dtype)
        b = (torch.randn(N, K, device=dev, dtype=dtype).t() if bt else torch.randn(K, N, device=dev, dtype=dtype)) / K**0.5
        ref = a.float() @ b.float()
        cfg = policy.gemm_config(target, M, N, K, a.element_size(), cus=132, b_nmajor=not bt)
        variants = {"auto": None, "no copy": {**cfg, "ALIGN_COPY": False}, "no split": {**cfg, "SPLIT_K": 1},
                    "copy": {**cfg, "ALIGN_COPY": True}, "no pad": {"B_PAD": False}}
        t_blas = ms(lambda: a @ b)
        row: dict[str, Any] = {"M": M, "K": K, "N": N, "dtype": dt, "b_t": bt, "cublas_ms": t_blas,
                               "misaligned": [misaligned(a), misaligned(b)], "split": cfg["SPLIT_K"],
                               "copy": policy.gemm_align_copy(target, M, N, K)}
        for name, c in variants.items():
            out = gemm.gemm(a, b, config=c)
            err = float((out.float() - ref).abs().max() / ref.abs().max())
            row[name] = {"ms": ms(lambda c=c: gemm.gemm(a, b, config=c)), "rel_err": err}
        rows.append(row)
        print(f"{dt} {M}x{K}x{N}{' B^T' if bt else ''} misaligned {row['misaligned']} copy {row['copy']} split "
              f"{row['split']}: cuBLAS {t_blas * 1e3:.1f} us; " + "; ".join(
                  f"{n} {row[n]['ms'] * 1e3:.1f} us ({t_blas / row[n]['ms']:.2f}x, err {row[n]['rel_err']:.1e})"
                  for n in variants), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(f"\n{'shape':34} {'cuBLAS us':>9} {'auto x':>7} {'nocopy x':>8} {'nosplit x':>9} {'copy x':>7} {'nopad x':>7}")
    for x in rows:
        name = f"{x['dtype']} {x['M']}x{x['K']}x{x['N']}{' B^T' if x['b_t'] else ''}"
        print(f"{name:34} {x['cublas_ms'] * 1e3:9.1f} {x['cublas_ms'] / x['auto']['ms']:7.2f} "
              f"{x['cublas_ms'] / x['no copy']['ms']:8.2f} {x['cublas_ms'] / x['no split']['ms']:9.2f} "
              f"{x['cublas_ms'] / x['copy']['ms']:7.2f} {x['cublas_ms'] / x['no pad']['ms']:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
