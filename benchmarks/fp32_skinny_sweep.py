"""fp32 GEMMs against a misaligned operand with 17-128 columns (the weakest class after session 14: 2933x1033x34 B^T
at 0.26x eager): the policy's plan against a grid of tiles, K splits and both fp32-accurate precisions, GPU time by
CUDA-graph replay × eager (cuBLAS SGEMM, allow_tf32 off). Every variant's output is checked against an fp64 product.

    PYTHONPATH=. python benchmarks/fp32_skinny_sweep.py --json sweep.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm

SHAPES = ("2933x1033x34:t", "13562x209x36:t", "401x3747x76:t", "1500x777x40:n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--seconds", type=float, default=420.0)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev, t0, rows = torch.device("cuda"), time.time(), []
    grid = list(itertools.product((32, 64, 128), (4, 8), (1, 4, 16), ("tf32x3", "ieee")))
    for spec in SHAPES:
        shape, lay = spec.split(":")
        M, K, N = (int(v) for v in shape.split("x"))
        g = torch.Generator(device=dev).manual_seed(0)
        a = torch.randn(M, K, device=dev, generator=g)
        b = (torch.randn(N, K, device=dev, generator=g).t() if lay == "t" else torch.randn(K, N, device=dev, generator=g))
        ref = (a.double() @ b.double()).float()
        tol = 1e-4 * float(ref.abs().max()) + 1e-5
        eager = float(do_bench_cudagraph(lambda: a @ b, rep=20))
        row: dict[str, Any] = {"shape": spec, "eager_ms": eager, "variants": {}}
        pol = float(do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=20))
        row["policy"] = eager / pol
        bn = 64 if N <= 64 else 128
        for bm, w, split, prec in grid:
            if time.time() - t0 > args.seconds:
                break
            cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": w, "num_stages": 3,
                   "SPLIT_K": split}
            key = f"{bm}x{bn}x32 w{w} s{split} {prec}"
            try:
                out = gemm.gemm(a, b, config=cfg, precision=prec)
                err = float((out - ref).abs().max())
                ms = float(do_bench_cudagraph(lambda cfg=cfg, prec=prec: gemm.gemm(a, b, config=cfg, precision=prec),
                                              rep=20))
                row["variants"][key] = {"x": eager / ms, "ok": err <= tol}
            except Exception as e:  # noqa: BLE001 - a failing config is a row
                row["variants"][key] = {"error": f"{type(e).__name__}: {e}"[:160]}
        best = sorted(((v["x"], k) for k, v in row["variants"].items() if v.get("ok")), reverse=True)[:3]
        rows.append(row)
        print(f"{spec:18s} eager {eager * 1e3:7.1f} us  policy {row['policy']:.2f}x  best " +
              ", ".join(f"{k} {x:.2f}x" for x, k in best) +
              f"  wrong {sum(1 for v in row['variants'].values() if v.get('ok') is False)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
