"""GEMMs with 65-128 output columns whose grid needs no K split (policy_waves.gemm_skinny_config returns None there,
so they take the general 128x128 tiles): against the skinny tiles (64 rows, as wide as N, 4 warps) where the
general grid's last wave is poorly filled. GPU time by CUDA-graph replay, × cuBLAS (a @ b + the epilogue ops), each
output checked against an fp32 product; wave fill = tiles / (waves · SMs) for each tiling.

    PYTHONPATH=. python benchmarks/wide_skinny_probe.py [--json PATH] [--sweep]

--sweep (session 14): the shapes the rules of session 13 left under 0.95x cuBLAS (K >= 2048, an N-major B, N = 80)
against more tilings: deeper K blocks, more stages, 256-row tiles, and the persistent TMA kernel with 128-wide tiles
(policy.gemm_use_tma keeps N <= 128 off it; its 128-wide form was never timed).
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


SWEEP_SHAPES = [(m, k, n, dt, bt) for m, k in ((18000, 1024), (12000, 2048), (40000, 4096), (65536, 4096),
                                               (16384, 8192), (24000, 768))
                for n, dt, bt in ((96, torch.float16, True), (128, torch.bfloat16, True), (80, torch.bfloat16, False))]


def tiles(bm: int, bn: int, bk: int, w: int, s: int) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s, "SPLIT_K": 1}


def sweep_variants(bn: int) -> dict[str, tuple[dict[str, Any] | None, str]]:
    return {"auto": (None, "auto"), "128x128x64 w8 s4": (tiles(128, 128, 64, 8, 4), "pointer"),
            "128x128x128 w8 s3": (tiles(128, 128, 128, 8, 3), "pointer"),
            "128xNx64 w8 s5": (tiles(128, bn, 64, 8, 5), "pointer"), "128xNx64 w4 s4": (tiles(128, bn, 64, 4, 4), "pointer"),
            "256xNx64 w8 s3": (tiles(256, bn, 64, 8, 3), "pointer"), "64xNx128 w4 s3": (tiles(64, bn, 128, 4, 3), "pointer"),
            "64xNx64 w4 s5": (tiles(64, bn, 64, 4, 5), "pointer"),
            "tma 128xN": ({"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
                          "tma"),
            "tma 128xNx128 s2": ({"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 8,
                                  "num_stages": 2}, "tma")}


def fill(M: int, N: int, bm: int, bn: int, sms: int) -> float:
    tiles = -(-M // bm) * -(-N // bn)
    return tiles / (-(-tiles // sms) * sms)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--sweep", action="store_true", help="SWEEP_SHAPES against sweep_variants' tilings")
    args = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows: list[dict[str, Any]] = []
    for M, K, N, dt, bt in SWEEP_SHAPES if args.sweep else SHAPES:
        a = torch.randn(M, K, device=dev, dtype=dt)
        b = (torch.randn(N, K, device=dev, dtype=dt).t() if bt else torch.randn(K, N, device=dev, dtype=dt)) / K**0.5
        ref = a.float() @ b.float()
        bn = min(128, max(16, 1 << (N - 1).bit_length()))
        variants: dict[str, Any] = {"auto": None,
                    "general": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8,
                                "num_stages": 4, "SPLIT_K": 1},
                    "skinny": {"BLOCK_M": 64, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4,
                               "num_stages": 3, "SPLIT_K": 1},
                    "skinny s4": {"BLOCK_M": 64, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4,
                                  "num_stages": 4, "SPLIT_K": 1}}
        row: dict[str, Any] = {"name": f"{str(dt)[6:]} {M}x{K}x{N}{' B^T' if bt else ''}",
                               "fill_general": fill(M, N, 128, 128, sms), "fill_skinny": fill(M, N, 64, bn, sms),
                               "cublas_us": do_bench_cudagraph(lambda: a @ b, rep=20) * 1e3}
        kernels = {name: "auto" for name in variants}
        if args.sweep:
            sv = sweep_variants(bn)
            variants, kernels = {n: c for n, (c, _) in sv.items()}, {n: k for n, (_, k) in sv.items()}
        for name, cfg in variants.items():
            kern = kernels[name]
            try:
                out = gemm.gemm(a, b, config=cfg, kernel=kern)
            except Exception as e:  # noqa: BLE001 - a config that does not launch (shared memory) is a row
                print(f"  {name}: {type(e).__name__}: {str(e)[:120]}", flush=True)
                row[name] = None
                continue
            ok = bool(((out.float() - ref).abs() <= 3e-2 + 3e-2 * ref.abs()).all())
            row[name] = (do_bench_cudagraph(lambda c=cfg, kk=kern: gemm.gemm(a, b, config=c, kernel=kk), rep=20) * 1e3
                         if ok else None)
        rows.append(row)
        print(f"{row['name']:28s} fill {row['fill_general']:.2f}/{row['fill_skinny']:.2f} cuBLAS {row['cublas_us']:.1f} "
              + " ".join(f"{n} {row[n]:.1f} ({row['cublas_us'] / row[n]:.2f}x)" if row[n] else f"{n} --"
                         for n in variants), flush=True)
    names = [n for n in rows[0] if n not in ("name", "fill_general", "fill_skinny", "cublas_us")] if rows else []
    print("\nx cuBLAS (GPU time, graph replay); best per row marked *")
    print(f"{'shape':28s} " + " ".join(f"{n[:17]:>17s}" for n in names))
    for row in rows:
        vals = {n: row["cublas_us"] / row[n] for n in names if row.get(n)}
        best = max(vals, key=vals.get) if vals else None  # type: ignore[arg-type]
        print(f"{row['name']:28s} " + " ".join(f"{vals[n]:16.2f}{'*' if n == best else ' '}" if n in vals
                                               else f"{'--':>17s}" for n in names))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "sms": sms, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
