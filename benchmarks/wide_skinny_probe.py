"""GEMMs with 65-128 output columns whose grid needs no K split (policy_waves.gemm_skinny_config returns None there,
so they take the general 128x128 tiles): against the skinny tiles (64 rows, as wide as N, 4 warps) where the
general grid's last wave is poorly filled. GPU time by CUDA-graph replay, × cuBLAS (a @ b + the epilogue ops), each
output checked against an fp32 product; wave fill = tiles / (waves · SMs) for each tiling.

    PYTHONPATH=. python benchmarks/wide_skinny_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm

SHAPES = [(m, k, n, dt, bt) for m, k in ((18000, 1024), (20000, 1024), (24000, 768), (35000, 1024), (40000, 4096),
                                         (65536, 4096), (16384, 8192), (50000, 768), (12000, 2048))
          for n, dt, bt in ((96, torch.float16, True), (128, torch.bfloat16, True), (80, torch.bfloat16, False))]


def fill(M: int, N: int, bm: int, bn: int, sms: int) -> float:
    tiles = -(-M // bm) * -(-N // bn)
    return tiles / (-(-tiles // sms) * sms)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows: list[dict[str, Any]] = []
    for M, K, N, dt, bt in SHAPES:
        a = torch.randn(M, K, device=dev, dtype=dt)
        b = (torch.randn(N, K, device=dev, dtype=dt).t() if bt else torch.randn(K, N, device=dev, dtype=dt)) / K**0.5
        ref = a.float() @ b.float()
        bn = min(128, max(16, 1 << (N - 1).bit_length()))
        variants = {"auto": None,
                    "general": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8,
                                "num_stages": 4, "SPLIT_K": 1},
                    "skinny": {"BLOCK_M": 64, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4,
                               "num_stages": 3, "SPLIT_K": 1},
                    "skinny s4": {"BLOCK_M": 64, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4,
                                  "num_stages": 4, "SPLIT_K": 1}}
        row: dict[str, Any] = {"name": f"{str(dt)[6:]} {M}x{K}x{N}{' B^T' if bt else ''}",
                               "fill_general": fill(M, N, 128, 128, sms), "fill_skinny": fill(M, N, 64, bn, sms),
                               "cublas_us": do_bench_cudagraph(lambda: a @ b, rep=20) * 1e3}
        for name, cfg in variants.items():
            out = gemm.gemm(a, b, config=cfg)
            ok = bool(((out.float() - ref).abs() <= 3e-2 + 3e-2 * ref.abs()).all())
            row[name] = do_bench_cudagraph(lambda c=cfg: gemm.gemm(a, b, config=c), rep=20) * 1e3 if ok else None
        rows.append(row)
        print(f"{row['name']:28s} fill {row['fill_general']:.2f}/{row['fill_skinny']:.2f} cuBLAS {row['cublas_us']:.1f} "
              + " ".join(f"{n} {row[n]:.1f} ({row['cublas_us'] / row[n]:.2f}x)" if row[n] else f"{n} WRONG"
                         for n in variants), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "sms": sms, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
